package observable

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/internal/clock"
)

func TestSources(t *testing.T) {
	cases := []struct {
		name      string
		o         Observable[int]
		want      []int
		err       error
		completed bool
	}{
		{"Just none", Just[int](), nil, nil, true},
		{"Just one", Just(7), []int{7}, nil, true},
		{"Just many", Just(1, 2, 3), []int{1, 2, 3}, nil, true},
		{"Empty", Empty[int](), nil, nil, true},
		{"Error", Error[int](errBoom), nil, errBoom, false},
		{"zero Observable", Observable[int]{}, nil, nil, true},
		{"Defer", Defer(func() Observable[int] { return Just(4, 5) }), []int{4, 5}, nil, true},
		{"Defer of zero", Defer(func() Observable[int] { return Observable[int]{} }), nil, nil, true},
		{"Create", Create(func(ctx context.Context, o Observer[int]) {
			o.OnNext(1)
			o.OnCompleted()
			o.OnNext(2) // dropped: after the terminal event
			o.OnError(errBoom)
		}), []int{1}, nil, true},
		{"Create error", Create(func(ctx context.Context, o Observer[int]) {
			o.OnNext(1)
			o.OnError(errBoom)
			o.OnCompleted()
		}), []int{1}, errBoom, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for range 2 { // cold: each subscription runs the source anew
				r := newRecorder[int]()
				sub := c.o.Subscribe(context.Background(), r)
				require.True(t, r.terminated(), "a synchronous source finishes inside Subscribe")
				waitDone(t, sub.Done(), "subscription")
				r.check(t, c.want, c.err, c.completed)
			}
		})
	}
}

func TestNeverEndsOnlyByUnsubscribe(t *testing.T) {
	r := newRecorder[int]()
	sub := Never[int]().Subscribe(context.Background(), r)
	select {
	case <-sub.Done():
		t.Fatal("Never ended by itself")
	default:
	}
	sub.Unsubscribe()
	sub.Unsubscribe() // idempotent
	waitDone(t, sub.Done(), "subscription")
	r.check(t, nil, nil, false)
}

func TestDeferCallsFactoryPerSubscription(t *testing.T) {
	var calls atomic.Int32
	o := Defer(func() Observable[int32] { return Just(calls.Add(1)) })
	for want := int32(1); want <= 3; want++ {
		v, err := o.First(context.Background())
		require.NoError(t, err)
		assert.Equal(t, want, v)
	}
}

// DeferContext's factory sees the subscription's context: live while the
// subscriber wants values, done once it has left, so that a factory
// running as the subscriber leaves can tell.
func TestDeferContextSeesTheSubscriptionsContext(t *testing.T) {
	var seen []error
	o := DeferContext(func(ctx context.Context) Observable[int] {
		seen = append(seen, ctx.Err())
		return Just(len(seen))
	})
	v, err := o.First(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 1, v)
	require.Equal(t, []error{nil}, seen)

	// A subscriber that leaves while the factory runs: the factory sees
	// it gone.
	ctx, cancel := context.WithCancel(context.Background())
	left := make(chan struct{})
	inner := DeferContext(func(sctx context.Context) Observable[int] {
		cancel()
		<-left
		seen = append(seen, sctx.Err())
		return Just(0)
	})
	_, err = inner.DoOnUnsubscribe(func() { close(left) }).First(ctx)
	assert.ErrorIs(t, err, context.Canceled)
	assert.ErrorIs(t, seen[1], context.Canceled)
}

func TestJustCopiesItsArguments(t *testing.T) {
	vs := []int{1, 2}
	o := Just(vs...)
	vs[0] = 9
	got, err := o.ToSlice(context.Background())
	require.NoError(t, err)
	assert.Equal(t, []int{1, 2}, got)
}

