package otelmetrics

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/rxhystrix/rxhystrix/clock"
	"github.com/rxhystrix/rxhystrix/metricsstream"
)

// Through the OpenTelemetry Prometheus exporter, a real scrape of
// promhttp serves the counters, gauges and histograms with OTel's
// translation of the names.
func TestScrapedThroughTheOTelPrometheusExporter(t *testing.T) {
	reg, _ := executions(t)
	m := New(reg.Metrics())

	pr := prometheus.NewPedanticRegistry()
	exporter, err := otelprom.New(otelprom.WithRegisterer(pr), otelprom.WithProducer(m))
	require.NoError(t, err)
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exporter))
	t.Cleanup(func() { _ = provider.Shutdown(context.Background()) })
	_, err = m.Register(provider.Meter(ScopeName))
	require.NoError(t, err)

	srv := httptest.NewServer(promhttp.HandlerFor(pr, promhttp.HandlerOpts{}))
	t.Cleanup(srv.Close)
	resp, err := http.Get(srv.URL)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	body := string(b)
	const scope = `otel_scope_name="github.com/rxhystrix/rxhystrix/metricsstream/otelmetrics",otel_scope_schema_url="",otel_scope_version=""`
	const getUser = scope + `,rxhystrix_command_group="Users",rxhystrix_command_name="GetUser"`
	for _, line := range []string{
		`rxhystrix_command_events_total{` + getUser + `,rxhystrix_event_type="SUCCESS"} 4`,
		`rxhystrix_command_events_total{` + getUser + `,rxhystrix_event_type="TIMEOUT"} 1`,
		`rxhystrix_command_health_error_percent{` + getUser + `} 100`,
		`rxhystrix_command_execution_duration_seconds_bucket{` + getUser + `,le="0.3"} 6`,
		`rxhystrix_command_execution_duration_seconds_count{` + getUser + `} 7`,
		`rxhystrix_command_duration_seconds_count{` + getUser + `} 7`,
		`rxhystrix_pool_executed_total{` + scope + `,rxhystrix_pool_name="Search"} 3`,
		`rxhystrix_pool_core_size{` + scope + `,rxhystrix_pool_name="Search"} 2`,
		"# TYPE rxhystrix_command_execution_duration_seconds histogram",
		"# TYPE rxhystrix_command_events_total counter",
		"# TYPE rxhystrix_command_circuit_open gauge",
	} {
		assert.Contains(t, body, line+"\n")
	}
}

// A key that is not valid UTF-8 is escaped as the Prometheus collector
// escapes it, so the exporter's scrape of the others still succeeds.
func TestKeysThatAreNotUTF8AreEscaped(t *testing.T) {
	reg := metricsstream.NewRegistry(clock.NewManual(t0))
	c := metricsstream.Completion{}
	c.Events.Add(metricsstream.Success, 1)
	reg.Command("bad-\xff", metricsstream.Config{}).MarkCompletion(&c)
	reg.Command("ok", metricsstream.Config{}).MarkCompletion(&c)
	reg.Clock().(*clock.Manual).Advance(10 * time.Second)

	m := New(reg)
	pr := prometheus.NewPedanticRegistry()
	exporter, err := otelprom.New(otelprom.WithRegisterer(pr), otelprom.WithProducer(m), otelprom.WithoutScopeInfo())
	require.NoError(t, err)
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exporter))
	t.Cleanup(func() { _ = provider.Shutdown(context.Background()) })
	_, err = m.Register(provider.Meter(ScopeName))
	require.NoError(t, err)
	srv := httptest.NewServer(promhttp.HandlerFor(pr, promhttp.HandlerOpts{}))
	t.Cleanup(srv.Close)

	resp, err := http.Get(srv.URL)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	assert.Contains(t, string(b), `rxhystrix_command_events_total{rxhystrix_command_group="bad-\\xff",rxhystrix_command_name="bad-\\xff",rxhystrix_event_type="SUCCESS"} 1`)
	assert.Contains(t, string(b), `rxhystrix_command_events_total{rxhystrix_command_group="ok",rxhystrix_command_name="ok",rxhystrix_event_type="SUCCESS"} 1`)
}
