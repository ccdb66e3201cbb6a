package metricsstream

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLatencyBucketsAreTheClosedBucketsOldestFirst(t *testing.T) {
	m, mc := newTestMetrics(t, Config{PercentileWindow: 30 * time.Second, PercentileBuckets: 3})
	assert.Empty(t, m.LatencyBuckets(), "no bucket has closed")

	recordLatency(m, 5*time.Millisecond, 6*time.Millisecond)
	recordLatency(m, 7*time.Millisecond, 9*time.Millisecond)
	assert.Empty(t, m.LatencyBuckets(), "the bucket in progress is not returned")

	mc.Advance(10 * time.Second)
	mc.Advance(10 * time.Second) // an empty bucket closes: left out
	recordLatency(m, 40*time.Millisecond, 41*time.Millisecond)
	mc.Advance(10 * time.Second)

	got := m.LatencyBuckets()
	require.Len(t, got, 2)
	assert.Equal(t, t0, got[0].Start)
	assert.Equal(t, int64(2), got[0].Execution.Count())
	assert.Equal(t, int64(2), got[0].Total.Count())
	assert.Equal(t, int64(7), got[0].Execution.Max().Milliseconds())
	assert.Equal(t, t0.Add(20*time.Second), got[1].Start)
	assert.Equal(t, int64(1), got[1].Execution.Count())

	mc.Advance(20 * time.Second)
	got = m.LatencyBuckets()
	require.Len(t, got, 1, "the first bucket left the window")
	assert.Equal(t, t0.Add(20*time.Second), got[0].Start)
}

func TestCountAtOrBelow(t *testing.T) {
	m, mc := newTestMetrics(t, Config{})
	for _, ms := range []int{1, 2, 2, 10, 100, 5000} {
		recordLatency(m, time.Duration(ms)*time.Millisecond, 0)
	}
	mc.Advance(10 * time.Second)
	d := m.Latencies().Execution
	require.Equal(t, int64(6), d.Count())

	cases := []struct {
		v    time.Duration
		want int64
	}{
		{-time.Millisecond, 0},
		{0, 0},
		{999 * time.Microsecond, 0},
		{time.Millisecond, 1},
		{2 * time.Millisecond, 3},
		{9 * time.Millisecond, 3},
		{10 * time.Millisecond, 4},
		{time.Second, 5},
		{4990 * time.Millisecond, 5},
		{5 * time.Second, 6},
		{2 * time.Hour, 6},
	}
	for _, tc := range cases {
		assert.Equal(t, tc.want, d.CountAtOrBelow(tc.v), "CountAtOrBelow(%v)", tc.v)
	}
	assert.Zero(t, Distribution{}.CountAtOrBelow(time.Hour))
}
