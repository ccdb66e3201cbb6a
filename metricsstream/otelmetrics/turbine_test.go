package otelmetrics

import (
	"context"
	"errors"
	"testing"
	"time"

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

var _ TurbineInstances = (*instances)(nil)

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

// discovered is a Turbine that finds its instances with a Discovery, or
// not (ok).
type discovered struct {
	instances
	status turbine.DiscoveryStatus
	ok     bool
}

func (d discovered) Discovery() (turbine.DiscoveryStatus, bool) { return d.status, d.ok }

func TestTurbineDiscoveryValuesEqualThePrometheusCollectors(t *testing.T) {
	found := time.Date(2026, 12, 5, 9, 0, 0, 500_000_000, time.UTC)
	for _, tc := range []struct {
		cluster discovered
		want    map[string]float64
	}{
		{discovered{status: turbine.DiscoveryStatus{Found: found, Failures: 2}, ok: true}, map[string]float64{
			"rxhystrix_turbine_discovery_failures_total{}":                 2,
			"rxhystrix_turbine_discovery_last_success_timestamp_seconds{}": float64(found.Unix()) + 0.5,
		}},
		{discovered{ok: true}, map[string]float64{
			"rxhystrix_turbine_discovery_failures_total{}":                 0,
			"rxhystrix_turbine_discovery_last_success_timestamp_seconds{}": 0,
		}},
		{discovered{ok: false}, map[string]float64{}},
	} {
		reader := sdkmetric.NewManualReader()
		provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
		_, err := RegisterTurbine(provider.Meter(ScopeName), tc.cluster)
		require.NoError(t, err)
		var rm metricdata.ResourceMetrics
		require.NoError(t, reader.Collect(context.Background(), &rm))
		got := otelPoints(t, rm)
		assert.Equal(t, tc.want, got)
		assert.Equal(t, prometheusSeries(t, rxprometheus.NewTurbineCollector(tc.cluster)), got)
		require.NoError(t, provider.Shutdown(context.Background()))
	}
}

// A second RegisterTurbine of one Turbine on a meter would observe its
// counters again, which the SDK sums. It is refused until the first is
// unregistered, as a second Register of Metrics is.
func TestRegisteringATurbineTwiceOnAMeterDoesNotDoubleItsCounters(t *testing.T) {
	cluster := &instances{{URL: "http://10.0.0.7:8080/hystrix.stream", Connected: true, Objects: 12, Ignored: 3}}
	meter, collect := manualMeter(t)
	const ignored = "rxhystrix_turbine_instance_ignored_events_total{instance=http://10.0.0.7:8080/hystrix.stream}"

	first, err := RegisterTurbine(meter, cluster)
	require.NoError(t, err)
	_, err = RegisterTurbine(meter, cluster)
	assert.ErrorIs(t, err, ErrAlreadyRegistered)
	assert.Equal(t, 3.0, collect()[ignored], "counted once")
	other, err := RegisterTurbine(meter, &instances{})
	require.NoError(t, err, "another Turbine on the same meter")
	require.NoError(t, other.Unregister())

	require.NoError(t, first.Unregister())
	again, err := RegisterTurbine(meter, cluster)
	require.NoError(t, err, "registered again once the first is unregistered")
	assert.Equal(t, 3.0, collect()[ignored])
	require.NoError(t, again.Unregister())
}
