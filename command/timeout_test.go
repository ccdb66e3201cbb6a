package command

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	ms "github.com/rxhystrix/rxhystrix/metricsstream"
)

// 23: a run that outlives the timeout, with no fallback: the caller gets
// an *Error of TimeoutFailure, and TIMEOUT and FALLBACK_MISSING are
// recorded.
func TestExecutionTimeoutWithNoFallback(t *testing.T) {
	forEachModeAndIsolation(t, func(t *testing.T, h *harness, m execMode, iso Isolation) {
		g := newGate()
		defer g.release()
		c := New("GetUser", g.runLate, WithRegistry(h.reg), WithConfig(Config{Isolation: iso, Timeout: 50 * time.Millisecond}))
		call := goCall(func() (string, error) { return m.exec(context.Background(), c, 1) })
		runCtx := g.arrived(t)
		h.clock.Advance(49 * time.Millisecond)
		notReturned(t, call)
		h.clock.Advance(time.Millisecond)
		res := awaitCall(t, call)
		assert.Empty(t, res.v)
		ce := assertCommandError(t, res.err, "GetUser", TimeoutFailure, ErrTimeout, ErrFallbackMissing)
		assert.Same(t, ErrTimeout, ce.Cause)
		assert.ErrorIs(t, res.err, ErrTimeout)
		assert.Equal(t, "GetUser timed-out and no fallback available", res.err.Error())
		recv(t, runCtx.Done(), "run's context to be cancelled at the timeout")
		done := h.completion()
		assert.Equal(t, evs("TIMEOUT", "FALLBACK_MISSING"), eventNames(done.Events))
		assert.Equal(t, 50*time.Millisecond, done.TotalLatency, "what the caller waited")
		assert.Equal(t, 50*time.Millisecond, done.ExecutionLatency)
		assert.True(t, done.Executed)
		h.assertReleased("GetUser")
	})
}

// 24: a timed-out run with a fallback: the fallback's value, TIMEOUT and
// FALLBACK_SUCCESS; one timeout does not open the breaker.
func TestExecutionTimeoutWithFallback(t *testing.T) {
	forEachModeAndIsolation(t, func(t *testing.T, h *harness, m execMode, iso Isolation) {
		g := newGate()
		defer g.release()
		var seen error
		c := New("GetUser", g.runLate, WithRegistry(h.reg), WithConfig(Config{Isolation: iso})).WithFallback(func(ctx context.Context, id int, err error) (string, error) {
			seen = err
			return "anonymous", nil
		})
		call := goCall(func() (string, error) { return m.exec(context.Background(), c, 1) })
		g.arrived(t)
		h.clock.Advance(DefaultTimeout)
		res := awaitCall(t, call)
		require.NoError(t, res.err)
		assert.Equal(t, "anonymous", res.v)
		assertCommandError(t, seen, "GetUser", TimeoutFailure, ErrTimeout, nil)
		assert.Equal(t, evs("TIMEOUT", "FALLBACK_SUCCESS"), h.events())
		assert.False(t, c.Breaker().IsOpen())
		h.assertReleased("GetUser")
	})
}

// 25: a pool-isolated run that ignores its context and returns a value
// after the timeout: the caller has its fallback at the timeout, the late
// value is dropped, and no SUCCESS is ever counted.
func TestCountersOnExecutionTimeout(t *testing.T) {
	forEachMode(t, func(t *testing.T, h *harness, m execMode) {
		g := newGate()
		defer g.release()
		returned := make(chan struct{})
		c := New("GetUser", func(ctx context.Context, id int) (string, error) {
			defer close(returned)
			g.wait(ctx, false)
			return "late", nil
		}, WithRegistry(h.reg)).WithFallback(fallbackName)
		call := goCall(func() (string, error) { return m.exec(context.Background(), c, 1) })
		g.arrived(t)
		h.clock.Advance(DefaultTimeout)
		res := awaitCall(t, call)
		require.NoError(t, res.err)
		assert.Equal(t, "anonymous", res.v, "the caller returns at the timeout")
		assert.Equal(t, evs("TIMEOUT", "FALLBACK_SUCCESS"), h.events())

		g.release()
		recv(t, returned, "run to return")
		h.closeBuckets("GetUser")
		assert.Zero(t, c.Metrics().CumulativeCount(ms.Success))
		assert.Equal(t, int64(1), c.Metrics().CumulativeCount(ms.Timeout))
		assert.Equal(t, int64(1), c.Metrics().CumulativeCount(ms.FallbackSuccess))
		h.noMoreCompletions()
		h.waitIdle(t, "GetUser")
	})
}

