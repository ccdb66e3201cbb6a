package command

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/breaker"
	"github.com/rxhystrix/rxhystrix/internal/clock"
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
	runCallersUntilReturned(t, callers, calls, func() { _, _ = c.Execute(context.Background(), 0) })
	assertEveryExecutionAccounted(t, clk, c.Metrics(), callers*calls)
}
