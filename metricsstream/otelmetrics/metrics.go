package otelmetrics

import (
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/rxhystrix/rxhystrix/metricsstream"
	"github.com/rxhystrix/rxhystrix/metricsstream/internal/reading"
)

// ScopeName is the instrumentation scope of the metrics: the name to give
// the Meter passed to [Metrics.Register], and the scope of what
// [Metrics.Produce] returns.
const ScopeName = "github.com/rxhystrix/rxhystrix/metricsstream/otelmetrics"

// Metrics reports the commands, worker pools and request collapsers of a
// [metricsstream.Registry] to OpenTelemetry: [Metrics.Register] makes the
// counters and gauges on a Meter, and Metrics is the
// [go.opentelemetry.io/otel/sdk/metric.Producer] of the latency
// histograms, for a reader's WithProducer. The package documentation
// lists what it reports and why the histograms come through a producer.
//
// Metrics is safe for concurrent use; get one with [New].
type Metrics struct {
	registry *metricsstream.Registry
	bounds   []float64 // seconds, increasing
	start    time.Time // StartTime of the cumulative histograms, unless they started again

	mu    sync.Mutex
	folds *reading.Folds // over bounds

	registrations registrations // Register's, by meter
}

// New returns the Metrics of r, for example command.DefaultRegistry.Metrics()
// or metricsstream.DefaultRegistry. It panics if r or an option is nil.
func New(r *metricsstream.Registry, opts ...Option) *Metrics {
	if r == nil {
		panic("otelmetrics: New with nil registry")
	}
	m := &Metrics{registry: r, bounds: reading.DefaultLatencyBounds(), start: r.Clock().Now()}
	for i, o := range opts {
		if o == nil {
			panic(fmt.Sprintf("otelmetrics: New: option %d is nil", i))
		}
		o.apply(m)
	}
	m.folds = reading.NewFolds(m.bounds)
	return m
}

// An Option changes what [New] makes. A nil Option makes New panic.
type Option interface {
	apply(*Metrics)
}

type latencyBucketsOption []float64

func (o latencyBucketsOption) apply(m *Metrics) { m.bounds = slices.Clone(o) }

// WithLatencyBuckets sets the upper bounds, in seconds, of the latency
// histograms' buckets (the default is the Prometheus collector's,
// prometheus.DefaultLatencyBuckets). It panics if there are none, or one
// is not a positive finite number, or they do not increase, with a
// message that says which.
func WithLatencyBuckets(bounds ...float64) Option {
	if err := reading.CheckBounds(bounds); err != nil {
		panic("otelmetrics: WithLatencyBuckets: " + err.Error())
	}
	return latencyBucketsOption(slices.Clone(bounds))
}