func TestCreateSeesItsContextDone(t *testing.T) {
	t.Run("Take", func(t *testing.T) {
		p := newProbe()
		got, err := p.infinite().Take(3).ToSlice(context.Background())
		require.NoError(t, err)
		assert.Equal(t, []int{0, 1, 2}, got)
		p.requireStopped(t)
	})
	t.Run("First", func(t *testing.T) {
		p := newProbe()
		v, err := p.infinite().First(context.Background())
		require.NoError(t, err)
		assert.Equal(t, 0, v)
		p.requireStopped(t)
	})
	t.Run("Unsubscribe", func(t *testing.T) {
		p := newProbe()
		r := newRecorder[int]()
		sub := p.async(1).Subscribe(context.Background(), r)
		sub.Unsubscribe()
		p.requireStopped(t)
		waitDone(t, sub.Done(), "subscription")
	})
	t.Run("caller context", func(t *testing.T) {
		p := newProbe()
		ctx, cancel := context.WithCancel(context.Background())
		sub := p.async().Subscribe(ctx, newRecorder[int]())
		cancel()
		p.requireStopped(t)
		waitDone(t, sub.Done(), "subscription")
	})
	t.Run("error downstream", func(t *testing.T) {
		p := newProbe()
		// The sibling fails, so Merge ends its subscription to p.
		r := newRecorder[int]()
		Merge(p.async(), Error[int](errBoom)).Subscribe(context.Background(), r)
		p.requireStopped(t)
		r.wait(t)
		r.check(t, nil, errBoom, false)
	})
	t.Run("terminal event", func(t *testing.T) {
		var ctxErr error
		o := Create(func(ctx context.Context, o Observer[int]) {
			o.OnNext(1)
			o.OnCompleted()
			ctxErr = ctx.Err()
		})
		_, err := o.ToSlice(context.Background())
		require.NoError(t, err)
		assert.ErrorIs(t, ctxErr, context.Canceled, "the subscription ended with the terminal event")
	})
}

func TestSubscribeWithDoneContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var ran atomic.Bool
	o := Create(func(ctx context.Context, o Observer[int]) { ran.Store(true) })
	r := newRecorder[int]()
	sub := o.Subscribe(ctx, r)
	waitDone(t, sub.Done(), "subscription")
	assert.False(t, ran.Load(), "the source does not run for a done context")
	r.check(t, nil, nil, false)

	_, err := o.First(ctx)
	assert.ErrorIs(t, err, context.Canceled)
}

func TestSubscribeFunc(t *testing.T) {
	var got []int
	var completed bool
	Just(1, 2).SubscribeFunc(context.Background(), func(v int) { got = append(got, v) }, nil, func() { completed = true })
	assert.Equal(t, []int{1, 2}, got)
	assert.True(t, completed)

	var gotErr error
	Error[int](errBoom).SubscribeFunc(context.Background(), nil, func(err error) { gotErr = err }, nil)
	assert.ErrorIs(t, gotErr, errBoom)

	// All nil: nothing to call, nothing breaks.
	sub := Just(1).SubscribeFunc(nil, nil, nil, nil) //nolint:staticcheck // a nil ctx means Background
	waitDone(t, sub.Done(), "subscription")
}

