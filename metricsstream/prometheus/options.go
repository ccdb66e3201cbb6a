package prometheus

import (
	"fmt"
	"math"
	"slices"
)

// DefaultLatencyBuckets are the upper bounds, in seconds, of the latency
// histograms' buckets unless [WithLatencyBuckets] gives others: from 1ms to
// 10s, about three per decade, as Prometheus's DefBuckets with 1ms and
// 2.5ms added for fast dependencies.
var DefaultLatencyBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}

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
