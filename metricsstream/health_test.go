package metricsstream

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// The scenarios of Hystrix's HealthCountsStreamTest, with its defaults of
// 500ms health buckets over a 10s window: a health count is made of the
// closed buckets only, so every check advances past the bucket boundary.

const healthBucket = 500 * time.Millisecond

func TestHealthCountsEmptyStreamIsZero(t *testing.T) {
	m, mc := newTestMetrics(t, Config{})
	assert.Equal(t, HealthCounts{}, m.HealthCounts())
	mc.Advance(3 * time.Second)
	assert.Equal(t, HealthCounts{}, m.HealthCounts())
}

func TestHealthCountsWhatEachEventCounts(t *testing.T) {
	cases := []struct {
		name   string
		events [][]EventType // executions
		want   HealthCounts
	}{
		{"single success", [][]EventType{{Success}}, HealthCounts{Total: 1}},
		{"single failure", [][]EventType{{Failure, FallbackMissing}}, HealthCounts{Total: 1, Errors: 1, ErrorPercentage: 100}},
		{"single timeout", [][]EventType{{Timeout, FallbackSuccess}}, HealthCounts{Total: 1, Errors: 1, ErrorPercentage: 100}},
		{"single bad request", [][]EventType{{BadRequest}}, HealthCounts{}},
		{"request from cache", [][]EventType{{Success}, {ResponseFromCache}, {ResponseFromCache}}, HealthCounts{Total: 1}},
		{"short-circuited", [][]EventType{
			{Failure, FallbackSuccess}, {Failure, FallbackSuccess}, {Failure, FallbackSuccess},
			{ShortCircuited, FallbackSuccess}, {ShortCircuited, FallbackSuccess},
		}, HealthCounts{Total: 3, Errors: 3, ErrorPercentage: 100}},
		{"semaphore rejected", [][]EventType{{Success}, {SemaphoreRejected, FallbackSuccess}}, HealthCounts{Total: 2, Errors: 1, ErrorPercentage: 50}},
		{"thread pool rejected", [][]EventType{{Success}, {PoolRejected, FallbackMissing}}, HealthCounts{Total: 2, Errors: 1, ErrorPercentage: 50}},
		{"fallback failure", [][]EventType{{Failure, FallbackFailure}}, HealthCounts{Total: 1, Errors: 1, ErrorPercentage: 100}},
		{"cancelled", [][]EventType{{Cancelled}}, HealthCounts{}},
		{"collapsed and emits", [][]EventType{{Emit, Emit, Collapsed, Success}}, HealthCounts{Total: 1}},
		{"percentage is truncated", [][]EventType{{Success}, {Success}, {Failure, FallbackSuccess}}, HealthCounts{Total: 3, Errors: 1, ErrorPercentage: 33}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, mc := newTestMetrics(t, Config{})
			for _, events := range c.events {
				record(m, events...)
			}
			assert.Equal(t, HealthCounts{}, m.HealthCounts(), "the bucket in progress does not count")
			mc.Advance(healthBucket)
			assert.Equal(t, c.want, m.HealthCounts())
		})
	}
}

// HealthCountsStreamTest.testFallbackRejection: 7 failures whose fallback
// was rejected are 7 errors out of 7.
func TestHealthCountsFallbackRejection(t *testing.T) {
	m, mc := newTestMetrics(t, Config{})
	recordN(m, 5, Failure, FallbackSuccess)
	recordN(m, 2, Failure, FallbackRejection)
	mc.Advance(healthBucket)
	assert.Equal(t, HealthCounts{Total: 7, Errors: 7, ErrorPercentage: 100}, m.HealthCounts())
}

// HealthCountsStreamTest.testMultipleEventsOverTimeGetStoredAndAgeOut:
// events spread over buckets add up, then age out once the window has
// passed over them.
func TestHealthCountsAgeOut(t *testing.T) {
	m, mc := newTestMetrics(t, Config{})
	record(m, Success)
	mc.Advance(healthBucket)
	record(m, Failure, FallbackSuccess)
	mc.Advance(healthBucket)
	record(m, Timeout, FallbackMissing)
	mc.Advance(healthBucket)
	assert.Equal(t, HealthCounts{Total: 3, Errors: 2, ErrorPercentage: 66}, m.HealthCounts())

	// The first execution's bucket leaves the 10s window after 20 buckets.
	mc.Advance(10*time.Second - 3*healthBucket)
	assert.Equal(t, HealthCounts{Total: 3, Errors: 2, ErrorPercentage: 66}, m.HealthCounts())
	mc.Advance(healthBucket)
	assert.Equal(t, HealthCounts{Total: 2, Errors: 2, ErrorPercentage: 100}, m.HealthCounts())
	mc.Advance(2 * healthBucket)
	assert.Equal(t, HealthCounts{}, m.HealthCounts())

	// Hystrix's test waits 30 buckets; the counts stay empty.
	mc.Advance(30 * healthBucket)
	assert.Equal(t, HealthCounts{}, m.HealthCounts())
}

