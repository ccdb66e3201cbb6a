package command

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// newTestCall returns a pool call of a command on h's registry, for tests
// that play its worker by hand.
func newTestCall(t *testing.T, h *harness) *poolCall[int, string] {
	t.Helper()
	c := New("GetUser", func(context.Context, int) (string, error) { return "", nil }, WithRegistry(h.reg))
	return c.getCall(context.Background(), 1)
}

// awaitAsync runs call.awaitUntil(deadline) on a new goroutine once the
// previous wait is over, and returns once the wait has published its
// deadline.
func awaitAsync(t *testing.T, h *harness, call *poolCall[int, string], deadline time.Time) <-chan bool {
	t.Helper()
	answered := make(chan bool, 1)
	go func() { answered <- call.awaitUntil(h.clock, deadline) }()
	waitFor(t, "the caller to publish its deadline", func() bool { return call.waitUntil.Load() == deadline.UnixNano() })
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
	call.wake <- wakeDone // the run returned before its caller waited
	require.True(t, call.awaitUntil(h.clock, first))
	assert.Equal(t, first.UnixNano(), call.armedFor.Load(), "armed for the first deadline")
	assert.Zero(t, call.waitUntil.Load(), "no caller waits")

	h.clock.Advance(60 * time.Millisecond)
	second := h.clock.Now().Add(100 * time.Millisecond)
	answered := awaitAsync(t, h, call, second)
	assert.Equal(t, first.UnixNano(), call.armedFor.Load(), "a later deadline leaves the timer alone")

	h.clock.Set(first)
	assert.Equal(t, second.UnixNano(), call.armedFor.Load(), "fired, it re-armed at the waiting caller's deadline")
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
	assert.Zero(t, call.waitUntil.Load())
	assert.Empty(t, call.wake, "the timer's wake was taken")
}

// A caller whose deadline comes before the one the timer is armed for
// (the timeout was shortened live) re-arms it.
func TestPoolCallTimerIsBroughtForwardForAnEarlierDeadline(t *testing.T) {
	h := newHarness(t)
	call := newTestCall(t, h)
	call.wake <- wakeDone
	require.True(t, call.awaitUntil(h.clock, harnessStart.Add(time.Second)))

	earlier := harnessStart.Add(20 * time.Millisecond)
	answered := awaitAsync(t, h, call, earlier)
	assert.Equal(t, earlier.UnixNano(), call.armedFor.Load())
	h.clock.Set(earlier)
	assert.False(t, recv(t, answered, "the caller to time out"))
	assert.Empty(t, call.wake)
}

// A caller whose deadline has passed by the time it waits leaves at once,
// with the run's answer if it is there.
func TestPoolCallDeadlineAlreadyPassed(t *testing.T) {
	h := newHarness(t)
	call := newTestCall(t, h)
	past := harnessStart.Add(-time.Millisecond)
	assert.False(t, call.awaitUntil(h.clock, past), "no answer: timed out")
	assert.Zero(t, call.waitUntil.Load())
	call.wake <- wakeDone
	assert.True(t, call.awaitUntil(h.clock, past), "answered")
	assert.Empty(t, call.wake)
	h.clock.Advance(time.Millisecond) // the timer fires with no caller waiting
	assert.Empty(t, call.wake, "a timer that finds no caller wakes none")
	assert.Zero(t, call.armedFor.Load(), "and stays unarmed")
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
			call.wake <- wakeDone
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
			assert.Empty(t, call.wake, "round %d: answered, and no wake left", i)
		} else {
			require.Len(t, call.wake, 1, "round %d: timed out, the worker's answer left for abandon", i)
			assert.Equal(t, wakeDone, <-call.wake)
		}
		assert.Zero(t, call.waitUntil.Load(), "round %d", i)
	}
}
