package observable

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// spray returns an Observable that emits from, from+1, ... from+n-1 on
// goroutines of its own, several at once, then completes.
func spray(from, n, goroutines int) Observable[int] {
	return Create(func(ctx context.Context, o Observer[int]) {
		// Create's observer must not be called concurrently: a Subject
		// serializes the goroutines.
		var s Subject[int]
		s.Observable().Subscribe(ctx, o)
		go func() {
			var wg sync.WaitGroup
			for g := range goroutines {
				wg.Go(func() {
					for i := g; i < n; i += goroutines {
						s.OnNext(from + i)
					}
				})
			}
			wg.Wait()
			s.OnCompleted()
		}()
	})
}

func sorted(vs []int) []int {
	vs = slices.Clone(vs)
	slices.Sort(vs)
	return vs
}

func seq(from, n int) []int {
	vs := make([]int, n)
	for i := range vs {
		vs[i] = from + i
	}
	return vs
}

func TestMergeSerializesConcurrentSources(t *testing.T) {
	r := newRecorder[int]()
	Merge(spray(0, 500, 4), spray(500, 500, 4), Just(1000)).Subscribe(context.Background(), r)
	r.wait(t)
	values, err, completed := r.snapshot()
	require.NoError(t, err)
	require.True(t, completed)
	assert.Equal(t, seq(0, 1001), sorted(values))
	r.check(t, values, nil, true) // and the grammar held
}

func TestFlatMapSerializesConcurrentInners(t *testing.T) {
	r := newRecorder[int]()
	FlatMap(Just(0, 1, 2, 3), func(v int) Observable[int] {
		return spray(v*100, 100, 3)
	}).Subscribe(context.Background(), r)
	r.wait(t)
	values, _, _ := r.snapshot()
	assert.Equal(t, seq(0, 400), sorted(values))
	r.check(t, values, nil, true)
}

// failOn returns an Observable that fails with errBoom, from a goroutine,
// once trigger is closed.
func failOn(trigger <-chan struct{}) Observable[int] {
	return Create(func(ctx context.Context, o Observer[int]) {
		go func() {
			select {
			case <-trigger:
				o.OnError(errBoom)
			case <-ctx.Done():
			}
		}()
	})
}

func TestMergeErrorCancelsTheOthers(t *testing.T) {
	p1, p2 := newProbe(), newProbe()
	trigger := make(chan struct{})
	r := newRecorder[int]()
	Merge(p1.async(1), failOn(trigger), p2.async(2)).Subscribe(context.Background(), r)
	close(trigger)
	r.wait(t)
	_, err, _ := r.snapshot()
	assert.ErrorIs(t, err, errBoom)
	p1.requireStopped(t)
	p2.requireStopped(t)
	r.check(t, r.values, errBoom, false)
}

func TestMergeUnsubscribeCancelsEverySource(t *testing.T) {
	p1, p2 := newProbe(), newProbe()
	sub := Merge(p1.async(), p2.async()).Subscribe(context.Background(), newRecorder[int]())
	sub.Unsubscribe()
	p1.requireStopped(t)
	p2.requireStopped(t)
}

func TestFlatMapErrorCancelsOuterAndInners(t *testing.T) {
	outer, inner := newProbe(), newProbe()
	trigger := make(chan struct{})
	r := newRecorder[int]()
	FlatMap(outer.async(1, 2), func(v int) Observable[int] {
		if v == 1 {
			return inner.async(10)
		}
		return failOn(trigger)
	}).Subscribe(context.Background(), r)
	close(trigger)
	r.wait(t)
	outer.requireStopped(t)
	inner.requireStopped(t)
	_, err, _ := r.snapshot()
	assert.ErrorIs(t, err, errBoom)
}

func TestZip2PairsAsynchronousSourcesInOrder(t *testing.T) {
	chA, chB := make(chan int), make(chan string)
	r := newRecorder[string]()
	Zip2(FromChannel(chA), FromChannel(chB), func(a int, b string) string {
		return b + string(rune('0'+a))
	}).Subscribe(context.Background(), r)
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 1; i <= 3; i++ {
			chA <- i
		}
		close(chA)
	})
	wg.Go(func() {
		for _, s := range []string{"a", "b", "c"} {
			chB <- s
		}
	})
	r.wait(t)
	wg.Wait()
	r.check(t, []string{"a1", "b2", "c3"}, nil, true)
}

func TestZip2CompletionCancelsTheOther(t *testing.T) {
	p := newProbe()
	got, err := Zip2(Just(1), p.async(5, 6), func(a, b int) int { return a + b }).ToSlice(context.Background())
	require.NoError(t, err)
	assert.Equal(t, []int{6}, got)
	p.requireStopped(t)
}

func TestZip2OfConcurrentSources(t *testing.T) {
	for range 20 {
		r := newRecorder[int]()
		Zip2(spray(0, 300, 3), spray(1000, 300, 3), func(a, b int) int { return b - a }).
			Subscribe(context.Background(), r)
		r.wait(t)
		values, err, completed := r.snapshot()
		require.NoError(t, err)
		require.True(t, completed)
		assert.Len(t, values, 300)
		r.check(t, values, nil, true)
	}
}