// Under semaphore isolation run runs on the caller's goroutine: as in
// Hystrix, a run that ignores its context holds the caller until it
// returns, and the execution is then recorded as timed out. Queue and
// Observe are the exceptions: they run the command on a goroutine of its
// own, so that they never block their caller, and their subscribers have
// the fallback's value at the timeout.
func TestSemaphoreTimeoutHoldsTheCallerUntilRunReturns(t *testing.T) {
	forEachMode(t, func(t *testing.T, h *harness, m execMode) {
		g := newGate()
		defer g.release()
		c := New("GetUser", func(ctx context.Context, id int) (string, error) {
			g.wait(ctx, false)
			return "late", nil
		}, WithRegistry(h.reg), WithConfig(Config{Isolation: SemaphoreIsolation})).WithFallback(fallbackName)
		call := goCall(func() (string, error) { return m.exec(context.Background(), c, 1) })
		runCtx := g.arrived(t)
		h.clock.Advance(DefaultTimeout)
		recv(t, runCtx.Done(), "run's context to end at the timeout")
		var res callResult[string]
		if m.name == "Queue.Get" || m.name == "Observe.Last" {
			res = awaitCall(t, call)
			g.release()
		} else {
			notReturned(t, call)
			g.release()
			res = awaitCall(t, call)
		}
		require.NoError(t, res.err)
		assert.Equal(t, "anonymous", res.v)
		assert.Equal(t, evs("TIMEOUT", "FALLBACK_SUCCESS"), h.events())
		h.assertReleased("GetUser")
	})
}

// 29: a negative Timeout disables the timeout: no timer is armed, and a
// run that takes an hour succeeds.
func TestDisabledTimeoutWorks(t *testing.T) {
	forEachModeAndIsolation(t, func(t *testing.T, h *harness, m execMode, iso Isolation) {
		g := newGate()
		defer g.release()
		c := New("GetUser", func(ctx context.Context, id int) (string, error) {
			return "slow but fine", g.wait(ctx, true)
		}, WithRegistry(h.reg), WithConfig(Config{Isolation: iso, Timeout: -1}))
		timers := h.clock.Pending()
		call := goCall(func() (string, error) { return m.exec(context.Background(), c, 1) })
		g.arrived(t)
		assert.Equal(t, timers, h.clock.Pending(), "no timeout timer armed")
		h.clock.Advance(time.Hour)
		notReturned(t, call)
		g.release()
		res := awaitCall(t, call)
		require.NoError(t, res.err)
		assert.Equal(t, "slow but fine", res.v)
		assert.Equal(t, evs("SUCCESS"), h.events())
	})
}

// 44: at the timeout run's context is cancelled (Go's interruption), so a
// run that honours it gives its worker back at once.
func TestInterruptFutureOnTimeout(t *testing.T) {
	forEachMode(t, func(t *testing.T, h *harness, m execMode) {
		g := newGate()
		defer g.release()
		runErr := make(chan error, 1)
		c := New("GetUser", func(ctx context.Context, id int) (string, error) {
			err := g.wait(ctx, true)
			runErr <- err
			return "", err
		}, WithRegistry(h.reg), WithConfig(Config{Timeout: 100 * time.Millisecond}))
		call := goCall(func() (string, error) { return m.exec(context.Background(), c, 1) })
		g.arrived(t)
		h.clock.Advance(100 * time.Millisecond)
		res := awaitCall(t, call)
		assert.ErrorIs(t, res.err, ErrTimeout)
		assert.Error(t, recv(t, runErr, "run to see its context end"))
		assert.Equal(t, evs("TIMEOUT", "FALLBACK_MISSING"), h.events())
		h.waitIdle(t, "GetUser")
	})
}

// The timeout counts from the start of the execution, so time spent
// waiting in the pool's queue counts (Hystrix arms its timer before the
// thread-pool hop): a run that never leaves the queue times out, is
// taken out of the queue and never runs.
func TestTimeoutCountsTimeInQueue(t *testing.T) {
	forEachMode(t, func(t *testing.T, h *harness, m execMode) {
		require.NoError(t, h.reg.ConfigurePool("Users", PoolConfig{CoreSize: 1, MaxQueueSize: 5}))
		g := newGate()
		defer g.release()
		var runs []int
		c := New("GetUser", func(ctx context.Context, id int) (string, error) {
			runs = append(runs, id)
			g.wait(ctx, false)
			return "late", nil
		}, WithRegistry(h.reg), WithConfig(Config{Pool: "Users"})).WithFallback(fallbackName)
		first := goCall(func() (string, error) { return m.exec(context.Background(), c, 1) })
		g.arrived(t)
		h.clock.Advance(500 * time.Millisecond)
		second := goCall(func() (string, error) { return m.exec(context.Background(), c, 2) })
		h.waitQueued(t, "Users", 1)

		h.clock.Advance(500 * time.Millisecond)
		res := awaitCall(t, first)
		assert.Equal(t, "anonymous", res.v)
		assert.Equal(t, evs("TIMEOUT", "FALLBACK_SUCCESS"), h.events())
		running, queued := h.pool("Users").size()
		assert.Equal(t, 1, running, "the timed-out run keeps its slot")
		assert.Equal(t, 1, queued)

		h.clock.Advance(500 * time.Millisecond)
		res = awaitCall(t, second)
		assert.Equal(t, "anonymous", res.v)
		done := h.completion()
		assert.Equal(t, evs("TIMEOUT", "FALLBACK_SUCCESS"), eventNames(done.Events))
		assert.False(t, done.Executed, "the queued run never started")
		assert.Equal(t, time.Duration(-1), done.ExecutionLatency)
		h.waitQueued(t, "Users", 0)

		g.release()
		h.waitIdle(t, "Users")
		assert.Equal(t, []int{1}, runs, "only the first run ever ran")
	})
}
