package command

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/internal/clock"
	"github.com/rxhystrix/rxhystrix/observable"
)

var runContextEpoch = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

type runContextKey struct{}

// A run whose caller's context cannot be cancelled gets a deadline context
// that behaves as context.WithDeadline's: deadline, values, Err at the
// deadline (asked or waited for), Cause, and children that follow it.
func TestDeadlineContextBehavesAsWithDeadline(t *testing.T) {
	mc := clock.NewManual(runContextEpoch)
	parent := context.WithValue(context.Background(), runContextKey{}, "v")
	ctx, d := runContextFor(parent, mc, mc.Now().UnixNano(), time.Second)
	require.NotNil(t, d)
	defer d.end()

	deadline, ok := ctx.Deadline()
	assert.True(t, ok)
	assert.WithinDuration(t, runContextEpoch.Add(time.Second), deadline, 0)
	assert.Equal(t, "v", ctx.Value(runContextKey{}))
	assert.NoError(t, ctx.Err())

	child, cancelChild := context.WithCancel(ctx)
	defer cancelChild()
	done := ctx.Done()
	select {
	case <-done:
		t.Fatal("done before the deadline")
	default:
	}

	mc.Advance(time.Second)
	<-done
	<-child.Done() // follows through AfterFunc, without a goroutine watching
	assert.ErrorIs(t, ctx.Err(), context.DeadlineExceeded)
	assert.ErrorIs(t, context.Cause(ctx), context.DeadlineExceeded)
	assert.ErrorIs(t, child.Err(), context.DeadlineExceeded, "a child ends as its parent")
	assert.True(t, d.expiredAt(mc.Now().UnixNano()))
}

// Err tells of the deadline even if nobody waited on Done, and a Done
// asked after that is closed already.
func TestDeadlineContextExpiresWithoutATimer(t *testing.T) {
	mc := clock.NewManual(runContextEpoch)
	ctx, d := runContextFor(context.Background(), mc, mc.Now().UnixNano(), time.Second)
	defer endRunContext(d)
	assert.Zero(t, mc.Pending(), "no timer until somebody waits")
	mc.Advance(time.Second)
	assert.True(t, d.expiredAt(mc.Now().UnixNano()))
	assert.ErrorIs(t, ctx.Err(), context.DeadlineExceeded)
	<-ctx.Done()
}

// Ending the context after run returned cancels it, stops its timer and
// lets go of what waits on it; timing it out makes it DeadlineExceeded.
func TestDeadlineContextEndAndTimeOut(t *testing.T) {
	mc := clock.NewManual(runContextEpoch)
	ctx, d := runContextFor(context.Background(), mc, mc.Now().UnixNano(), time.Second)
	end := d.end
	ran := make(chan struct{})
	context.AfterFunc(ctx, func() { close(ran) })
	stopped := context.AfterFunc(ctx, func() { t.Error("a stopped function ran") })
	assert.True(t, stopped())
	require.Equal(t, 1, mc.Pending(), "waiting on the context armed its timer")
	end()
	<-ran
	assert.Zero(t, mc.Pending(), "the timer is stopped")
	assert.ErrorIs(t, ctx.Err(), context.Canceled)
	assert.False(t, d.expiredAt(mc.Now().UnixNano()))
	end() // a second end changes nothing
	assert.ErrorIs(t, ctx.Err(), context.Canceled)

	late := make(chan struct{})
	assert.False(t, context.AfterFunc(ctx, func() { close(late) })(), "an ended context runs f at once")
	<-late

	ctx2, d2 := runContextFor(context.Background(), mc, mc.Now().UnixNano(), time.Second)
	d2.timeOut()
	assert.True(t, d2.expiredAt(mc.Now().UnixNano()))
	assert.ErrorIs(t, ctx2.Err(), context.DeadlineExceeded)
	assert.Contains(t, d2.String(), "deadline")
}

