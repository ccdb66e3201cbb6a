package command

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/breaker"
)

// The latencies a Completion carries are Hystrix's, in every mode and
// isolation: ExecutionLatency is how long run ran (-1 when it did not
// run), TotalLatency how long the caller waited, the fallback's time
// included. The dashboard's latencyExecute and latencyTotal are made of
// them.
func TestCompletionLatencies(t *testing.T) {
	const ms = time.Millisecond
	cases := []struct {
		name             string
		cfg              Config
		runFor, fallback time.Duration // how long run and the fallback take
		fail             bool
		events           []string
		execution, total time.Duration
	}{
		{name: "a success", runFor: 20 * ms,
			events: evs("SUCCESS"), execution: 20 * ms, total: 20 * ms},
		{name: "a failure and its fallback", runFor: 20 * ms, fail: true, fallback: 5 * ms,
			events: evs("FAILURE", "FALLBACK_SUCCESS"), execution: 20 * ms, total: 25 * ms},
		{name: "a short-circuit and its fallback", cfg: Config{Breaker: breaker.Config{ForceOpen: true}}, fallback: 5 * ms,
			events: evs("SHORT_CIRCUITED", "FALLBACK_SUCCESS"), execution: -1, total: 5 * ms},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			forEachModeAndIsolation(t, func(t *testing.T, h *harness, m execMode, iso Isolation) {
				cfg := tc.cfg
				cfg.Isolation = iso
				c := New("GetUser", func(ctx context.Context, id int) (string, error) {
					h.clock.Advance(tc.runFor)
					if tc.fail {
						return "", errors.New("down")
					}
					return userName(id), nil
				}, WithRegistry(h.reg), WithConfig(cfg)).WithFallback(func(context.Context, int, error) (string, error) {
					h.clock.Advance(tc.fallback)
					return "anonymous", nil
				})
				_, err := m.exec(context.Background(), c, 1)
				require.NoError(t, err)
				done := h.completion()
				assert.Equal(t, tc.events, eventNames(done.Events))
				assert.Equal(t, tc.execution, done.ExecutionLatency, "ExecutionLatency")
				assert.Equal(t, tc.total, done.TotalLatency, "TotalLatency")
			})
		})
	}
}

// A caller that leaves while run runs is CANCELLED, with the time run had
// run by then as its ExecutionLatency.
func TestCancelledCompletionLatencies(t *testing.T) {
	for _, iso := range bothIsolations {
		t.Run(iso.String(), func(t *testing.T) {
			h := newHarness(t)
			g := newGate()
			defer g.release()
			c := New("GetUser", func(ctx context.Context, id int) (string, error) {
				return "", g.wait(ctx, true)
			}, WithRegistry(h.reg), WithConfig(Config{Isolation: iso}))
			ctx, cancel := context.WithCancel(context.Background())
			call := goCall(func() (string, error) { return c.Execute(ctx, 1) })
			g.arrived(t)
			h.clock.Advance(30 * time.Millisecond)
			cancel()
			res := awaitCall(t, call)
			require.ErrorIs(t, res.err, context.Canceled)
			done := h.completion()
			assert.Equal(t, evs("CANCELLED"), eventNames(done.Events))
			assert.True(t, done.Executed)
			assert.Equal(t, 30*time.Millisecond, done.ExecutionLatency, "ExecutionLatency")
			assert.Equal(t, 30*time.Millisecond, done.TotalLatency, "TotalLatency")
		})
	}
}

// A call that times out in a pool's queue never ran (ExecutionLatency -1)
// and waited its whole timeout (TotalLatency).
func TestQueuedTimeoutCompletionLatencies(t *testing.T) {
	h := newHarness(t)
	g := newGate()
	defer g.release()
	require.NoError(t, h.reg.ConfigurePool("Users", PoolConfig{CoreSize: 1, MaxQueueSize: 1}))
	// The holder ignores the end of its context, so that its worker is
	// still busy when the queued call's timeout comes.
	c := New("GetUser", func(ctx context.Context, id int) (string, error) {
		return "", g.wait(ctx, false)
	}, WithRegistry(h.reg), WithConfig(Config{Pool: "Users", Timeout: 50 * time.Millisecond}))
	holder := goCall(func() (string, error) { return c.Execute(context.Background(), 1) })
	g.arrived(t)
	queued := goCall(func() (string, error) { return c.Execute(context.Background(), 2) })
	h.waitQueued(t, "Users", 1)
	h.clock.Advance(50 * time.Millisecond)
	require.ErrorIs(t, awaitCall(t, holder).err, ErrTimeout)
	require.ErrorIs(t, awaitCall(t, queued).err, ErrTimeout)
	for range 2 {
		done := h.completion()
		if done.Executed {
			continue // the holder
		}
		assert.Equal(t, evs("TIMEOUT", "FALLBACK_MISSING"), eventNames(done.Events))
		assert.Equal(t, time.Duration(-1), done.ExecutionLatency, "ExecutionLatency")
		assert.Equal(t, 50*time.Millisecond, done.TotalLatency, "TotalLatency")
		g.release()
		h.waitIdle(t, "Users")
		return
	}
	t.Fatal("no Completion of the call that never ran")
}