func TestBadInputPanics(t *testing.T) {
	o := Just(1)
	cases := []struct {
		name, msg string
		f         func()
	}{
		{"Create", "nil f", func() { Create[int](nil) }},
		{"Defer", "nil f", func() { Defer[int](nil) }},
		{"Error", "nil err", func() { Error[int](nil) }},
		{"Subscribe", "nil ob", func() { o.Subscribe(context.Background(), nil) }},
		{"Map", "nil f", func() { Map[int, int](o, nil) }},
		{"Filter", "nil keep", func() { o.Filter(nil) }},
		{"Scan", "nil f", func() { Scan[int, int](o, 0, nil) }},
		{"FlatMap", "nil f", func() { FlatMap[int, int](o, nil) }},
		{"Zip2", "nil f", func() { Zip2[int, int, int](o, o, nil) }},
		{"Take", "negative n", func() { o.Take(-1) }},
		{"Skip", "negative n", func() { o.Skip(-1) }},
		{"Timeout", "negative d", func() { o.Timeout(-1) }},
		{"TimeoutOn", "nil c", func() { o.TimeoutOn(1, nil) }},
		{"OnErrorResumeNext", "nil f", func() { o.OnErrorResumeNext(nil) }},
		{"DoOnNext", "nil f", func() { o.DoOnNext(nil) }},
		{"DoOnError", "nil f", func() { o.DoOnError(nil) }},
		{"DoOnCompleted", "nil f", func() { o.DoOnCompleted(nil) }},
		{"DoOnTerminate", "nil f", func() { o.DoOnTerminate(nil) }},
		{"DoOnSubscribe", "nil f", func() { o.DoOnSubscribe(nil) }},
		{"DoOnUnsubscribe", "nil f", func() { o.DoOnUnsubscribe(nil) }},
		{"Finally", "nil f", func() { o.Finally(nil) }},
		{"SubscribeOn", "nil sch", func() { o.SubscribeOn(nil) }},
		{"ToFutureOn", "nil sch", func() { o.ToFutureOn(context.Background(), nil) }},
		{"FromChannel", "nil ch", func() { FromChannel[int](nil) }},
		{"Interval", "non-positive d", func() { Interval(0) }},
		{"IntervalOn", "nil c", func() { IntervalOn(1, nil) }},
		{"NewReplaySubject", "negative n", func() { NewReplaySubject[int](-1) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mustPanicWith(t, c.name+" with "+c.msg, c.f)
		})
	}
}

// A source's context is done once its stream has terminated (Create's
// doc: "the stream terminated" is among the ends of ctx), also when it is
// one source among others of an operator that outlives it: Concat, Merge,
// FlatMap, OnErrorResumeNext, Retry. Otherwise whatever it holds open
// until its context ends (a goroutine waiting on ctx, a context.AfterFunc
// that closes a connection) stays open as long as the operator runs, and
// piles up in a long-lived FlatMap.
func TestSourceContextEndsWithItsOwnStream(t *testing.T) {
	var ctxErr error
	src := Create(func(ctx context.Context, o Observer[int]) {
		o.OnNext(1)
		o.OnCompleted()
		ctxErr = ctx.Err()
	})
	cases := map[string]Observable[int]{
		"Concat": Concat(src, Never[int]()),
		"Merge":  Merge(src, Never[int]()),
		"OnErrorResumeNext": Create(func(ctx context.Context, o Observer[int]) {
			o.OnError(errBoom)
			ctxErr = ctx.Err()
		}).OnErrorResumeNext(func(error) Observable[int] { return Never[int]() }),
		"FlatMap": FlatMap(Concat(Just(0), Never[int]()), func(int) Observable[int] { return src }),
	}
	for name, o := range cases {
		t.Run(name, func(t *testing.T) {
			ctxErr = nil
			r := newRecorder[int]()
			sub := o.Subscribe(context.Background(), r)
			defer sub.Unsubscribe()
			require.False(t, r.terminated())
			assert.ErrorIs(t, ctxErr, context.Canceled, "the source's own stream terminated")
		})
	}
	t.Run("Retry", func(t *testing.T) {
		// The first attempt fails and the retry waits on a manual clock
		// that does not move: the attempt is over, its context must be.
		var attemptErr error
		attempt := Create(func(ctx context.Context, o Observer[int]) {
			o.OnError(errBoom)
			attemptErr = ctx.Err()
		})
		p := RetryPolicy{MaxAttempts: 2, Backoff: Backoff{Initial: time.Second, Jitter: NoJitter}}
		r := newRecorder[int]()
		sub := attempt.RetryOn(p, clock.NewManual(epoch)).Subscribe(context.Background(), r)
		defer sub.Unsubscribe()
		require.False(t, r.terminated())
		assert.ErrorIs(t, attemptErr, context.Canceled, "the failed attempt's context")
	})
}