// A parent's earlier deadline wins; a cancellable caller gets the
// standard library's context; no timeout gives the caller's context.
func TestRunContextForOtherCallers(t *testing.T) {
	mc := clock.NewManual(runContextEpoch)
	early := runContextEpoch.Add(time.Millisecond)
	d := newDeadlineContext(deadlineOnly{early}, mc, runContextEpoch.Add(time.Second).UnixNano())
	deadline, _ := d.Deadline()
	assert.WithinDuration(t, early, deadline, 0)

	ctx, dc := runContextFor(context.Background(), mc, mc.Now().UnixNano(), -1)
	assert.Equal(t, context.Background(), ctx)
	assert.Nil(t, dc)
}

// deadlineOnly is a context with a deadline that cannot be cancelled.
type deadlineOnly struct{ deadline time.Time }

func (c deadlineOnly) Deadline() (time.Time, bool) { return c.deadline, true }
func (deadlineOnly) Done() <-chan struct{}         { return nil }
func (deadlineOnly) Err() error                    { return nil }
func (deadlineOnly) Value(any) any                 { return nil }

// Waiters that come as the context ends are all let go, once: Done is
// closed, AfterFunc functions run exactly once, and no timer stays armed,
// whichever of them and the end comes first.
func TestDeadlineContextWaitersRacingTheEnd(t *testing.T) {
	mc := clock.NewManual(runContextEpoch)
	for range 200 {
		ctx, d := runContextFor(context.Background(), mc, mc.Now().UnixNano(), time.Second)
		var ran atomic.Int32
		var funcs sync.WaitGroup
		funcs.Add(2)
		start := make(chan struct{})
		var waiters sync.WaitGroup
		dones := make([]<-chan struct{}, 2)
		for i := range dones {
			waiters.Add(2)
			go func() {
				defer waiters.Done()
				<-start
				dones[i] = ctx.Done()
			}()
			go func() {
				defer waiters.Done()
				<-start
				context.AfterFunc(ctx, func() {
					ran.Add(1)
					funcs.Done()
				})
			}()
		}
		close(start)
		d.end()
		waiters.Wait()
		for _, done := range dones {
			<-done
		}
		funcs.Wait()
		assert.Equal(t, int32(2), ran.Load(), "each function ran once")
		assert.Zero(t, mc.Pending(), "a timer armed as the context ended was stopped")
		assert.ErrorIs(t, ctx.Err(), context.Canceled)
	}
}

// A run's context under a caller that runs run itself and whose context
// can be cancelled follows the caller's: asked (Err) or waited on (Done,
// and contexts derived from it), it ends with the caller's, with its
// error and cause; it keeps its own deadline too; and once it ends it
// lets go of the caller's context.
func TestDeadlineContextFollowsTheCallersContext(t *testing.T) {
	mc := clock.NewManual(runContextEpoch)
	errGone := errors.New("client went away")

	t.Run("asked", func(t *testing.T) {
		parent, cancel := context.WithCancelCause(context.Background())
		ctx, d := runContextFor(parent, mc, mc.Now().UnixNano(), time.Second)
		require.NotNil(t, d)
		defer d.end()
		assert.NoError(t, ctx.Err())
		cancel(errGone)
		assert.ErrorIs(t, ctx.Err(), context.Canceled)
		assert.ErrorIs(t, context.Cause(ctx), errGone)
		assert.False(t, d.expiredAt(mc.Now().UnixNano()), "the caller leaving is not a timeout")
		<-ctx.Done()
	})
	t.Run("waited on", func(t *testing.T) {
		parent, cancel := context.WithCancelCause(context.Background())
		ctx, d := runContextFor(parent, mc, mc.Now().UnixNano(), time.Second)
		defer d.end()
		child, cancelChild := context.WithCancel(ctx)
		defer cancelChild()
		done := ctx.Done()
		cancel(errGone)
		<-done
		<-child.Done()
		assert.ErrorIs(t, child.Err(), context.Canceled, "a child ends as its parent")
		assert.ErrorIs(t, context.Cause(child), errGone)
	})
	t.Run("deadline first", func(t *testing.T) {
		parent, cancel := context.WithCancelCause(context.Background())
		defer cancel(nil)
		ctx, d := runContextFor(parent, mc, mc.Now().UnixNano(), time.Second)
		defer d.end()
		done := ctx.Done()
		mc.Advance(time.Second)
		<-done
		assert.ErrorIs(t, ctx.Err(), context.DeadlineExceeded)
		assert.ErrorIs(t, context.Cause(ctx), context.DeadlineExceeded)
		assert.True(t, d.expiredAt(mc.Now().UnixNano()))
	})
	t.Run("waited on after the caller left", func(t *testing.T) {
		parent, cancel := context.WithCancelCause(context.Background())
		ctx, d := runContextFor(parent, mc, mc.Now().UnixNano(), time.Second)
		defer d.end()
		cancel(errGone)
		select {
		case <-ctx.Done():
		default:
			t.Fatal("Done is not closed though the caller's context has ended")
		}
		assert.ErrorIs(t, context.Cause(ctx), errGone)
	})
	t.Run("ended", func(t *testing.T) {
		parent, cancel := context.WithCancel(context.Background())
		defer cancel()
		ctx, d := runContextFor(parent, mc, mc.Now().UnixNano(), time.Second)
		ctx.Done()
		d.end()
		assert.ErrorIs(t, ctx.Err(), context.Canceled)
		w := d.waiters.Load()
		w.mu.Lock()
		defer w.mu.Unlock()
		assert.Nil(t, w.stopParent, "unhooked from the caller's context")
	})
}

