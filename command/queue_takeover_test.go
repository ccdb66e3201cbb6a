package command

import (
	"context"
	"testing"

	"github.com/rxhystrix/rxhystrix/internal/startgrace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// holdStarts keeps the work Queue and Observe hand over from starting on
// a goroutine of its own for the rest of the test, so that a Get or First
// made at once finds the execution unstarted, as one made within the
// starter's grace does, however long the caller is descheduled between
// the two calls.
func holdStarts(t *testing.T) { t.Cleanup(startgrace.Hold()) }

// A semaphore-isolated command with no timeout has nothing that could
// answer Queue's or Observe's subscriber before run returns, so the caller
// that waits at once runs the execution itself, as Execute does, and the
// goroutine started for it ends without running anything.
func TestWaitingCallerRunsAnUntimedSemaphoreExecution(t *testing.T) {
	modes := []struct {
		name string
		exec func(ctx context.Context, c *Command[int, int64]) (int64, error)
	}{
		{"Queue.Get", func(ctx context.Context, c *Command[int, int64]) (int64, error) {
			return c.Queue(ctx, 1).Get(ctx)
		}},
		{"Observe.First", func(ctx context.Context, c *Command[int, int64]) (int64, error) {
			return c.Observe(ctx, 1).First(ctx)
		}},
	}
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			holdStarts(t)
			h := newHarness(t)
			c := New("GetUser", func(context.Context, int) (int64, error) { return goroutineID(), nil },
				WithRegistry(h.reg), WithConfig(Config{Isolation: SemaphoreIsolation, Timeout: -1}))
			ranOn, err := m.exec(context.Background(), c)
			require.NoError(t, err)
			assert.Equal(t, evs("SUCCESS"), h.events())
			h.assertReleased("GetUser")
			assert.Equal(t, goroutineID(), ranOn, "run ran on the waiting caller's goroutine")
			h.noMoreCompletions()
		})
	}
}

// Cancelling a Future whose Get runs the execution ends run's context, as
// the end of Execute's context does: the execution is CANCELLED, and the
// Future fails with context.Canceled.
func TestCancelReachesAnExecutionItsGetRuns(t *testing.T) {
	h := newHarness(t)
	g := newGate()
	defer g.release()
	c := New("GetUser", func(ctx context.Context, id int) (string, error) {
		return "", g.wait(ctx, true)
	}, WithRegistry(h.reg), WithConfig(Config{Isolation: SemaphoreIsolation, Timeout: -1})).WithFallback(fallbackName)
	f := c.Queue(context.Background(), 1)
	call := goCall(func() (string, error) { return f.Get(context.Background()) })
	g.arrived(t)
	f.Cancel()
	res := awaitCall(t, call)
	assert.ErrorIs(t, res.err, context.Canceled)
	assert.Equal(t, evs("CANCELLED"), h.events())
	h.assertReleased("GetUser")
}

// With a timeout, the subscriber has the fallback at the timeout however
// long run takes, which a waiter running run could not give it: run
// stays on a goroutine of its own.
func TestWaitingCallerLeavesATimedExecutionToItsGoroutine(t *testing.T) {
	holdStarts(t)
	h := newHarness(t)
	c := New("GetUser", func(context.Context, int) (int64, error) { return goroutineID(), nil },
		WithRegistry(h.reg), WithConfig(Config{Isolation: SemaphoreIsolation}))
	ranOn, err := c.Queue(context.Background(), 1).Get(context.Background())
	require.NoError(t, err)
	assert.NotEqual(t, goroutineID(), ranOn)
}

// A caller that waits at once for a semaphore-isolated execution with a
// timeout takes it over all the same, as a pool caller waits for its
// worker: run is handed to a goroutine of its own, and the caller has the
// fallback at the timeout while run still runs, and runs it itself.
func TestWaitingCallerConcludesATimedSemaphoreExecution(t *testing.T) {
	holdStarts(t)
	h := newHarness(t)
	g := newGate()
	c := New("GetUser", func(ctx context.Context, _ int) (int64, error) {
		g.wait(ctx, false) // ignores its context: only the timeout answers
		return 0, nil
	}, WithRegistry(h.reg), WithConfig(Config{Isolation: SemaphoreIsolation})).
		WithFallback(func(context.Context, int, error) (int64, error) { return goroutineID(), nil })
	callerID := make(chan int64, 1)
	call := goCall(func() (int64, error) {
		callerID <- goroutineID()
		return c.Queue(context.Background(), 1).Get(context.Background())
	})
	g.arrived(t)
	h.clock.Advance(DefaultTimeout)
	res := awaitCall(t, call)
	g.release()
	require.NoError(t, res.err)
	assert.Equal(t, evs("TIMEOUT", "FALLBACK_SUCCESS"), h.events())
	h.assertReleased("GetUser")
	assert.Equal(t, <-callerID, res.v, "the fallback ran on the waiting caller's goroutine")
}
