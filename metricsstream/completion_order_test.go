package metricsstream_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/internal/clock"
	"github.com/rxhystrix/rxhystrix/metricsstream"
)

// probeClock is a manual clock that calls probe, when set, on every Now.
type probeClock struct {
	*clock.Manual
	probe atomic.Pointer[func()]
}

func (c *probeClock) Now() time.Time {
	if p := c.probe.Load(); p != nil {
		(*p)()
	}
	return c.Manual.Now()
}

// An execution leaves the concurrent count only after it is recorded, as
// in Hystrix's markCommandDone: while MarkCompletion reads the clock to
// find the execution's bucket, the execution still counts as running, so a
// reader who waits for the count to reach 0 never reads counts without it.
func TestExecutionLeavesConcurrencyAfterItIsRecorded(t *testing.T) {
	clk := &probeClock{Manual: clock.NewManual(time.Unix(0, 0))}
	m := metricsstream.NewRegistry(clk).Command("k", metricsstream.Config{})
	c := metricsstream.Completion{CommandKey: "k", Executed: true, ConcurrencyAtStart: m.MarkStart()}
	c.Events.Add(metricsstream.Success, 1)
	require.Equal(t, int64(1), m.ConcurrentExecutions())

	var during []int64
	probe := func() { during = append(during, m.ConcurrentExecutions()) }
	clk.probe.Store(&probe)
	m.MarkCompletion(&c)
	clk.probe.Store(nil)

	require.NotEmpty(t, during, "MarkCompletion reads the clock for a completion without an End")
	for _, n := range during {
		assert.Equal(t, int64(1), n, "the execution is still running while it is being recorded")
	}
	assert.Equal(t, int64(0), m.ConcurrentExecutions())
	clk.Advance(time.Second)
	assert.Equal(t, int64(1), m.RollingCount(metricsstream.Success))
}