func TestHealthCountsCountCompletionsByTheirEndTime(t *testing.T) {
	m, mc := newTestMetrics(t, Config{})
	mc.Advance(2 * time.Second)
	// An execution that ended in the previous bucket counts once that
	// bucket is closed, which it already is.
	var c Completion
	c.Events.Add(Failure, 1)
	c.End = t0.Add(2*time.Second - time.Millisecond)
	m.MarkCompletion(&c)
	assert.Equal(t, HealthCounts{Total: 1, Errors: 1, ErrorPercentage: 100}, m.HealthCounts())
}

func TestResetStreamStartsHealthOverFromEmptyBuckets(t *testing.T) {
	m, mc := newTestMetrics(t, Config{})
	recordN(m, 4, Failure, FallbackSuccess)
	mc.Advance(healthBucket + 100*time.Millisecond)
	record(m, Failure, FallbackSuccess) // in the bucket in progress at the reset
	assert.Equal(t, HealthCounts{Total: 4, Errors: 4, ErrorPercentage: 100}, m.HealthCounts())

	m.ResetStream()
	assert.Equal(t, HealthCounts{}, m.HealthCounts())
	mc.Advance(healthBucket)
	assert.Equal(t, HealthCounts{}, m.HealthCounts(), "nothing recorded before the reset counts again")

	record(m, Success)
	mc.Advance(healthBucket - time.Millisecond)
	assert.Equal(t, HealthCounts{}, m.HealthCounts(), "new buckets are aligned on the reset")
	mc.Advance(time.Millisecond)
	assert.Equal(t, HealthCounts{Total: 1}, m.HealthCounts())

	// The reset leaves the other counts alone.
	mc.Advance(time.Second)
	assert.Equal(t, int64(6), m.RollingCount(Failure)+m.RollingCount(Success))
	assert.Equal(t, int64(5), m.CumulativeCount(Failure))
}

func TestHealthCountsSlowCalls(t *testing.T) {
	m, mc := newTestMetrics(t, Config{SlowCallDuration: 100 * time.Millisecond})
	for _, d := range []time.Duration{10 * time.Millisecond, 100 * time.Millisecond, 2 * time.Second} {
		c := Completion{Executed: true, ExecutionLatency: d, TotalLatency: d}
		c.Events.Add(Success, 1)
		m.MarkCompletion(&c)
	}
	slowTimeout := Completion{Executed: true, ExecutionLatency: time.Second}
	slowTimeout.Events.Add(Timeout, 1)
	m.MarkCompletion(&slowTimeout)
	slowBadRequest := Completion{Executed: true, ExecutionLatency: time.Second}
	slowBadRequest.Events.Add(BadRequest, 1)
	m.MarkCompletion(&slowBadRequest) // not in Total, so not slow either
	mc.Advance(healthBucket)
	h := m.HealthCounts()
	assert.Equal(t, HealthCounts{Total: 4, Errors: 1, ErrorPercentage: 25, Slow: 3}, h)
	assert.Equal(t, 75, h.SlowPercentage())

	off, mc2 := newTestMetrics(t, Config{})
	c := Completion{Executed: true, ExecutionLatency: time.Hour}
	c.Events.Add(Success, 1)
	off.MarkCompletion(&c)
	mc2.Advance(healthBucket)
	assert.Equal(t, int64(0), off.HealthCounts().Slow)
}

func TestHealthWindowOfOddInterval(t *testing.T) {
	// 10s / 3s: 3 buckets of 3s (Hystrix rounds the bucket count down).
	m, mc := newTestMetrics(t, Config{HealthSnapshotInterval: 3 * time.Second})
	record(m, Success)
	mc.Advance(3 * time.Second)
	assert.Equal(t, int64(1), m.HealthCounts().Total)
	mc.Advance(6 * time.Second)
	assert.Equal(t, int64(1), m.HealthCounts().Total)
	mc.Advance(3 * time.Second)
	assert.Equal(t, int64(0), m.HealthCounts().Total)
}
