package prometheus

import (
	"fmt"
	"math"
	"slices"
)

// DefaultLatencyBuckets are the upper bounds, in seconds, of the latency
// histograms' buckets unless [WithLatencyBuckets] gives others: from 1ms to
// 10s, closest where command timeouts usually are, between 50ms and 3s,
// so that a quantile that histogram_quantile interpolates near a timeout
// is off by at most 50ms between 100ms and 500ms (Prometheus's DefBuckets
// jump from 250ms to 500ms, where a 300ms p99 reads as up to 490ms).
var DefaultLatencyBuckets = []float64{
	.001, .0025, .005, .01, .025, .05, .075, .1, .15, .2, .25, .3, .35, .4, .5,
	.6, .75, 1, 1.5, 2, 2.5, 3, 5, 10,
}

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
	if len(bounds) == 0 {
		panic("prometheus: WithLatencyBuckets: no bucket bounds")
	}
	for i, b := range bounds {
		if !(b > 0) || math.IsInf(b, 1) {
			panic(fmt.Sprintf("prometheus: WithLatencyBuckets: bound %d (%v) is not a positive finite number of seconds", i, b))
		}
		if i > 0 && b <= bounds[i-1] {
			panic(fmt.Sprintf("prometheus: WithLatencyBuckets: bound %d (%v) does not exceed bound %d (%v)", i, b, i-1, bounds[i-1]))
		}
	}
	return latencyBucketsOption(slices.Clone(bounds))
}
