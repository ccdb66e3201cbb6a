package observable

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ReplayNow subscribes at once and replays to every subscriber, early or
// late, what the source emitted and how it ended.
func TestReplayNowSubscribesAtOnceAndReplays(t *testing.T) {
	var subscriptions int
	src := Defer(func() Observable[int] {
		subscriptions++
		return Just(1, 2, 3)
	})
	hot := src.ReplayNow(context.Background())
	assert.Equal(t, 1, subscriptions, "subscribed before anyone asked")
	for range 3 {
		got, err := hot.ToSlice(context.Background())
		require.NoError(t, err)
		assert.Equal(t, []int{1, 2, 3}, got)
	}
	assert.Equal(t, 1, subscriptions, "one subscription, replayed")
}

// When every subscriber that came has left before the source terminated,
// the source's subscription is cancelled; a subscriber that comes later
// receives context.Canceled. A subscriber that leaves while another stays
// cancels nothing.
func TestReplayNowCancelsWhenEverySubscriberLeft(t *testing.T) {
	src, cancelled := neverUntilCancelled()
	hot := src.ReplayNow(context.Background())

	a := hot.Subscribe(context.Background(), discardObserver[int]{})
	b := hot.Subscribe(context.Background(), discardObserver[int]{})
	a.Unsubscribe()
	select {
	case <-cancelled:
		t.Fatal("the source was cancelled while a subscriber stayed")
	default:
	}
	b.Unsubscribe()
	<-cancelled // the last subscriber's leaving cancelled it, synchronously
	_, err := hot.First(context.Background())
	assert.ErrorIs(t, err, context.Canceled)
}

// Subscribers that leave after the source terminated cancel nothing, and
// later ones still get the replay.
func TestReplayNowAfterTheEndCancelsNothing(t *testing.T) {
	hot := Just(7).ReplayNow(context.Background())
	sub := hot.Subscribe(context.Background(), discardObserver[int]{})
	sub.Unsubscribe()
	v, err := hot.First(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 7, v)
}

// The end of ReplayNow's context cancels the source.
func TestReplayNowContextCancelsTheSource(t *testing.T) {
	src, cancelled := neverUntilCancelled()
	ctx, cancel := context.WithCancel(context.Background())
	hot := src.ReplayNow(ctx)
	cancel()
	<-cancelled
	_, err := hot.First(context.Background())
	assert.ErrorIs(t, err, context.Canceled)
}

// neverUntilCancelled returns a source that emits nothing and closes
// cancelled once its subscription's context is done.
func neverUntilCancelled() (Observable[int], <-chan struct{}) {
	cancelled := make(chan struct{})
	return Create(func(ctx context.Context, o Observer[int]) {
		context.AfterFunc(ctx, func() { close(cancelled) })
	}), cancelled
}

type discardObserver[T any] struct{}

func (discardObserver[T]) OnNext(T)      {}
func (discardObserver[T]) OnError(error) {}
func (discardObserver[T]) OnCompleted()  {}

// ReplayNowOn subscribes on the scheduler it is given, Single or not, and
// replays.
func TestReplayNowOnSubscribesOnItsScheduler(t *testing.T) {
	sources := map[string]Observable[int]{
		"a Single":   Just(7),
		"two values": Just(6, 7),
	}
	for name, src := range sources {
		t.Run(name, func(t *testing.T) {
			var scheduled int
			sch := SchedulerFunc(func(_ context.Context, task func()) error {
				scheduled++
				task()
				return nil
			})
			hot := src.ReplayNowOn(context.Background(), sch)
			assert.Equal(t, 1, scheduled, "subscribed on sch, at once")
			for range 2 {
				v, err := hot.Last(context.Background())
				require.NoError(t, err)
				assert.Equal(t, 7, v)
			}
			assert.Equal(t, 1, scheduled, "replayed, not subscribed again")
		})
	}
}

// ReplayNowOn(NewGoroutine) of a joinable Single hands its work over as
// ToFuture does: a First whose context cannot end takes it over.
func TestReplayNowOnANewGoroutineHandsTheWorkOver(t *testing.T) {
	holdStarts(t)
	s := &countingSingle{join: true}
	hot := FromSingle[int](s).ReplayNowOn(context.Background(), NewGoroutine)
	v, err := hot.First(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 7, v)
	assert.Equal(t, int32(1), s.calls.Load(), "the First called the Single")
	assert.Equal(t, int32(0), s.subscribed.Load())
}

// The last subscriber of a ReplayNow leaves while o's terminal event is on
// its way: past the DoOnUnsubscribe (now Finally) that tells the subject of a
// cancellation, not yet at the subscriber that passes it on. The test
// holds the lock of the subscription's scope to stop the terminal event
// there, and lets go once the cancellation has ended the scope. Either
// the terminal event or the cancellation must end the replay; otherwise
// every later subscriber waits for ever.
func TestReplayNowLastLeavingAsOTerminatesStillEndsTheReplay(t *testing.T) {
	var emit Observer[int]
	o := Create(func(_ context.Context, ob Observer[int]) { emit = ob })
	replay := o.ReplayNow(context.Background())
	r := replay.src.(*replayNow[int])
	up := &r.sub.(*subscriber[int]).scope // the subscription to o
	sub := replay.Subscribe(context.Background(), newRecorder[int]())

	w := up.w.Load()
	w.mu.Lock()
	u := w.hooks.head.target.(*endObserver[int]) // Finally's
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); emit.OnCompleted() }()
	for u.state.Load() != endTerminated {
		runtime.Gosched() // the terminal event passed Finally
	}
	go func() { defer wg.Done(); sub.Unsubscribe() }()
	for up.state.Load() == scopeLive {
		runtime.Gosched() // the last subscriber's leaving cancelled o
	}
	w.mu.Unlock()
	wg.Wait()

	later := newRecorder[int]()
	replay.Subscribe(context.Background(), later)
	assert.True(t, later.terminated(), "a later subscriber is told how the replay ended")
}

