package observable

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestOperators(t *testing.T) {
	double := func(v int) int { return 2 * v }
	odd := func(v int) bool { return v%2 == 1 }
	sum := func(acc, v int) int { return acc + v }
	failing := Concat(Just(1, 2), Error[int](errBoom))
	cases := []struct {
		name      string
		o         Observable[int]
		want      []int
		err       error
		completed bool
	}{
		{"Map", Map(Just(1, 2, 3), double), []int{2, 4, 6}, nil, true},
		{"Map error", Map(failing, double), []int{2, 4}, errBoom, false},
		{"Filter", Just(1, 2, 3, 4, 5).Filter(odd), []int{1, 3, 5}, nil, true},
		{"Filter error", failing.Filter(odd), []int{1}, errBoom, false},
		{"Scan", Scan(Just(1, 2, 3), 10, sum), []int{10, 11, 13, 16}, nil, true},
		{"Scan empty", Scan(Empty[int](), 10, sum), []int{10}, nil, true},
		{"Scan error", Scan(failing, 0, sum), []int{0, 1, 3}, errBoom, false},
		{"Take", Just(1, 2, 3).Take(2), []int{1, 2}, nil, true},
		{"Take all", Just(1, 2).Take(5), []int{1, 2}, nil, true},
		{"Take zero", Just(1, 2).Take(0), nil, nil, true},
		{"Take error", failing.Take(5), []int{1, 2}, errBoom, false},
		{"Take before error", failing.Take(2), []int{1, 2}, nil, true},
		{"Skip", Just(1, 2, 3).Skip(2), []int{3}, nil, true},
		{"Skip zero", Just(1, 2).Skip(0), []int{1, 2}, nil, true},
		{"Skip all", Just(1, 2).Skip(3), nil, nil, true},
		{"Skip error", failing.Skip(1), []int{2}, errBoom, false},
		{"Concat", Concat(Just(1), Empty[int](), Just(2, 3)), []int{1, 2, 3}, nil, true},
		{"Concat none", Concat[int](), nil, nil, true},
		{"Concat one", Concat(Just(1)), []int{1}, nil, true},
		{"Concat error", Concat(Just(1), Error[int](errBoom), Just(2)), []int{1}, errBoom, false},
		{"Merge", Merge(Just(1, 2), Just(3)), []int{1, 2, 3}, nil, true},
		{"Merge none", Merge[int](), nil, nil, true},
		{"Merge one", Merge(Just(1)), []int{1}, nil, true},
		{"Merge error", Merge(Just(1), Error[int](errBoom), Just(2)), []int{1}, errBoom, false},
		{"FlatMap", FlatMap(Just(1, 2), func(v int) Observable[int] { return Just(v, 10*v) }), []int{1, 10, 2, 20}, nil, true},
		{"FlatMap empty inner", FlatMap(Just(1, 2), func(int) Observable[int] { return Empty[int]() }), nil, nil, true},
		{"FlatMap inner error", FlatMap(Just(1, 2), func(v int) Observable[int] {
			if v == 2 {
				return Error[int](errBoom)
			}
			return Just(v)
		}), []int{1}, errBoom, false},
		{"FlatMap outer error", FlatMap(failing, func(v int) Observable[int] { return Just(v) }), []int{1, 2}, errBoom, false},
		{"Zip2", Zip2(Just(1, 2, 3), Just(10, 20), sum), []int{11, 22}, nil, true},
		{"Zip2 empty", Zip2(Empty[int](), Just(1), sum), nil, nil, true},
		{"Zip2 error", Zip2(failing, Just(10, 20, 30), sum), nil, errBoom, false}, // a fails before b is subscribed
		{"Zip2 error in b", Zip2(Just(1, 2, 3), failing, sum), []int{2, 4}, errBoom, false},
		{"OnErrorResumeNext", failing.OnErrorResumeNext(func(error) Observable[int] { return Just(9) }), []int{1, 2, 9}, nil, true},
		{"OnErrorResumeNext no error", Just(1).OnErrorResumeNext(func(error) Observable[int] { return Just(9) }), []int{1}, nil, true},
		{"OnErrorResumeNext failing fallback", failing.OnErrorResumeNext(func(err error) Observable[int] { return Error[int](err) }), []int{1, 2}, errBoom, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for range 2 {
				r := newRecorder[int]()
				c.o.Subscribe(context.Background(), r)
				require.True(t, r.terminated(), "synchronous sources finish inside Subscribe")
				r.check(t, c.want, c.err, c.completed)
			}
		})
	}
}

func TestMapChangesType(t *testing.T) {
	got, err := Map(Just(1, 2), strconv.Itoa).ToSlice(context.Background())
	require.NoError(t, err)
	assert.Equal(t, []string{"1", "2"}, got)
}

func TestScanStartsAgainPerSubscription(t *testing.T) {
	o := Scan(Just(1, 1), 0, func(acc, v int) int { return acc + v })
	for range 2 {
		got, err := o.ToSlice(context.Background())
		require.NoError(t, err)
		assert.Equal(t, []int{0, 1, 2}, got)
	}
}

