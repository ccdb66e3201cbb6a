package observable

import (
	"context"
	"testing"
	"time"

	"github.com/rxhystrix/rxhystrix/internal/clock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// epoch is where manual clocks start: in the future, so that real
// contexts with deadlines derived from it are not already done.
var epoch = time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)

// gate is a source that emits vs and completes once release is closed,
// from a goroutine, and records the error its context ended with.
type gate struct {
	started chan struct{}
	release chan struct{}
	stopped chan struct{}
	ctxErr  error
}

func newGate() *gate {
	return &gate{started: make(chan struct{}), release: make(chan struct{}), stopped: make(chan struct{})}
}

func (g *gate) observable(vs ...int) Observable[int] {
	return Create(func(ctx context.Context, o Observer[int]) {
		close(g.started)
		go func() {
			defer close(g.stopped)
			select {
			case <-g.release:
				for _, v := range vs {
					o.OnNext(v)
				}
				o.OnCompleted()
				<-ctx.Done()
			case <-ctx.Done():
			}
			g.ctxErr = ctx.Err()
		}()
	})
}

func TestTimeoutFiresWhenNothingArrives(t *testing.T) {
	mc := clock.NewManual(epoch)
	g := newGate()
	r := newRecorder[int]()
	g.observable(1).TimeoutOn(time.Second, mc).Subscribe(context.Background(), r)
	require.Equal(t, 1, mc.Pending(), "the timer is armed at subscription")

	mc.Advance(999 * time.Millisecond)
	assert.False(t, r.terminated(), "not yet")
	mc.Advance(time.Millisecond)
	require.True(t, r.terminated(), "the error is delivered on the advancing goroutine")
	r.check(t, nil, ErrTimeout, false)

	waitDone(t, g.stopped, "source")
	assert.ErrorIs(t, g.ctxErr, context.DeadlineExceeded, "the source sees why it was cut off")

	close(g.release) // too late: nothing more is delivered
	r.check(t, nil, ErrTimeout, false)
}

func TestTimeoutFirstNotificationDisarmsTheTimer(t *testing.T) {
	cases := []struct {
		name      string
		o         Observable[int]
		want      []int
		err       error
		completed bool
	}{
		{"value", Just(1, 2), []int{1, 2}, nil, true},
		{"completion", Empty[int](), nil, nil, true},
		{"error", Error[int](errBoom), nil, errBoom, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mc := clock.NewManual(epoch)
			r := newRecorder[int]()
			c.o.TimeoutOn(time.Second, mc).Subscribe(context.Background(), r)
			assert.Zero(t, mc.Pending(), "the timer is stopped")
			mc.Advance(time.Hour)
			r.check(t, c.want, c.err, c.completed)
		})
	}
}

func TestTimeoutDoesNotBoundTheRestOfTheStream(t *testing.T) {
	mc := clock.NewManual(epoch)
	subject := NewPublishSubject[int]()
	r := newRecorder[int]()
	subject.Observable().TimeoutOn(time.Second, mc).Subscribe(context.Background(), r)
	subject.OnNext(1)
	mc.Advance(time.Hour)
	subject.OnNext(2)
	subject.OnCompleted()
	r.check(t, []int{1, 2}, nil, true)
}

func TestTimeoutStopsItsTimerOnUnsubscribe(t *testing.T) {
	mc := clock.NewManual(epoch)
	sub := Never[int]().TimeoutOn(time.Second, mc).Subscribe(context.Background(), newRecorder[int]())
	require.Equal(t, 1, mc.Pending())
	sub.Unsubscribe()
	assert.Zero(t, mc.Pending())
}

func TestTimeoutReportsTheDeadline(t *testing.T) {
	mc := clock.NewManual(epoch)
	var deadline time.Time
	var ok bool
	o := Create(func(ctx context.Context, o Observer[int]) {
		deadline, ok = ctx.Deadline()
		o.OnCompleted()
	})
	_, err := o.TimeoutOn(time.Second, mc).ToSlice(context.Background())
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, epoch.Add(time.Second), deadline)

	// An earlier deadline of the caller's context wins.
	ctx, cancel := context.WithDeadline(context.Background(), epoch.Add(time.Millisecond))
	defer cancel()
	_, _ = o.TimeoutOn(time.Second, mc).ToSlice(ctx)
	assert.Equal(t, epoch.Add(time.Millisecond), deadline)
}