// A function registered with a run context's AfterFunc method runs when
// the deadline passes, as one registered on a context of
// context.WithTimeout does, though nobody asked for Done: package
// context, and a subscription watching its caller's context (watchEnd),
// register that way.
func TestRunContextAfterFuncRunsAtTheDeadline(t *testing.T) {
	mc := clock.NewManual(harnessStart)
	runCtx, deadline := runContextFor(context.Background(), mc, harnessStart.UnixNano(), 100*time.Millisecond)
	defer endRunContext(deadline)
	ran := make(chan struct{})
	stop := runCtx.(interface{ AfterFunc(func()) func() bool }).AfterFunc(func() { close(ran) })
	defer stop()
	mc.Advance(100 * time.Millisecond)
	recv(t, ran, "the AfterFunc function to run at the deadline")
	assert.ErrorIs(t, runCtx.Err(), context.DeadlineExceeded)
}

// A command subscribed from inside a semaphore-isolated run, with run's
// context, ends when the outer run's deadline passes: its run's context
// ends, and the execution is CANCELLED, as under a context of
// context.WithTimeout, though the inner key's own timeout is later.
func TestInnerSubscriptionEndsAtTheOuterRunsDeadline(t *testing.T) {
	h := newHarness(t)
	g := newGate()
	inner := New("Inner", g.runLate, WithRegistry(h.reg), WithConfig(Config{Isolation: SemaphoreIsolation, Timeout: time.Second}))
	innerErr := make(chan error, 1)
	outer := New("Outer", func(ctx context.Context, id int) (string, error) {
		// Subscribed with a context of its own: ToObservable's is run's.
		_, err := observable.Map(inner.ToObservable(ctx, id), func(v string) string { return v }).First(context.Background())
		innerErr <- err
		return "outer", nil
	}, WithRegistry(h.reg), WithConfig(Config{Isolation: SemaphoreIsolation, Timeout: 100 * time.Millisecond}))
	call := goCall(func() (string, error) { return outer.Execute(context.Background(), 1) })
	innerRunCtx := g.arrived(t)
	h.clock.Advance(100 * time.Millisecond)
	select {
	case <-innerRunCtx.Done():
	case <-time.After(stuckAfter):
		g.release()
		awaitCall(t, call)
		t.Fatal("the inner run's context did not end at the outer run's deadline")
	}
	require.Error(t, recv(t, innerErr, "the inner result"))
	awaitCall(t, call)
}

// lateClock is a manual clock whose AfterFunc timers have not fired yet
// when their time comes, as a real clock's timer whose goroutine has not
// been scheduled: until it fires, only a reading of the clock tells that
// a deadline has passed.
type lateClock struct{ *clock.Manual }

func (lateClock) AfterFunc(time.Duration, func()) clock.Timer { return lateTimer{} }