// The same, with ReplayNow's ctx ending as o's terminal event is on its
// way.
func TestReplayNowContextEndingAsOTerminatesStillEndsTheReplay(t *testing.T) {
	var emit Observer[int]
	o := Create(func(_ context.Context, ob Observer[int]) { emit = ob })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	replay := o.ReplayNow(ctx)
	r := replay.src.(*replayNow[int])
	up := &r.sub.(*subscriber[int]).scope // the subscription to o

	w := up.w.Load()
	w.mu.Lock()
	var u *endObserver[int] // Finally's
	for h := w.hooks.head; h != nil; h = h.next {
		if e, ok := h.target.(*endObserver[int]); ok {
			u = e
		}
	}
	done := make(chan struct{})
	go func() { defer close(done); emit.OnCompleted() }()
	for u.state.Load() != endTerminated {
		runtime.Gosched() // the terminal event passed Finally
	}
	cancel()
	for up.state.Load() == scopeLive {
		runtime.Gosched() // ctx's end reached the subscription to o
	}
	w.mu.Unlock()
	<-done
	waitDone(t, up.settledDone(), "the subscription's end")

	later := newRecorder[int]()
	replay.Subscribe(context.Background(), later)
	assert.True(t, later.terminated(), "a later subscriber is told how the replay ended")
}

// gateSingle is an asynchronous Single whose result the test gives, by
// calling deliver, whenever it likes.
type gateSingle struct {
	mu sync.Mutex
	r  SingleObserver[int]
}

func (g *gateSingle) Call(ctx context.Context) (int, error) { return callBySubscribing[int](ctx, g) }

func (g *gateSingle) SubscribeSingle(_ context.Context, r SingleObserver[int]) {
	g.mu.Lock()
	g.r = r
	g.mu.Unlock()
}

func (*gateSingle) Async() bool { return true }

func (g *gateSingle) deliver(v int) {
	g.mu.Lock()
	r := g.r
	g.mu.Unlock()
	r.OnResult(v, nil)
}

// A subscriber of ReplayNow of a Single that comes as the result does is
// told the result once, and the race between its subscription and the
// result leaves no data race on what the waiter watches (run with -race).
func TestReplayNowOfASingleSubscribeRacesTheResult(t *testing.T) {
	for range 300 {
		g := &gateSingle{}
		hot := FromSingle[int](g).ReplayNow(context.Background())
		rec := newRecorder[int]()
		start := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			g.deliver(7)
		}()
		close(start)
		hot.Subscribe(context.Background(), rec)
		wg.Wait()
		rec.wait(t)
		rec.check(t, []int{7}, nil, true)
	}
}

// afterFuncCtx is a context whose AfterFunc method (which
// context.AfterFunc calls) counts the registrations not stopped, and
// runs during before its registration returns.
type afterFuncCtx struct {
	context.Context // Background: Deadline and Value
	done            chan struct{}
	during          func()
	live            atomic.Int32
}

func (c *afterFuncCtx) Done() <-chan struct{} { return c.done }
func (c *afterFuncCtx) Err() error            { return nil }

func (c *afterFuncCtx) AfterFunc(f func()) func() bool {
	c.live.Add(1)
	if c.during != nil {
		c.during()
	}
	var once atomic.Bool
	return func() bool {
		if once.CompareAndSwap(false, true) {
			c.live.Add(-1)
			return true
		}
		return false
	}
}

// A waiter whose result comes while it registers its watch on its
// context does not leave the registration behind: whoever finishes
// last takes it out.
func TestReplayNowOfASingleWatchRemovedWhenTheResultComesMeanwhile(t *testing.T) {
	g := &gateSingle{}
	hot := FromSingle[int](g).ReplayNow(context.Background())
	s, ok := hot.AsSingle()
	require.True(t, ok)
	ctx := &afterFuncCtx{Context: context.Background(), done: make(chan struct{})}
	ctx.during = func() { g.deliver(5) }
	var got []int
	s.SubscribeSingle(ctx, singleFunc[int](func(v int, err error) {
		require.NoError(t, err)
		got = append(got, v)
	}))
	assert.Equal(t, []int{5}, got)
	assert.Zero(t, ctx.live.Load(), "the waiter's AfterFunc on its context is still registered")
}

// ReplayNow of SubscribeOn of a Discarder Single still replays it as
// ReplayNowOn does: on the scheduler, discarding a value nobody waits for.
func TestReplayNowOfSubscribeOnOfADiscarderSingle(t *testing.T) {
	late := &ownedSingle{v: 9, async: true, answer: make(chan struct{})}
	var sch atomic.Int32
	counting := SchedulerFunc(func(ctx context.Context, task func()) error {
		sch.Add(1)
		task() // inline, so that the Single is subscribed before anyone leaves
		return nil
	})
	hot := FromSingle[int](late).SubscribeOn(counting).ReplayNow(context.Background())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := hot.First(ctx)
	require.ErrorIs(t, err, context.Canceled)
	close(late.answer)
	assert.Equal(t, []string{"9"}, late.awaitDiscards(t, 1))
	assert.Equal(t, int32(1), sch.Load())
}
