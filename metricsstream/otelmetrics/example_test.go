package otelmetrics_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/rxhystrix/rxhystrix/clock"
	"github.com/rxhystrix/rxhystrix/metricsstream"
	"github.com/rxhystrix/rxhystrix/metricsstream/otelmetrics"
)

// A reader gets the counters and gauges from the Meter and the latency
// histograms from the producer.
func Example() {
	mc := clock.NewManual(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	metrics := metricsstream.NewRegistry(mc) // command.DefaultRegistry.Metrics() in a service
	m := metrics.Command("GetUser", metricsstream.Config{})
	for _, e := range []metricsstream.EventType{metricsstream.Success, metricsstream.Success, metricsstream.Timeout} {
		c := metricsstream.Completion{Executed: true, ExecutionLatency: 40 * time.Millisecond}
		c.Events.Add(e, 1)
		m.MarkCompletion(&c)
	}
	mc.Advance(10 * time.Second) // the buckets close

	rx := otelmetrics.New(metrics, otelmetrics.WithLatencyBuckets(.025, .05))
	reader := sdkmetric.NewManualReader(sdkmetric.WithProducer(rx))
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer provider.Shutdown(context.Background())
	if _, err := rx.Register(provider.Meter(otelmetrics.ScopeName)); err != nil {
		fmt.Println(err)
		return
	}

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		fmt.Println(err)
		return
	}
	for _, sm := range rm.ScopeMetrics {
		for _, md := range sm.Metrics {
			switch d := md.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					if e, _ := p.Attributes.Value(otelmetrics.EventKey); p.Value > 0 {
						fmt.Printf("%s %s=%s: %d\n", md.Name, otelmetrics.EventKey, e.AsString(), p.Value)
					}
				}
			case metricdata.Gauge[int64]:
				if md.Name == "rxhystrix.command.health.error" {
					fmt.Printf("%s: %d%s\n", md.Name, d.DataPoints[0].Value, md.Unit)
				}
			case metricdata.Histogram[float64]:
				if md.Name == "rxhystrix.command.execution.duration" {
					p := d.DataPoints[0]
					fmt.Printf("%s: %d in %s, bounds %v: %v\n", md.Name, p.Count, md.Unit, p.Bounds, p.BucketCounts)
				}
			}
		}
	}
	// Unordered output:
	// rxhystrix.command.events rxhystrix.event.type=SUCCESS: 2
	// rxhystrix.command.events rxhystrix.event.type=TIMEOUT: 1
	// rxhystrix.command.health.error: 33%
	// rxhystrix.command.execution.duration: 3 in s, bounds [0.025 0.05]: [0 3 0]
}

// A service exports its commands' metrics through OpenTelemetry, here
// with the Prometheus exporter (any reader takes sdkmetric.WithProducer).
// This is the README's snippet.
func ExampleMetrics_Register() {
	rx := otelmetrics.New(metricsstream.DefaultRegistry) // command.DefaultRegistry's metrics
	exporter, err := otelprom.New(otelprom.WithProducer(rx))
	if err != nil {
		log.Fatal(err)
	}
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exporter))
	if _, err := rx.Register(provider.Meter(otelmetrics.ScopeName)); err != nil {
		log.Fatal(err)
	}
	http.Handle("/metrics", promhttp.Handler())
}