type lateTimer struct{}

func (lateTimer) C() <-chan time.Time      { return nil }
func (lateTimer) Stop() bool               { return true }
func (lateTimer) Reset(time.Duration) bool { return true }
func (lateTimer) ResetAt(t time.Time) bool { return true }

// Err of a run context whose deadline has passed, asked before its timer
// fired, does not run the functions registered with AfterFunc on the
// asking goroutine, which may hold a lock they take: a subscription asks
// its caller's context under its own lock, and its AfterFunc function
// (its leave) takes that lock.
func TestRunContextErrDoesNotRunAfterFuncsOnTheAsker(t *testing.T) {
	lc := lateClock{clock.NewManual(harnessStart)}
	runCtx, deadline := runContextFor(context.Background(), lc, harnessStart.UnixNano(), 100*time.Millisecond)
	defer endRunContext(deadline)
	var mu sync.Mutex
	ran := make(chan struct{})
	runCtx.(interface{ AfterFunc(func()) func() bool }).AfterFunc(func() {
		mu.Lock()
		defer mu.Unlock()
		close(ran)
	})
	lc.Advance(100 * time.Millisecond)
	asked := make(chan error, 1)
	go func() {
		mu.Lock()
		defer mu.Unlock()
		asked <- runCtx.Err()
	}()
	assert.ErrorIs(t, recv(t, asked, "Err to return"), context.DeadlineExceeded)
	recv(t, ran, "the AfterFunc function to run")
}

// A command subscribed from inside a semaphore-isolated run, with run's
// context, whose run returns after the outer deadline has passed but
// before the outer context's timer fired, ends CANCELLED, and does not
// hang its subscriber.
func TestInnerSubscriptionReturningPastTheOuterDeadlineDoesNotHang(t *testing.T) {
	lc := lateClock{clock.NewManual(harnessStart)}
	reg := NewRegistry(WithClock(lc))
	t.Cleanup(reg.Close)
	g := newGate()
	inner := New("Inner", func(ctx context.Context, _ int) (string, error) {
		return "late", g.wait(ctx, false)
	}, WithRegistry(reg), WithConfig(Config{Isolation: SemaphoreIsolation, Timeout: time.Second}))
	innerErr := make(chan error, 1)
	outer := New("Outer", func(ctx context.Context, id int) (string, error) {
		_, err := observable.Map(inner.ToObservable(ctx, id), func(v string) string { return v }).First(context.Background())
		innerErr <- err
		return "outer", nil
	}, WithRegistry(reg), WithConfig(Config{Isolation: SemaphoreIsolation, Timeout: 100 * time.Millisecond}))
	call := goCall(func() (string, error) { return outer.Execute(context.Background(), 1) })
	g.arrived(t)
	lc.Advance(100 * time.Millisecond)
	g.release()
	assert.ErrorIs(t, recv(t, innerErr, "the inner subscription to end"), context.DeadlineExceeded)
	assertCommandError(t, awaitCall(t, call).err, "Outer", TimeoutFailure, ErrTimeout, ErrFallbackMissing)
}

// A deadline of the context given to ToObservable that passes while run
// runs, under a subscriber's context that does not end, reaches the
// caller and run's context as context.DeadlineExceeded, with that cause,
// in a call (First, Zip2's First) as in a subscription (Map's): doc.go's
// "it ends with the caller's context, with its error and cause".
func TestToObservablesContextDeadlineReachesRunAndCaller(t *testing.T) {
	for _, m := range twoContextModes {
		for _, iso := range bothIsolations {
			t.Run(iso.String()+"/"+m.name, func(t *testing.T) {
				h := newHarness(t)
				g := newGate()
				defer g.release()
				c := New("GetUser", g.runLate, WithRegistry(h.reg), WithConfig(Config{Isolation: iso, Timeout: time.Second}))
				ctx := newExpiringContext()
				call := goCall(func() (string, error) { return m.exec(c, ctx, context.Background()) })
				runCtx := g.arrived(t)
				ctx.expire()
				res := awaitCall(t, call)
				assert.ErrorIs(t, res.err, context.DeadlineExceeded)
				assert.NotErrorIs(t, res.err, context.Canceled)
				recv(t, runCtx.Done(), "run's context to end")
				assert.ErrorIs(t, runCtx.Err(), context.DeadlineExceeded, "run's context's error")
				assert.ErrorIs(t, context.Cause(runCtx), context.DeadlineExceeded, "run's context's cause")
				assert.Equal(t, evs("CANCELLED"), h.events())
			})
		}
	}
}

