package prometheus

import (
	"slices"

	"github.com/rxhystrix/rxhystrix/metricsstream/internal/reading"
)

// DefaultLatencyBuckets are the upper bounds, in seconds, of the latency
// histograms' buckets unless [WithLatencyBuckets] gives others: from 1ms to
// 10s, closest where command timeouts usually are, between 50ms and 3s,
// so that a quantile that histogram_quantile interpolates near a timeout
// is off by at most 50ms between 100ms and 500ms (Prometheus's DefBuckets
// jump from 250ms to 500ms, where a 300ms p99 reads as up to 490ms). The
// OpenTelemetry instruments of otelmetrics use the same bounds.
var DefaultLatencyBuckets = reading.DefaultLatencyBounds()

// An Option changes what [NewCollector] makes. A nil Option makes
// NewCollector panic.
type Option interface {
	apply(*Collector)
}

type latencyBucketsOption []float64

func (o latencyBucketsOption) apply(c *Collector) { c.bounds = slices.Clone(o) }

// WithLatencyBuckets sets the upper bounds, in seconds, of the latency
// histograms' buckets (Prometheus adds +Inf). It panics if there are none,
// or one is not a positive finite number, or they do not increase, with a
// message that says which.
func WithLatencyBuckets(bounds ...float64) Option {
	if err := reading.CheckBounds(bounds); err != nil {
		panic("prometheus: WithLatencyBuckets: " + err.Error())
	}
	return latencyBucketsOption(slices.Clone(bounds))
}
