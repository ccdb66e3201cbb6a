package oteltrace_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/rxhystrix/rxhystrix/command"
	"github.com/rxhystrix/rxhystrix/metricsstream/otelmetrics"
)

// A span joins its command's metrics on the attributes they share
// (internal/otelattr): the same key has the same value in both, even a
// valid key that the metrics escape because it holds `\x`.
func TestASpanJoinsItsCommandsMetrics(t *testing.T) {
	tr := newTraced(t)
	const key, group, pool = `C:\xfer`, `Files\x`, `disk\x1`
	c := command.New(key, func(context.Context, int) (string, error) { return "ok", nil },
		command.WithRegistry(tr.reg), command.WithConfig(command.Config{Group: group, Pool: pool, Isolation: command.PoolIsolation}))
	_, err := c.Execute(context.Background(), 1)
	require.NoError(t, err)
	span := attrs(tr.span(t, key))

	m := otelmetrics.New(tr.reg.Metrics())
	reader := sdkmetric.NewManualReader(sdkmetric.WithProducer(m))
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = provider.Shutdown(context.Background()) })
	_, err = m.Register(provider.Meter(otelmetrics.ScopeName))
	require.NoError(t, err)
	tr.clock.Advance(10 * time.Second)
	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(context.Background(), &rm))

	found := map[attribute.Key]bool{}
	for _, sm := range rm.ScopeMetrics {
		for _, mt := range sm.Metrics {
			for _, set := range attributeSets(mt.Data) {
				for _, k := range []attribute.Key{otelmetrics.CommandKey, otelmetrics.GroupKey, otelmetrics.PoolKey} {
					if v, ok := set.Value(k); ok {
						found[k] = true
						assert.Equal(t, v.AsString(), span[k].AsString(), "%s of metric %s and of the span", k, mt.Name)
					}
				}
			}
		}
	}
	assert.Len(t, found, 3, "the metrics carry the command, group and pool attributes")
}

// attributeSets returns the attribute sets of a metric's data points.
func attributeSets(data metricdata.Aggregation) []attribute.Set {
	var sets []attribute.Set
	switch d := data.(type) {
	case metricdata.Sum[int64]:
		for _, p := range d.DataPoints {
			sets = append(sets, p.Attributes)
		}
	case metricdata.Sum[float64]:
		for _, p := range d.DataPoints {
			sets = append(sets, p.Attributes)
		}
	case metricdata.Gauge[int64]:
		for _, p := range d.DataPoints {
			sets = append(sets, p.Attributes)
		}
	case metricdata.Gauge[float64]:
		for _, p := range d.DataPoints {
			sets = append(sets, p.Attributes)
		}
	case metricdata.Histogram[float64]:
		for _, p := range d.DataPoints {
			sets = append(sets, p.Attributes)
		}
	}
	return sets
}
