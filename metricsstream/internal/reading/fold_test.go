package reading

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/rxhystrix/rxhystrix/internal/clock"
	"github.com/rxhystrix/rxhystrix/metricsstream"
)

// A closed percentile bucket is added once, however many collections see
// it; the totals of a command a collection did not add are forgotten.
func TestFoldsAddEachBucketOnce(t *testing.T) {
	mc := clock.NewManual(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	reg := metricsstream.NewRegistry(mc)
	m := reg.Command("C", metricsstream.Config{})
	c := metricsstream.Completion{Executed: true, ExecutionLatency: 20 * time.Millisecond, TotalLatency: 30 * time.Millisecond}
	c.Events.Add(metricsstream.Success, 1)
	m.MarkCompletion(&c)
	mc.Advance(10 * time.Second)

	f := NewFolds([]float64{.025, 1})
	for range 3 {
		f.Begin(mc.Now())
		got := f.Add(m)
		f.End()
		assert.Equal(t, uint64(1), got.Execution.Count)
		assert.Equal(t, []uint64{1, 1}, got.Execution.AtOrBelow)
		assert.Equal(t, []uint64{0, 1}, got.Total.AtOrBelow, "30ms is above 25ms")
		assert.InDelta(t, .02, got.Execution.Sum, .0001)
	}
	f.Begin(mc.Now())
	f.End()
	assert.Equal(t, 1, f.Len(), "kept while the buckets folded are in the window")
	mc.Advance(60 * time.Second)
	f.Begin(mc.Now())
	f.End()
	assert.Zero(t, f.Len())
}

func TestCheckBounds(t *testing.T) {
	assert.NoError(t, CheckBounds(DefaultLatencyBounds()))
	assert.EqualError(t, CheckBounds(nil), "no bucket bounds")
	assert.EqualError(t, CheckBounds([]float64{-1}), "bound 0 (-1) is not a positive finite number of seconds")
	assert.EqualError(t, CheckBounds([]float64{1, 1}), "bound 1 (1) does not exceed bound 0 (1)")
}
