package command

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// 30: with one fallback permit taken by a slow fallback, the next failure
// is FALLBACK_REJECTION: an *Error of FallbackRejectedFailure.
func TestFallbackSemaphore(t *testing.T) {
	forEachModeAndIsolation(t, func(t *testing.T, h *harness, m execMode, iso Isolation) {
		g := newGate()
		defer g.release()
		c := New("GetUser", failRun, WithRegistry(h.reg), WithConfig(Config{Isolation: iso, FallbackMaxConcurrentRequests: 1})).WithFallback(func(ctx context.Context, id int, err error) (string, error) {
			return "slow fallback", g.wait(ctx, true)
		})
		slow := goCall(func() (string, error) { return c.Execute(context.Background(), 1) })
		g.arrived(t)
		require.Equal(t, int64(1), h.fallbackPermits("GetUser"))

		_, err := m.exec(context.Background(), c, 2)
		assertCommandError(t, err, "GetUser", FallbackRejectedFailure, errBoom, ErrFallbackRejected)
		assert.ErrorIs(t, err, ErrFallbackRejected)
		assert.Equal(t, "GetUser fallback execution rejected", err.Error())
		assert.Equal(t, evs("FAILURE", "FALLBACK_REJECTION"), h.events())

		g.release()
		res := awaitCall(t, slow)
		require.NoError(t, res.err)
		assert.Equal(t, "slow fallback", res.v)
		assert.Equal(t, evs("FAILURE", "FALLBACK_SUCCESS"), h.events())
		h.assertReleased("GetUser")
	})
}

// 31: a semaphore of one permit, taken: the next execution is rejected
// without running and without starting anything.
func TestExecutionSemaphoreWithExecution(t *testing.T) {
	forEachMode(t, func(t *testing.T, h *harness, m execMode) {
		g := newGate()
		defer g.release()
		c := New("GetUser", func(ctx context.Context, id int) (string, error) {
			return "held", g.wait(ctx, true)
		}, WithRegistry(h.reg), WithConfig(Config{Isolation: SemaphoreIsolation, MaxConcurrentRequests: 1, Timeout: -1}))
		holder := goCall(func() (string, error) { return c.Execute(context.Background(), 1) })
		g.arrived(t)

		_, err := m.exec(context.Background(), c, 2)
		assertCommandError(t, err, "GetUser", SemaphoreRejectedFailure, ErrSemaphoreRejected, ErrFallbackMissing)
		assert.Equal(t, "GetUser could not acquire a semaphore for execution and no fallback available", err.Error())
		done := h.completion()
		assert.Equal(t, evs("SEMAPHORE_REJECTED", "FALLBACK_MISSING"), eventNames(done.Events))
		assert.False(t, done.Executed, "isExecutedInThread() == false: it never ran")
		assert.Empty(t, g.entered)

		g.release()
		require.NoError(t, awaitCall(t, holder).err)
		assert.Equal(t, evs("SUCCESS"), h.events())
		h.assertReleased("GetUser")
	})
}

// 32: commands of one key share one semaphore: of six concurrent
// executions with three permits, three run and three are rejected; every
// permit is back afterwards, and another key's semaphore is untouched.
func TestSemaphorePermitsInUse(t *testing.T) {
	forEachMode(t, func(t *testing.T, h *harness, m execMode) {
		g := newGate()
		defer g.release()
		cfg := WithConfig(Config{Isolation: SemaphoreIsolation, MaxConcurrentRequests: 3, Timeout: -1})
		run := func(ctx context.Context, id int) (string, error) { return "ran", g.wait(ctx, true) }
		one := New("Shared", run, WithRegistry(h.reg), cfg).WithFallback(fallbackName)
		two := New("Shared", run, WithRegistry(h.reg), cfg).WithFallback(fallbackName)
		other := New("Other", succeedRun, WithRegistry(h.reg), WithConfig(Config{Isolation: SemaphoreIsolation, MaxConcurrentRequests: 1}))

		var calls []<-chan callResult[string]
		for i := range 6 {
			c := one
			if i%2 == 1 {
				c = two
			}
			calls = append(calls, goCall(func() (string, error) { return m.exec(context.Background(), c, i) }))
		}
		rejected := 0
		for range 3 {
			g.arrived(t)
		}
		for range 3 {
			assert.Equal(t, evs("SEMAPHORE_REJECTED", "FALLBACK_SUCCESS"), h.events())
			rejected++
		}
		assert.Equal(t, int64(3), h.execPermits("Shared"))
		assert.Equal(t, int64(3), g.running.Load())

		v, err := other.Execute(context.Background(), 1)
		require.NoError(t, err)
		assert.Equal(t, "user-1", v, "another key has its own semaphore")
		h.completion()

		g.release()
		var values []string
		for _, call := range calls {
			res := awaitCall(t, call)
			require.NoError(t, res.err)
			values = append(values, res.v)
		}
		assert.ElementsMatch(t, []string{"ran", "ran", "ran", "anonymous", "anonymous", "anonymous"}, values)
		for range 3 {
			assert.Equal(t, evs("SUCCESS"), h.events())
		}
		assert.Equal(t, 3, rejected)
		h.assertReleased("Shared")
		h.assertReleased("Other")
	})
}
