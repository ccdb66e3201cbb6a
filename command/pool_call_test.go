package command

import (
	"context"
	"math"
	"runtime"
	"testing"
	"time"
	"weak"

	"github.com/rxhystrix/rxhystrix/internal/clock"
	"github.com/rxhystrix/rxhystrix/internal/ctxend"
	"github.com/rxhystrix/rxhystrix/observable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// newTestCall returns a pool call of a command on h's registry, for tests
// that play its worker by hand.
func newTestCall(t *testing.T, h *harness) *poolCall[int, string] {
	t.Helper()
	c := New("GetUser", func(context.Context, int) (string, error) { return "", nil }, WithRegistry(h.reg))
	return c.getCall(context.Background(), c.k.config.Load(), 1)
}

// awaitAsync runs call.wait.until(deadline.UnixNano(), nil) on a new goroutine
// once the previous wait is over, and returns once the wait has published
// its deadline.
func awaitAsync(t *testing.T, h *harness, call *poolCall[int, string], deadline time.Time) <-chan bool {
	t.Helper()
	answered := make(chan bool, 1)
	go func() { answered <- call.wait.until(deadline.UnixNano(), nil) == wakeDone }()
	waitFor(t, "the caller to publish its deadline", func() bool { return call.wait.waitUntil.Load() == deadline.UnixNano() })
	return answered
}

// A pool caller's timer is armed for the first deadline and left armed
// when the run returns in time; a later caller with a later deadline
// leaves it alone, and when it fires it re-arms itself at that caller's
// deadline, which it then keeps exactly.
func TestPoolCallTimerFollowsTheWaitingCallersDeadline(t *testing.T) {
	h := newHarness(t)
	call := newTestCall(t, h)
	first := harnessStart.Add(100 * time.Millisecond)
	call.wait.wake <- wakeDone // the run returned before its caller waited
	require.Equal(t, wakeDone, call.wait.until(first.UnixNano(), nil))
	assert.Equal(t, first.UnixNano(), call.wait.armedFor.Load(), "armed for the first deadline")
	assert.Zero(t, call.wait.waitUntil.Load(), "no caller waits")

	h.clock.Advance(60 * time.Millisecond)
	second := h.clock.Now().Add(100 * time.Millisecond)
	answered := awaitAsync(t, h, call, second)
	assert.Equal(t, first.UnixNano(), call.wait.armedFor.Load(), "a later deadline leaves the timer alone")

	h.clock.Set(first)
	assert.Equal(t, second.UnixNano(), call.wait.armedFor.Load(), "fired, it re-armed at the waiting caller's deadline")
	select {
	case <-answered:
		t.Fatal("the caller left before its deadline")
	default:
	}
	h.clock.Set(second.Add(-time.Nanosecond))
	select {
	case <-answered:
		t.Fatal("the caller left before its deadline")
	default:
	}
	h.clock.Set(second)
	assert.False(t, recv(t, answered, "the caller to time out"), "timed out")
	assert.Zero(t, call.wait.waitUntil.Load())
	assert.Empty(t, call.wait.wake, "the timer's wake was taken")
}

// A caller whose deadline comes before the one the timer is armed for
// (the timeout was shortened live) re-arms it.
func TestPoolCallTimerIsBroughtForwardForAnEarlierDeadline(t *testing.T) {
	h := newHarness(t)
	call := newTestCall(t, h)
	call.wait.wake <- wakeDone
	require.Equal(t, wakeDone, call.wait.until(harnessStart.Add(time.Second).UnixNano(), nil))

	earlier := harnessStart.Add(20 * time.Millisecond)
	answered := awaitAsync(t, h, call, earlier)
	// The caller publishes its deadline first, then arms the timer.
	waitFor(t, "the timer to be armed for the earlier deadline", func() bool { return call.wait.armedFor.Load() == earlier.UnixNano() })
	h.clock.Set(earlier)
	assert.False(t, recv(t, answered, "the caller to time out"))
	assert.Empty(t, call.wait.wake)
}

// A caller whose deadline has passed by the time it waits leaves at once,
// with the run's answer if it is there.
func TestPoolCallDeadlineAlreadyPassed(t *testing.T) {
	h := newHarness(t)
	call := newTestCall(t, h)
	past := harnessStart.Add(-time.Millisecond)
	assert.Equal(t, wakeTimeUp, call.wait.until(past.UnixNano(), nil), "no answer: timed out")
	assert.Zero(t, call.wait.waitUntil.Load())
	call.wait.wake <- wakeDone
	assert.Equal(t, wakeDone, call.wait.until(past.UnixNano(), nil), "answered")
	assert.Empty(t, call.wait.wake)
	h.clock.Advance(time.Millisecond) // the timer fires with no caller waiting
	assert.Empty(t, call.wait.wake, "a timer that finds no caller wakes none")
	assert.Zero(t, call.wait.armedFor.Load(), "and stays unarmed")
}

// The worker's answer and the timer racing for the same wait: the caller
// reports one, and every wake sent is accounted for (the worker's is left
// for abandon when the caller timed out), so the call is clean for reuse.
func TestPoolCallAnswerRacingTheTimer(t *testing.T) {
	h := newHarness(t)
	call := newTestCall(t, h)
	for i := range 200 {
		deadline := h.clock.Now().Add(time.Millisecond)
		answered := awaitAsync(t, h, call, deadline)
		worker := make(chan struct{})
		go func() {
			call.wait.wake <- wakeDone
			close(worker)
		}()
		if i%2 == 0 {
			h.clock.Advance(time.Millisecond)
		} else {
			recv(t, worker, "the worker's answer")
			h.clock.Advance(time.Millisecond)
		}
		recv(t, worker, "the worker's answer")
		if recv(t, answered, "the caller") {
			assert.Empty(t, call.wait.wake, "round %d: answered, and no wake left", i)
		} else {
			require.Len(t, call.wait.wake, 1, "round %d: timed out, the worker's answer left for abandon", i)
			assert.Equal(t, wakeDone, <-call.wait.wake)
		}
		assert.Zero(t, call.wait.waitUntil.Load(), "round %d", i)
	}
}

// The caller's context ending, the worker's answer and the timer racing
// for the same wait: the caller reports one of the three, and every wake
// sent is accounted for (the worker's is left for abandon when the caller
// left or timed out), so the call is clean for reuse. A context of
// package context is waited on through its Done channel; one of package
// observable tells its end to the wait (ctxend.Notifier).
func TestPoolCallCallerLeavingRacingTheAnswerAndTheTimer(t *testing.T) {
	for _, kind := range []struct {
		name string
		ctx  func(t *testing.T) (context.Context, func())
	}{
		{"context", func(*testing.T) (context.Context, func()) { return context.WithCancel(context.Background()) }},
		{"observable", subscriptionContext},
	} {
		t.Run(kind.name, func(t *testing.T) {
			h := newHarness(t)
			call := newTestCall(t, h)
			for i := range 300 {
				deadline := h.clock.Now().Add(time.Millisecond)
				ctx, leave := kind.ctx(t)
				reason := make(chan wakeReason, 1)
				go func() { reason <- call.wait.until(deadline.UnixNano(), ctx) }()
				waitFor(t, "the caller to publish its deadline", func() bool { return call.wait.waitUntil.Load() == deadline.UnixNano() })
				worker := make(chan struct{})
				go func() {
					call.wait.wake <- wakeDone
					close(worker)
				}()
				switch i % 3 {
				case 0:
					leave()
					h.clock.Advance(time.Millisecond)
				case 1:
					h.clock.Advance(time.Millisecond)
					leave()
				default:
					leave()
				}
				recv(t, worker, "the worker's answer")
				r := recv(t, reason, "the caller")
				if r == wakeDone {
					assert.Empty(t, call.wait.wake, "round %d: answered, and no wake left", i)
				} else {
					require.Len(t, call.wait.wake, 1, "round %d: %v, the worker's answer left for abandon", i, r)
					assert.Equal(t, wakeDone, <-call.wait.wake)
				}
				assert.Zero(t, call.wait.waitUntil.Load(), "round %d", i)
				if i%3 == 2 {
					h.clock.Advance(time.Millisecond) // the timer, armed, finds no caller
					assert.Empty(t, call.wait.wake, "round %d: a timer that finds no caller wakes none", i)
				}
			}
		})
	}
}

// A caller waiting under an observable subscription's context leaves when
// it is unsubscribed, and the worker's later answer is left for abandon.
func TestPoolCallCallerLeavesWhenItsSubscriptionEnds(t *testing.T) {
	h := newHarness(t)
	call := newTestCall(t, h)
	ctx, leave := subscriptionContext(t)
	reason := make(chan wakeReason, 1)
	deadline := h.clock.Now().Add(time.Second)
	go func() { reason <- call.wait.until(deadline.UnixNano(), ctx) }()
	waitFor(t, "the caller to publish its deadline", func() bool { return call.wait.waitUntil.Load() == deadline.UnixNano() })
	leave()
	assert.Equal(t, wakeLeft, recv(t, reason, "the caller leaving"))
	call.wait.wake <- wakeDone
	h.clock.Advance(time.Second)
	require.Len(t, call.wait.wake, 1, "the timer woke a caller that had left")
}

// subscriptionContext returns the context an observable subscription
// gives its source, which can tell its end to one function
// (ctxend.Notifier), and the subscription's Unsubscribe.
func subscriptionContext(t *testing.T) (context.Context, func()) {
	t.Helper()
	got := make(chan context.Context, 1)
	sub := observable.Create(func(ctx context.Context, _ observable.Observer[int]) { got <- ctx }).
		Subscribe(context.Background(), ignore[int]{})
	ctx := <-got
	n, ok := ctx.(ctxend.Notifier)
	require.True(t, ok, "a subscription's context is a ctxend.Notifier")
	f := func() {}
	require.True(t, n.NotifyEnd(&f), "a subscription's context takes a function")
	require.True(t, n.StopNotify(&f))
	return ctx, sub.Unsubscribe
}

// A timer left armed after a run returned in time holds nothing of its
// call: a command nobody refers to any more can be collected before the
// timer fires, an hour later here.
func TestArmedPoolCallTimerKeepsNoCommandAlive(t *testing.T) {
	r := NewRegistry()
	t.Cleanup(r.Close)
	c := New("GetUser", func(context.Context, int) (string, error) { return "ok", nil },
		WithRegistry(r), WithConfig(Config{Pool: "Users", Timeout: time.Hour}))
	_, err := c.Execute(context.Background(), 1)
	require.NoError(t, err)
	ref := weak.Make(c)
	c = nil
	for range 5 { // sync.Pool lets go of what it holds over two collections
		runtime.GC()
	}
	assert.Nil(t, ref.Value(), "the command is still reachable")
}

// A wait with no deadline (math.MaxInt64, which until says arms no
// timer) during which the timer of an earlier, timed use of the callWait
// fires leaves the timer unarmed: re-arming it at that deadline would set
// it for the year 2262, keeping the callWait, and the timer, for ever
// once its call is gone, where the type's doc promises at most one
// timeout after the call's last use.
func TestCallWaitWithoutDeadlineDoesNotRearmTheTimer(t *testing.T) {
	mc := clock.NewManual(requestT0)
	w := newCallWait(mc)

	w.wake <- wakeDone // the run returned in time
	assert.Equal(t, wakeDone, w.until(mc.Now().Add(time.Second).UnixNano(), nil))
	assert.Equal(t, 1, mc.Pending(), "the timer stays armed for the timed use")

	r := make(chan wakeReason, 1)
	go func() { r <- w.until(math.MaxInt64, nil) }()
	waitFor(t, "the untimed wait", func() bool { return w.waitUntil.Load() == math.MaxInt64 })
	mc.Advance(2 * time.Second) // the earlier use's timer fires during the wait
	w.wake <- wakeDone
	assert.Equal(t, wakeDone, recv(t, r, "the wait's end"))
	assert.Equal(t, 0, mc.Pending(), "no timer armed for a deadline that never comes")
}
