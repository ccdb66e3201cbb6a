package observable

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testSingle is a Single that records how it was asked for its result.
// An asynchronous one hands the result over on a goroutine of its own, once
// release is closed.
type testSingle struct {
	v       int
	err     error
	async   bool
	release chan struct{}
	// subscribed, if set, is closed by the first subscription.
	subscribed chan struct{}

	calls, subscriptions atomic.Int32
	mu                   sync.Mutex
	ctxs                 []context.Context
}

func (s *testSingle) Call(ctx context.Context) (int, error) {
	s.calls.Add(1)
	if s.async {
		return callBySubscribing[int](ctx, s)
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	return s.v, s.err
}

func (s *testSingle) SubscribeSingle(ctx context.Context, r SingleObserver[int]) {
	if s.subscriptions.Add(1) == 1 && s.subscribed != nil {
		close(s.subscribed)
	}
	s.mu.Lock()
	s.ctxs = append(s.ctxs, ctx)
	s.mu.Unlock()
	if !s.async {
		r.OnResult(s.v, s.err)
		return
	}
	go func() {
		select {
		case <-s.release:
			r.OnResult(s.v, s.err)
		case <-ctx.Done():
			r.OnResult(0, ctx.Err())
		}
	}()
}

func (s *testSingle) Async() bool { return s.async }

func (s *testSingle) lastContext() context.Context {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ctxs[len(s.ctxs)-1]
}

// First, Last and ToSlice of a Single take its result from Call, with no
// subscription.
func TestSingleFirstCallsIt(t *testing.T) {
	s := &testSingle{v: 7}
	o := FromSingle[int](s)
	v, err := o.First(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 7, v)
	v, err = o.Last(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 7, v)
	vs, err := o.ToSlice(context.Background())
	require.NoError(t, err)
	assert.Equal(t, []int{7}, vs)
	assert.Equal(t, int32(3), s.calls.Load())
	assert.Zero(t, s.subscriptions.Load())

	failing := FromSingle[int](&testSingle{err: errBoom})
	_, err = failing.First(context.Background())
	assert.ErrorIs(t, err, errBoom)
	vs, err = failing.ToSlice(context.Background())
	assert.ErrorIs(t, err, errBoom)
	assert.Nil(t, vs)
}

// Every other operator subscribes: the Single's result reaches it as a
// value and completion, or as an error.
func TestSingleThroughOperators(t *testing.T) {
	s := &testSingle{v: 2}
	vs, err := Map(FromSingle[int](s), func(v int) int { return v * 10 }).ToSlice(context.Background())
	require.NoError(t, err)
	assert.Equal(t, []int{20}, vs)
	assert.Equal(t, int32(1), s.subscriptions.Load())

	r := newRecorder[int]()
	FromSingle[int](&testSingle{err: errBoom}).Subscribe(context.Background(), r)
	r.check(t, nil, errBoom, false)
}

// ToFuture hands the Future to an asynchronous Single on the caller's
// goroutine, since it does not block; a synchronous Single runs on a
// goroutine of its own, so that ToFuture never blocks.
func TestSingleToFuture(t *testing.T) {
	async := &testSingle{v: 1, async: true, release: make(chan struct{})}
	f := FromSingle[int](async).ToFuture(context.Background())
	assert.Equal(t, int32(1), async.subscriptions.Load(), "subscribed before ToFuture returned")
	close(async.release)
	v, err := f.Get(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 1, v)

	entered, leave := make(chan struct{}), make(chan struct{})
	blocking := FromFunc(func(ctx context.Context) (int, error) {
		close(entered)
		<-leave
		return 2, nil
	})
	f = blocking.ToFuture(context.Background())
	<-entered // on another goroutine: ToFuture has returned
	close(leave)
	v, err = f.Get(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 2, v)
}

// Cancelling the Future of a Single ends the context it gave the Single,
// and the Future fails with context.Canceled.
func TestSingleFutureCancel(t *testing.T) {
	async := &testSingle{v: 1, async: true, release: make(chan struct{})}
	f := FromSingle[int](async).ToFuture(context.Background())
	f.Cancel()
	<-async.lastContext().Done()
	_, err := f.Get(context.Background())
	assert.ErrorIs(t, err, context.Canceled)
}

// Zip2 of two Singles is a Single. Its Call calls a synchronous a, then
// b; a failure of a leaves b uncalled. An asynchronous a is subscribed
// and b called meanwhile; the first error ends the other side.
func TestSingleZip2(t *testing.T) {
	a, b := &testSingle{v: 2}, &testSingle{v: 3}
	z := Zip2(FromSingle[int](a), FromSingle[int](b), func(x, y int) int { return x * y })
	_, ok := z.AsSingle()
	require.True(t, ok, "Zip2 of Singles is a Single")
	v, err := z.First(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 6, v)
	assert.Equal(t, int32(1), a.calls.Load())
	assert.Equal(t, int32(1), b.calls.Load())

	bad, unused := &testSingle{err: errBoom}, &testSingle{v: 3}
	_, err = Zip2(FromSingle[int](bad), FromSingle[int](unused), func(x, y int) int { return x * y }).First(context.Background())
	assert.ErrorIs(t, err, errBoom)
	assert.Zero(t, unused.calls.Load())

	slow := &testSingle{v: 1, async: true, release: make(chan struct{})}
	failing := &testSingle{err: errBoom}
	_, err = Zip2(FromSingle[int](slow), FromSingle[int](failing), func(x, y int) int { return x + y }).First(context.Background())
	assert.ErrorIs(t, err, errBoom)
	<-slow.lastContext().Done() // the failure ended the other side

	// An asynchronous a runs while b is called on First's goroutine.
	running, here := &testSingle{v: 2, async: true, release: make(chan struct{})}, &testSingle{v: 5}
	close(running.release)
	v, err = Zip2(FromSingle[int](running), FromSingle[int](here), func(x, y int) int { return x * y }).First(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 10, v)
	assert.Equal(t, int32(1), running.subscriptions.Load())
	assert.Equal(t, int32(1), here.calls.Load())
	assert.Zero(t, here.subscriptions.Load(), "b was subscribed")

	// a's failure ends the call of b, which waits meanwhile: a fails
	// once b has been subscribed.
	failsAsync := &testSingle{err: errBoom, async: true, release: make(chan struct{})}
	waits := &testSingle{v: 1, async: true, release: make(chan struct{}), subscribed: make(chan struct{})}
	go func() {
		<-waits.subscribed
		close(failsAsync.release)
	}()
	_, err = Zip2(FromSingle[int](failsAsync), FromSingle[int](waits), func(x, y int) int { return x + y }).First(context.Background())
	assert.ErrorIs(t, err, errBoom)
	<-waits.lastContext().Done()

	// A synchronous a is called before an asynchronous b.
	first, then := &testSingle{v: 3}, &testSingle{v: 4, async: true, release: make(chan struct{})}
	close(then.release)
	v, err = Zip2(FromSingle[int](first), FromSingle[int](then), func(x, y int) int { return x + y }).First(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 7, v)
	assert.Equal(t, int32(1), first.calls.Load())
	assert.Equal(t, int32(1), then.calls.Load())

	vs, err := Zip2(FromSingle[int](&testSingle{v: 4}), Just(5), func(x, y int) int { return x + y }).ToSlice(context.Background())
	require.NoError(t, err)
	assert.Equal(t, []int{9}, vs)
}

// SubscribeOn of a Single is an asynchronous Single whose work runs on
// the scheduler, whoever asks: First too.
func TestSingleSubscribeOn(t *testing.T) {
	var scheduled atomic.Int32
	sch := SchedulerFunc(func(ctx context.Context, task func()) error {
		scheduled.Add(1)
		go task()
		return nil
	})
	s := &testSingle{v: 8}
	o := FromSingle[int](s).SubscribeOn(sch)
	one, ok := o.AsSingle()
	require.True(t, ok)
	assert.True(t, one.Async())
	v, err := o.First(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 8, v)
	assert.Equal(t, int32(1), scheduled.Load())
	assert.Zero(t, s.calls.Load(), "the Single's work ran on the scheduler")
}

// ReplayNow of a Single subscribes at once and replays its result; when
// every subscriber has left before it, the Single's context ends and later
// subscribers learn the execution was cancelled.
func TestSingleReplayNow(t *testing.T) {
	s := &testSingle{v: 3}
	hot := FromSingle[int](s).ReplayNow(context.Background())
	for range 2 {
		v, err := hot.First(context.Background())
		require.NoError(t, err)
		assert.Equal(t, 3, v)
	}
	assert.Equal(t, int32(1), s.subscriptions.Load())

	async := &testSingle{v: 1, async: true, release: make(chan struct{})}
	hot = FromSingle[int](async).ReplayNow(context.Background())
	sub := hot.Subscribe(context.Background(), newRecorder[int]())
	sub.Unsubscribe()
	<-async.lastContext().Done()
	_, err := hot.First(context.Background())
	assert.ErrorIs(t, err, context.Canceled)
}

// Just of one value and FromFunc are Singles.
func TestJustOneAndFromFuncAreSingles(t *testing.T) {
	_, ok := Just(1).AsSingle()
	assert.True(t, ok)
	_, ok = Just(1, 2).AsSingle()
	assert.False(t, ok)
	_, ok = FromFunc(func(context.Context) (int, error) { return 1, nil }).AsSingle()
	assert.True(t, ok)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Just(1).First(ctx)
	assert.ErrorIs(t, err, context.Canceled)
}

// lateSingle is an asynchronous Single that, as its contract allows, hands
// its observer ctx's error once ctx ends (a command in a worker pool whose
// subscriber left does so), then closes told.
type lateSingle struct{ told chan struct{} }

func (l lateSingle) Call(ctx context.Context) (int, error) { return callBySubscribing[int](ctx, l) }

func (l lateSingle) SubscribeSingle(ctx context.Context, r SingleObserver[int]) {
	go func() {
		<-ctx.Done()
		r.OnResult(0, ctx.Err())
		close(l.told)
	}()
}

func (lateSingle) Async() bool { return true }

// DoOnTerminate "is not called when the subscription is cancelled first",
// and a fallback is for a source that failed, not for a subscriber that
// left: the ctx error a Single hands over once its subscription was
// cancelled must not travel down the chain as if the source had failed.
func TestSingleErrorAfterUnsubscribeIsNotPassedOn(t *testing.T) {
	s := lateSingle{told: make(chan struct{})}
	var terminated, errored, fellBack atomic.Int32
	o := FromSingle[int](s).
		DoOnTerminate(func() { terminated.Add(1) }).
		DoOnError(func(error) { errored.Add(1) }).
		OnErrorResumeNext(func(error) Observable[int] {
			fellBack.Add(1)
			return Just(0)
		})
	r := newRecorder[int]()
	sub := o.Subscribe(context.Background(), r)
	sub.Unsubscribe()
	waitDone(t, s.told, "the Single's answer")

	assert.Zero(t, terminated.Load(), "DoOnTerminate ran after the subscription was cancelled")
	assert.Zero(t, errored.Load(), "DoOnError ran after the subscription was cancelled")
	assert.Zero(t, fellBack.Load(), "the fallback was asked for after the subscription was cancelled")
	r.check(t, nil, nil, false)
}
