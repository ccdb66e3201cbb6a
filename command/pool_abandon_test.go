package command

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/breaker"
	"github.com/rxhystrix/rxhystrix/internal/clock"
	"github.com/rxhystrix/rxhystrix/metricsstream"
)

// A caller that leaves at its timeout while its run, just started on a
// worker, returns at once must still return: it used to wait, spinning,
// for the start the worker recorded in a call the worker had already
// recycled. Each run here moves the manual clock past its own deadline and
// returns, so that the caller's timeout and the worker's return race.
func TestPoolCallerTimingOutAsItsRunReturnsReturns(t *testing.T) {
	const timeout = 10 * time.Millisecond
	clk := clock.NewManual(time.Unix(0, 0))
	r := NewRegistry(WithClock(clk))
	defer r.Close()
	require.NoError(t, r.ConfigurePool("p", PoolConfig{CoreSize: 4}))
	c := New("racing", func(context.Context, int) (int, error) {
		clk.Advance(timeout)
		return 1, nil
	}, WithRegistry(r), WithConfig(Config{Pool: "p", Timeout: timeout, Breaker: breaker.Config{Disabled: true}}))

	const callers, calls = 4, 5000
	done := make(chan struct{})
	go func() {
		defer close(done)
		var wg sync.WaitGroup
		for range callers {
			wg.Go(func() {
				for range calls {
					_, _ = c.Execute(context.Background(), 0)
				}
			})
		}
		wg.Wait()
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("an execution never returned")
	}
	assert.Zero(t, c.Metrics().ConcurrentExecutions())
	clk.Advance(time.Minute)
	counts := c.Metrics().CumulativeCounts()
	assert.Equal(t, int64(callers*calls),
		counts[metricsstream.Success]+counts[metricsstream.Timeout]+counts[metricsstream.PoolRejected],
		"each execution succeeded, timed out, or found its worker not yet free")
}