func TestTakeStopsUpstreamBeforeTheNextValue(t *testing.T) {
	var emitted []int
	o := Just(1, 2, 3, 4).DoOnNext(func(v int) { emitted = append(emitted, v) })
	got, err := o.Take(2).ToSlice(context.Background())
	require.NoError(t, err)
	assert.Equal(t, []int{1, 2}, got)
	assert.Equal(t, []int{1, 2}, emitted, "Just stops once Take has its values")
}

func TestTakeInsideConcatCancelsItsSource(t *testing.T) {
	p := newProbe()
	got, err := Concat(p.infinite().Take(2), Just(100)).ToSlice(context.Background())
	require.NoError(t, err)
	assert.Equal(t, []int{0, 1, 100}, got)
	p.requireStopped(t)
}

func TestConcatOfManySynchronousSourcesKeepsTheStackFlat(t *testing.T) {
	os := make([]Observable[int], 100_000)
	for i := range os {
		os[i] = Just(i)
	}
	got, err := Concat(os...).Last(context.Background())
	require.NoError(t, err)
	assert.Equal(t, len(os)-1, got)
}

func TestConcatWaitsForAsynchronousSources(t *testing.T) {
	ch := make(chan int)
	r := newRecorder[int]()
	Concat(FromChannel(ch), Just(9)).Subscribe(context.Background(), r)
	ch <- 1
	ch <- 2
	close(ch)
	r.wait(t)
	r.check(t, []int{1, 2, 9}, nil, true)
}

func TestCollectors(t *testing.T) {
	ctx := context.Background()
	t.Run("First", func(t *testing.T) {
		v, err := Just(1, 2).First(ctx)
		assert.Equal(t, 1, v)
		assert.NoError(t, err)
		_, err = Empty[int]().First(ctx)
		assert.ErrorIs(t, err, ErrEmpty)
		_, err = Error[int](errBoom).First(ctx)
		assert.ErrorIs(t, err, errBoom)
	})
	t.Run("Last", func(t *testing.T) {
		v, err := Just(1, 2).Last(ctx)
		assert.Equal(t, 2, v)
		assert.NoError(t, err)
		_, err = Empty[int]().Last(ctx)
		assert.ErrorIs(t, err, ErrEmpty)
		v, err = Concat(Just(1), Error[int](errBoom)).Last(ctx)
		assert.ErrorIs(t, err, errBoom)
		assert.Zero(t, v)
	})
	t.Run("ToSlice", func(t *testing.T) {
		vs, err := Just(1, 2, 3, 4, 5, 6).ToSlice(ctx)
		assert.Equal(t, []int{1, 2, 3, 4, 5, 6}, vs)
		assert.NoError(t, err)
		vs, err = Empty[int]().ToSlice(ctx)
		assert.Nil(t, vs)
		assert.NoError(t, err)
		vs, err = Concat(Just(1), Error[int](errBoom)).ToSlice(ctx)
		assert.Equal(t, []int{1}, vs)
		assert.ErrorIs(t, err, errBoom)
	})
	t.Run("context ends first", func(t *testing.T) {
		for name, wait := range map[string]func(context.Context) error{
			"First": func(ctx context.Context) error { _, err := Never[int]().First(ctx); return err },
			"Last":  func(ctx context.Context) error { _, err := Never[int]().Last(ctx); return err },
			"ToSlice": func(ctx context.Context) error {
				vs, err := Concat(Just(1), Never[int]()).ToSlice(ctx)
				assert.Nil(t, vs)
				return err
			},
		} {
			t.Run(name, func(t *testing.T) {
				ctx, cancel := context.WithCancel(ctx)
				go cancel()
				assert.ErrorIs(t, wait(ctx), context.Canceled)
			})
		}
	})
}

func TestConcurrentSubscribersToOneObservable(t *testing.T) {
	// One Observable value, shared: every subscription runs its own
	// pipeline, some of it on other goroutines.
	o := Map(FlatMap(Just(1, 2, 3), func(v int) Observable[int] {
		return Concat(Just(v), Just(10*v).SubscribeOn(NewGoroutine))
	}), func(v int) int { return v + 1 }).Filter(func(v int) bool { return v != 3 })
	want := []int{2, 4, 11, 21, 31}
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for range 20 {
				got, err := o.ToSlice(context.Background())
				assert.NoError(t, err)
				assert.Equal(t, want, sorted(got))
			}
		})
	}
	wg.Wait()
}

// Take completes once. A source that emits reentrantly (Create's f hands
// its observer to a callback that the consumer's OnNext triggers) reached
// the n-th value inside the delivery of an earlier one; Take then
// completed inside, and again once the earlier delivery returned.
func TestTakeCompletesOnceWhenTheSourceEmitsReentrantly(t *testing.T) {
	var emit func(int)
	src := Create(func(_ context.Context, o Observer[int]) {
		emit = o.OnNext
		o.OnNext(0)
	})
	var completions atomic.Int32
	r := newRecorder[int]()
	src.Take(2).
		DoOnCompleted(func() { completions.Add(1) }).
		DoOnNext(func(v int) {
			if v == 0 {
				emit(1) // the consumer's reaction makes the source emit
			}
		}).
		Subscribe(context.Background(), r)
	assert.Equal(t, int32(1), completions.Load(), "completions passed down by Take")
	r.check(t, []int{1}, nil, true) // 0 reaches the subscriber after the completion, which drops it
}
