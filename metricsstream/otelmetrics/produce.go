package otelmetrics

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/rxhystrix/rxhystrix/metricsstream/internal/reading"
)

// Produce returns the latency histograms of every command of the
// registry, cumulative, in seconds: it makes m a
// [go.opentelemetry.io/otel/sdk/metric.Producer]. Each call adds the
// closed percentile buckets not added yet, as the Prometheus collector's
// scrape does, so two readers that share m see the same totals. It never
// fails, and is safe for concurrent use.
func (m *Metrics) Produce(context.Context) ([]metricdata.ScopeMetrics, error) {
	execution := metricdata.Histogram[float64]{Temporality: metricdata.CumulativeTemporality}
	total := metricdata.Histogram[float64]{Temporality: metricdata.CumulativeTemporality}

	m.mu.Lock()
	// The time is read under the lock, so that collections take their
	// turns in the order of their times: one that read an earlier time
	// after another had begun would go back in time, and give a command
	// new to it a start time (reading.Fold.Since) after its own time.
	now := m.registry.Clock().Now()
	m.folds.Begin(now)
	for c := range m.registry.Commands() {
		attrs := attribute.NewSet(commandAttributes(c.Snapshot())...)
		f := m.folds.Add(c)
		start := m.start
		if f.Since.After(start) {
			start = f.Since // the histograms started again (reading.Fold)
		}
		execution.DataPoints = append(execution.DataPoints, m.point(&f.Execution, attrs, start, now))
		total.DataPoints = append(total.DataPoints, m.point(&f.Total, attrs, start, now))
	}
	m.folds.End() // forgets the totals of metrics the registry no longer holds
	m.mu.Unlock()

	return []metricdata.ScopeMetrics{{
		Scope: instrumentation.Scope{Name: ScopeName},
		Metrics: []metricdata.Metrics{
			{Name: executionDuration.name, Description: executionDuration.description, Unit: executionDuration.unit, Data: execution},
			{Name: commandDuration.name, Description: commandDuration.description, Unit: commandDuration.unit, Data: total},
		},
	}}, nil
}

// point converts cumulative totals into an OpenTelemetry data point, whose
// buckets count apart rather than at or below each bound.
func (m *Metrics) point(h *reading.Histogram, attrs attribute.Set, start, now time.Time) metricdata.HistogramDataPoint[float64] {
	counts := make([]uint64, len(m.bounds)+1)
	below := uint64(0)
	for i, n := range h.AtOrBelow {
		counts[i] = n - below
		below = n
	}
	counts[len(m.bounds)] = h.Count - below
	return metricdata.HistogramDataPoint[float64]{
		Attributes:   attrs,
		StartTime:    start,
		Time:         now,
		Count:        h.Count,
		Bounds:       m.bounds,
		BucketCounts: counts,
		Sum:          h.Sum,
	}
}
