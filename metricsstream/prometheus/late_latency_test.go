package prometheus

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/internal/clock"
	"github.com/rxhystrix/rxhystrix/metricsstream"
)

// histogramCount returns the sample count of the command's execution
// latency histogram, and its SUCCESS counter, as one scrape reports them.
func histogramCount(t *testing.T, c *Collector, command string) (count uint64, successes float64) {
	t.Helper()
	for _, mf := range gather(t, c) {
		for _, m := range mf.GetMetric() {
			l := labels(m.GetLabel())
			if l["command"] != command {
				continue
			}
			switch mf.GetName() {
			case "rxhystrix_command_execution_latency_seconds":
				count = m.GetHistogram().GetSampleCount()
			case "rxhystrix_command_events_total":
				if l["event"] == "SUCCESS" {
					successes = m.GetCounter().GetValue()
				}
			}
		}
	}
	return count, successes
}

// A recorder that read the clock before a percentile bucket closed and
// records after a scrape folded that bucket (metricsstream counts such a
// late latency in the bucket it ended in, see latencySnapshot) still
// counts in the cumulative histogram, as it does in the event counters:
// the histogram's count never falls behind the executions that ran.
func TestCollectorCountsALatencyRecordedLateIntoAFoldedBucket(t *testing.T) {
	mc := clock.NewManual(t0)
	reg := metricsstream.NewRegistry(mc)
	m := reg.Command("Late", metricsstream.Config{})
	c := NewCollector(reg)

	record(m, 20*time.Millisecond, metricsstream.Success) // at t0, percentile bucket 0
	mc.Advance(10 * time.Second)                          // bucket 0 closes
	count, successes := histogramCount(t, c, "Late")
	assert.Equal(t, uint64(1), count)
	assert.Equal(t, 1.0, successes)

	// An execution that read the clock a moment before bucket 0 closed is
	// recorded now, after the scrape: in bucket 0.
	late := metricsstream.Completion{CommandKey: "Late", Executed: true,
		ExecutionLatency: 30 * time.Millisecond, TotalLatency: 31 * time.Millisecond, End: t0.Add(10*time.Second - time.Nanosecond)}
	late.Events.Add(metricsstream.Success, 1)
	m.MarkCompletion(&late)
	mc.Advance(10 * time.Second)
	count, successes = histogramCount(t, c, "Late")
	assert.Equal(t, 2.0, successes, "the event counters count the late execution")
	assert.Equal(t, uint64(2), count, "the histogram counts it too")
}

// histogramSum returns the sample sum of the command's execution latency
// histogram, as one scrape reports it.
func histogramSum(t *testing.T, c *Collector, command string) float64 {
	t.Helper()
	for _, mf := range gather(t, c) {
		if mf.GetName() != "rxhystrix_command_execution_latency_seconds" {
			continue
		}
		for _, m := range mf.GetMetric() {
			if labels(m.GetLabel())["command"] == command {
				return m.GetHistogram().GetSampleSum()
			}
		}
	}
	t.Fatalf("no histogram of %s", command)
	return 0
}

// A histogram's _sum is a counter to Prometheus (rate() reads any fall
// as a reset): latencies recorded late into a bucket already folded
// never make it fall, though the bucket's mean, rounded, times its count
// may be less than before.
func TestCollectorHistogramSumNeverFallsWhenAFoldedBucketGrows(t *testing.T) {
	mc := clock.NewManual(t0)
	reg := metricsstream.NewRegistry(mc)
	m := reg.Command("Sum", metricsstream.Config{})
	c := NewCollector(reg)

	done := func(latency time.Duration, end time.Time) {
		x := metricsstream.Completion{CommandKey: "Sum", Executed: true,
			ExecutionLatency: latency, TotalLatency: latency, End: end}
		x.Events.Add(metricsstream.Success, 1)
		m.MarkCompletion(&x)
	}
	done(time.Microsecond, t0)
	mc.Advance(10 * time.Second) // bucket 0 closes
	before := histogramSum(t, c, "Sum")

	// Two executions of no measurable latency that read the clock just
	// before bucket 0 closed are recorded now, into it.
	done(0, t0.Add(10*time.Second-time.Nanosecond))
	done(0, t0.Add(10*time.Second-time.Nanosecond))
	mc.Advance(10 * time.Second)
	after := histogramSum(t, c, "Sum")
	require.GreaterOrEqual(t, after, before, "the histogram's _sum fell: a counter reset to Prometheus")
}
