package metricsstream

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHealthBucketsAreTheClosedBucketsWithTheirStarts(t *testing.T) {
	m, mc := newTestMetrics(t, Config{})
	start := mc.Now()
	record(m, Success)
	record(m, Failure, FallbackMissing)
	mc.Advance(healthBucket)
	mc.Advance(healthBucket) // an empty bucket
	record(m, Timeout, FallbackSuccess)
	record(m, BadRequest) // not health
	assert.Equal(t, []HealthBucket{{Start: start, Total: 2, Errors: 1}}, m.HealthBuckets(nil),
		"the bucket in progress is not reported")
	mc.Advance(healthBucket)

	got := m.HealthBuckets(nil)
	assert.Equal(t, []HealthBucket{
		{Start: start, Total: 2, Errors: 1},
		{Start: start.Add(2 * healthBucket), Total: 1, Errors: 1},
	}, got, "empty buckets are left out")
	var total, errs int64
	for _, b := range got {
		total += b.Total
		errs += b.Errors
	}
	assert.Equal(t, HealthCountsOf(total, errs, 0), m.HealthCounts(), "the buckets add up to the health counts")

	mc.Advance(DefaultRollingWindow - healthBucket)
	assert.Equal(t, []HealthBucket{{Start: start.Add(2 * healthBucket), Total: 1, Errors: 1}}, m.HealthBuckets(nil),
		"a bucket leaves with the window")
}

func TestHealthBucketsStartOverAfterResetStream(t *testing.T) {
	m, mc := newTestMetrics(t, Config{})
	record(m, Failure, FallbackMissing)
	mc.Advance(healthBucket + 100*time.Millisecond)
	require.Len(t, m.HealthBuckets(nil), 1)
	m.ResetStream()
	reset := mc.Now()
	assert.Empty(t, m.HealthBuckets(nil))
	record(m, Success)
	mc.Advance(healthBucket)
	assert.Equal(t, []HealthBucket{{Start: reset, Total: 1}}, m.HealthBuckets(nil),
		"buckets after a reset begin at the reset")
}

func TestHealthCountsOfRoundsDownAsHystrix(t *testing.T) {
	assert.Equal(t, HealthCounts{}, HealthCountsOf(0, 0, 0))
	assert.Equal(t, HealthCounts{Total: 3, Errors: 2, ErrorPercentage: 66, Slow: 1}, HealthCountsOf(3, 2, 1))
}
