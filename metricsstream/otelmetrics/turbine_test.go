package otelmetrics

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	rxprometheus "github.com/rxhystrix/rxhystrix/metricsstream/prometheus"
	"github.com/rxhystrix/rxhystrix/metricsstream/turbine"
)

// instances is a Turbine whose instances the test sets.
type instances []turbine.Instance

func (in instances) Instances() []turbine.Instance { return in }

// A Turbine's instruments report what the Prometheus collector's
// TurbineCollector reports, series for series.
func TestTurbineValuesEqualThePrometheusCollectors(t *testing.T) {
	cluster := instances{
		{URL: "http://10.0.0.7:8080/hystrix.stream", Connected: true, Objects: 12, Ignored: 3},
		{URL: "http://ops:secret@10.0.0.8:8080/hystrix.stream", Err: errors.New("connection refused")},
	}
	reader := sdkmetric.NewManualReader()
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer func() { _ = provider.Shutdown(context.Background()) }()
	r, err := RegisterTurbine(provider.Meter(ScopeName), cluster)
	require.NoError(t, err)
	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(context.Background(), &rm))
	got := otelPoints(t, rm)

	assert.Equal(t, map[string]float64{
		"rxhystrix_turbine_instance_connected{instance=http://10.0.0.7:8080/hystrix.stream}":                      1,
		"rxhystrix_turbine_instance_objects{instance=http://10.0.0.7:8080/hystrix.stream}":                        12,
		"rxhystrix_turbine_instance_ignored_events_total{instance=http://10.0.0.7:8080/hystrix.stream}":           3,
		"rxhystrix_turbine_instance_connected{instance=http://ops:xxxxx@10.0.0.8:8080/hystrix.stream}":            0,
		"rxhystrix_turbine_instance_objects{instance=http://ops:xxxxx@10.0.0.8:8080/hystrix.stream}":              0,
		"rxhystrix_turbine_instance_ignored_events_total{instance=http://ops:xxxxx@10.0.0.8:8080/hystrix.stream}": 0,
	}, got)
	assert.Equal(t, prometheusSeries(t, rxprometheus.NewTurbineCollector(cluster)), got)

	require.NoError(t, r.Unregister())
	require.NoError(t, reader.Collect(context.Background(), &rm))
	assert.Empty(t, otelPoints(t, rm))
	assert.PanicsWithValue(t, "otelmetrics: RegisterTurbine with nil instances",
		func() { _, _ = RegisterTurbine(provider.Meter(ScopeName), nil) })
}
