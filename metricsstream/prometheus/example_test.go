package prometheus_test

import (
	"fmt"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/common/expfmt"
	"github.com/rxhystrix/rxhystrix/clock"
	"github.com/rxhystrix/rxhystrix/metricsstream"
	rxprometheus "github.com/rxhystrix/rxhystrix/metricsstream/prometheus"
)

// A service serves its commands' metrics on /metrics, next to its own.
func ExampleCollector_mount() {
	reg := prometheus.NewRegistry()
	reg.MustRegister(rxprometheus.NewCollector(metricsstream.DefaultRegistry)) // command.DefaultRegistry's metrics
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	_ = http.ListenAndServe("127.0.0.1:9090", mux)
}

// The collector reports each command's events, health and latencies.
func ExampleNewCollector() {
	mc := clock.NewManual(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	metrics := metricsstream.NewRegistry(mc)
	m := metrics.Command("GetUser", metricsstream.Config{})
	for _, e := range []metricsstream.EventType{metricsstream.Success, metricsstream.Success, metricsstream.Timeout} {
		c := metricsstream.Completion{Executed: true, ExecutionLatency: 40 * time.Millisecond}
		c.Events.Add(e, 1)
		m.MarkCompletion(&c)
	}
	mc.Advance(10 * time.Second) // the buckets close

	reg := prometheus.NewRegistry()
	reg.MustRegister(rxprometheus.NewCollector(metrics, rxprometheus.WithLatencyBuckets(.025, .05)))
	out, err := testutil.GatherAndFormat(reg, expfmt.TypeTextPlain,
		"rxhystrix_command_error_percentage", "rxhystrix_command_execution_latency_seconds")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(string(out))
	// Output:
	// # HELP rxhystrix_command_error_percentage Errors per 100 requests in the command's health window, truncated: what its circuit breaker compares with its threshold.
	// # TYPE rxhystrix_command_error_percentage gauge
	// rxhystrix_command_error_percentage{command="GetUser",group="GetUser"} 33
	// # HELP rxhystrix_command_execution_latency_seconds How long the command's code ran, for executions that ran; cumulative, from the closed buckets of the percentile window.
	// # TYPE rxhystrix_command_execution_latency_seconds histogram
	// rxhystrix_command_execution_latency_seconds_bucket{command="GetUser",group="GetUser",le="0.025"} 0
	// rxhystrix_command_execution_latency_seconds_bucket{command="GetUser",group="GetUser",le="0.05"} 3
	// rxhystrix_command_execution_latency_seconds_bucket{command="GetUser",group="GetUser",le="+Inf"} 3
	// rxhystrix_command_execution_latency_seconds_sum{command="GetUser",group="GetUser"} 0.120048
	// rxhystrix_command_execution_latency_seconds_count{command="GetUser",group="GetUser"} 3
}
