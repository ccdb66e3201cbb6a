package metricsstream

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// Recorders find the current buckets once per bucket and processor (see
// recordCache); what they record must be what the buckets would hold
// without that: these are the cases where the buckets it found no longer
// serve.

// An executed completion after one that did not run, in the same buckets,
// has its latencies recorded.
func TestRecordCacheAddsLatenciesAfterACompletionWithout(t *testing.T) {
	m, mc := newTestMetrics(t, Config{})
	record(m, ShortCircuited)
	recordLatency(m, 3*time.Millisecond, 4*time.Millisecond)
	mc.Advance(DefaultPercentileWindow / DefaultPercentileBuckets)
	l := m.Latencies()
	assert.Equal(t, int64(1), l.Execution.Count())
	assert.Equal(t, int64(1), l.Total.Count())
}

// After ResetStream, health counts what ended since, even in the bucket
// the recorders were writing to at the reset.
func TestRecordCacheFollowsResetStream(t *testing.T) {
	m, mc := newTestMetrics(t, Config{})
	recordN(m, 3, Failure)
	m.ResetStream()
	record(m, Success)
	mc.Advance(DefaultHealthSnapshotInterval)
	assert.Equal(t, HealthCounts{Total: 1}, m.HealthCounts())
	mc.Advance(DefaultRollingWindow)
	assert.Equal(t, int64(3), m.CumulativeCount(Failure), "the rolling counts are not reset")
}

// A completion that ended longer ago than the rings keep is not counted in
// the bucket that took over its slot, even when the recorders' current
// buckets were found for a time a whole ring later: it counts in the
// cumulative counts only.
func TestRecordCacheCountsACompletionOlderThanTheRingInTotalsOnly(t *testing.T) {
	m, mc := newTestMetrics(t, Config{})
	record(m, Success) // bucket 0 of the rolling ring
	start := mc.Now()
	mc.Advance(time.Duration(m.rolling.slots) * DefaultRollingWindow / DefaultBuckets)
	m.MarkStart() // the bucket that takes bucket 0's slot
	late := Completion{CommandKey: m.Key(), End: start.Add(time.Millisecond)}
	late.Events.Add(Success, 1)
	m.MarkCompletion(&late)
	mc.Advance(DefaultRollingWindow / DefaultBuckets)
	assert.Zero(t, m.RollingCount(Success), "the late completion is not in the current window")
	assert.Zero(t, rollingCountIn(m, int64(m.rolling.slots), Success), "nor in the bucket that took over its slot")
	assert.Equal(t, int64(2), m.CumulativeCount(Success), "both completions counted, once")
}

// A completion that ended before the last ResetStream counts in the first
// health bucket, and the buckets found for it do not serve completions at
// later times.
func TestRecordCacheAfterACompletionFromBeforeAReset(t *testing.T) {
	m, mc := newTestMetrics(t, Config{})
	mc.Advance(time.Second)
	m.ResetStream() // at a boundary of the rolling buckets
	early := Completion{CommandKey: m.Key(), End: mc.Now().Add(-time.Millisecond), Executed: true,
		ExecutionLatency: time.Millisecond, TotalLatency: time.Millisecond}
	early.Events.Add(Failure, 1)
	m.MarkCompletion(&early)
	mc.Advance(4 * time.Second)
	record(m, Success)
	assert.Equal(t, int64(1), rollingCountIn(m, 0, Failure), "the failure in bucket 0, where it ended")
	assert.Equal(t, int64(1), rollingCountIn(m, 5, Success), "the success in bucket 5, where it ended")
	assert.Zero(t, rollingCountIn(m, 0, Success))
}

// rollingCountIn returns the count of e in rolling bucket n.
func rollingCountIn(m *CommandMetrics, n int64, e EventType) int64 {
	var buf [maxRingCounters]int64
	vals := buf[:m.rolling.counters()]
	m.rolling.readSlot(int(n)&(m.rolling.slots-1), n, vals)
	return vals[e]
}