type runValueKey struct{}

// The values of the context given to ToObservable reach run (and an
// ObservableCommand's construct) whatever context subscribes, as
// ToObservable's doc says, with the timeout off as with it on: a
// subscription (Map's) as a call (First's).
func TestToObservablesContextValuesReachRunWithoutTimeout(t *testing.T) {
	for _, m := range twoContextModes {
		for _, iso := range bothIsolations {
			t.Run(iso.String()+"/"+m.name, func(t *testing.T) {
				h := newHarness(t)
				seen := make(chan any, 1)
				c := New("Values", func(ctx context.Context, id int) (string, error) {
					seen <- ctx.Value(runValueKey{})
					return userName(id), nil
				}, WithRegistry(h.reg), WithConfig(Config{Isolation: iso, Timeout: -1}))
				ctx := context.WithValue(context.Background(), runValueKey{}, "request")
				v, err := m.exec(c, ctx, context.Background())
				require.NoError(t, err)
				assert.Equal(t, userName(1), v)
				h.completion()
				assert.Equal(t, "request", recv(t, seen, "run's value"))
			})
		}
	}

	t.Run("an observable command", func(t *testing.T) {
		h := newHarness(t)
		seen := make(chan any, 1)
		c := NewObservable("Stream", func(ctx context.Context, n int) observable.Observable[int] {
			seen <- ctx.Value(runValueKey{})
			return observable.Just(1, 2)
		}, WithRegistry(h.reg), WithConfig(Config{Timeout: -1}))
		ctx := context.WithValue(context.Background(), runValueKey{}, "request")
		got, err := c.ToObservable(ctx, 2).ToSlice(context.Background())
		require.NoError(t, err)
		assert.Equal(t, []int{1, 2}, got)
		h.completion()
		assert.Equal(t, "request", recv(t, seen, "construct's value"))
	})
}

// A semaphore-isolated Execute whose caller leaves before the timeout and
// whose run, which does not wait on its context, only asks ctx.Err() once
// the timeout's time has passed: run is told the caller's error, as under
// context.WithTimeout, whose context ends with its parent's, and the
// execution is CANCELLED, as it is when run does not ask at all (below),
// not a TIMEOUT that the breaker counts, with a fallback for a caller
// that has left.
func TestRunAskingErrAfterTheCallerLeftIsNotATimeout(t *testing.T) {
	for _, asks := range []bool{false, true} {
		h := newHarness(t)
		started, release := make(chan struct{}, 1), make(chan struct{})
		seen := make(chan error, 1)
		c := New("AskedLate", func(ctx context.Context, id int) (string, error) {
			started <- struct{}{}
			<-release // not the context: run does not wait on it
			if asks {
				seen <- ctx.Err()
			}
			return "late", nil
		}, WithRegistry(h.reg), WithConfig(Config{Isolation: SemaphoreIsolation, Timeout: 50 * time.Millisecond})).
			WithFallback(fallbackName)
		ctx, cancel := context.WithCancel(context.Background())
		call := goCall(func() (string, error) { return c.Execute(ctx, 1) })
		recv(t, started, "run to start")
		cancel()                     // the caller leaves first,
		h.clock.Advance(time.Second) // then the timeout's time passes,
		close(release)               // then run asks, or not
		res := awaitCall(t, call)
		assert.ErrorIs(t, res.err, context.Canceled, "asks=%v", asks)
		assert.Equal(t, evs("CANCELLED"), h.events(), "asks=%v", asks)
		if asks {
			assert.ErrorIs(t, <-seen, context.Canceled, "run is told the caller left")
		}
	}
}
