package prometheus

import (
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/rxhystrix/rxhystrix/internal/clock"
	"github.com/rxhystrix/rxhystrix/metricsstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// quantile interpolates the q-quantile of a classic histogram linearly
// within its bucket, as PromQL's histogram_quantile does.
func quantile(q float64, h *dto.Histogram) float64 {
	rank := q * float64(h.GetSampleCount())
	lower, below := 0.0, 0.0
	for _, b := range h.GetBucket() {
		upper, n := b.GetUpperBound(), float64(b.GetCumulativeCount())
		if n >= rank {
			return lower + (upper-lower)*(rank-below)/(n-below)
		}
		lower, below = upper, n
	}
	return lower
}

// With the default buckets, a p99 near a usual timeout reads close to its
// value: executions of 300ms make the p99 of a command whose others take
// 20ms, and histogram_quantile puts it within 50ms of 300ms.
func TestDefaultBucketsResolveQuantilesNearTimeouts(t *testing.T) {
	for _, slow := range []time.Duration{150 * time.Millisecond, 300 * time.Millisecond, 450 * time.Millisecond} {
		mc := clock.NewManual(t0)
		reg := metricsstream.NewRegistry(mc)
		m := reg.Command("C", metricsstream.Config{})
		for range 98 {
			record(m, 20*time.Millisecond, metricsstream.Success)
		}
		record(m, slow, metricsstream.Success)
		record(m, slow, metricsstream.Success)
		mc.Advance(10 * time.Second)

		var h *dto.Histogram
		for _, mf := range gather(t, NewCollector(reg)) {
			if mf.GetName() == "rxhystrix_command_execution_latency_seconds" {
				h = mf.GetMetric()[0].GetHistogram()
			}
		}
		require.NotNil(t, h)
		require.Equal(t, uint64(100), h.GetSampleCount())
		assert.InDelta(t, slow.Seconds(), quantile(.99, h), .05, "p99 of %v", slow)
	}
}

// The documentation of DefaultLatencyBuckets promises a quantile off by at
// most 50ms anywhere between 100ms and 500ms: every bucket there is at
// most 50ms wide (one from 400ms to 500ms read a p99 of 410ms as 499ms).
func TestDefaultBucketsAreAtMost50msWideFrom100msTo500ms(t *testing.T) {
	b := DefaultLatencyBuckets
	for i := 1; i < len(b); i++ {
		if b[i-1] >= .1 && b[i] <= .5 {
			assert.LessOrEqual(t, b[i]-b[i-1], .05+1e-9, "the bucket (%v, %v]", b[i-1], b[i])
		}
	}
}