func TestTimeoutWithSubscribeOnReturnsAtTheTimeout(t *testing.T) {
	mc := clock.NewManual(epoch)
	g := newGate()
	o := g.observable(1).SubscribeOn(NewGoroutine).TimeoutOn(time.Second, mc)
	result := make(chan error, 1)
	go func() {
		_, err := o.First(context.Background())
		result <- err
	}()
	waitDone(t, g.started, "subscription on the scheduler's goroutine")
	mc.Advance(time.Second)
	assert.ErrorIs(t, <-result, ErrTimeout)
	waitDone(t, g.stopped, "source")
}

func TestTimeoutOnTheRealClock(t *testing.T) {
	_, err := Never[int]().Timeout(time.Millisecond).First(context.Background())
	assert.ErrorIs(t, err, ErrTimeout)

	v, err := Just(1).Timeout(time.Hour).First(context.Background())
	assert.NoError(t, err)
	assert.Equal(t, 1, v)
}

// A Timeout whose source has terminated leaves nothing behind in the scope
// it was subscribed in: inside a long-lived FlatMap (one inner per value
// of an endless stream), every finished inner would otherwise stay hooked
// into the FlatMap's scope, with its observers, until the stream ends.
func TestTimeoutLeavesNothingHookedOnceItsSourceTerminated(t *testing.T) {
	mc := clock.NewManual(epoch)
	outer := NewPublishSubject[int]()
	var inner *scope
	r := newRecorder[int]()
	sub := FlatMap(outer.Observable(), func(v int) Observable[int] {
		return Create(func(ctx context.Context, o Observer[int]) {
			inner = ctx.(*scope)
			o.OnNext(v)
			o.OnCompleted()
		}).TimeoutOn(time.Hour, mc)
	}).Subscribe(context.Background(), r)
	defer sub.Unsubscribe()

	outer.OnNext(0)
	shared := inner.up // the FlatMap's scope, which every inner shares
	before := countHooks(shared)
	for i := 1; i <= 100; i++ {
		outer.OnNext(i)
	}
	require.Zero(t, mc.Pending(), "every timer is stopped")
	assert.Equal(t, before, countHooks(shared), "hooks left in the FlatMap's scope by 100 finished Timeouts")
	values, _, _ := r.snapshot()
	assert.Len(t, values, 101)
}

// countHooks returns how many hooks wait on s.
func countHooks(s *scope) int {
	w := s.w.Load()
	if w == nil {
		return 0
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for h := w.hooks.head; h != nil; h = h.next {
		n++
	}
	return n
}

// A source that panics while Timeout subscribes it ends the subscription
// with the panic, which goes on to the subscriber: the timeout is not
// told afterwards, at its deadline, to an observer whose Subscribe never
// returned.
func TestTimeoutToldNothingAfterTheSourcePanicked(t *testing.T) {
	mc := clock.NewManual(epoch)
	o := Create(func(context.Context, Observer[int]) { panic("user code") }).TimeoutOn(time.Second, mc)
	rec := newRecorder[int]()
	mustPanicWith(t, "user code", func() { o.Subscribe(context.Background(), rec) })
	assert.Zero(t, mc.Pending(), "the timeout's timer is still armed")
	mc.Advance(time.Hour)
	assert.False(t, rec.terminated(), "ErrTimeout told after the panic")
}

// A value a Discarder Single gives once the subscriber of its Timeout
// has left, before the timeout, is discarded, as Subscribe of the Single
// alone discards it (TestSubscribeHandsAValueThatComesAfterTheEndToTheSingle)
// and as Timeout discards one that comes after the timeout: the late
// value passed through a disarmed-by-nobody Timeout to a subscriber that
// has no Discarder to give it to.
func TestTimeoutDiscardsAValueThatComesOnceItsSubscriberLeft(t *testing.T) {
	mc := clock.NewManual(epoch)
	late := &ownedSingle{v: 6, async: true, answer: make(chan struct{})}
	sub := FromSingle[int](late).TimeoutOn(time.Second, mc).Subscribe(context.Background(), funcObserver[int]{
		next: func(v int) { t.Errorf("OnNext(%d) once the subscription had ended", v) },
	})
	sub.Unsubscribe()
	<-sub.Done()
	close(late.answer)
	assert.Equal(t, []string{"6"}, late.awaitDiscards(t, 1))
	assert.Zero(t, mc.Pending(), "the timer was stopped")
}
