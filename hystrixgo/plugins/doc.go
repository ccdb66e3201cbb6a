// Package plugins is hystrix-go's plugins package
// (github.com/afex/hystrix-go/plugins) for the drop-in package hystrix
// (github.com/rxhystrix/rxhystrix/hystrixgo): its statsd collector, with
// hystrix-go's names, defaults and metrics, so that a program that sends
// its circuits' metrics to statsd changes its import and nothing else:
//
//	c, err := plugins.InitializeStatsdCollector(&plugins.StatsdCollectorConfig{
//		StatsdAddr: "localhost:8125",
//		Prefix:     "myapp.hystrix",
//	})
//	if err != nil {
//		log.Fatalf("could not initialize statsd client: %v", err)
//	}
//	metricCollector.Registry.Register(c.NewStatsdCollector)
//
// Each circuit then sends, per finished command, the counters
// <prefix>.<circuit>.attempts, errors, successes, failures, rejects,
// shortCircuits, timeouts, fallbackSuccesses, fallbackFailures,
// contextCanceled and contextDeadlineExceeded (those that are not 0), the
// timers totalDuration and runDuration, the timer concurrencyInUse (the
// share of MaxConcurrentRequests in use, in percent) and the gauge
// circuitOpen (0 after a success, 1 after a short-circuit). The circuit's
// name has "/", ":" and "." replaced with "-". Statistics are buffered
// and sent at least every second, or when FlushBytes are waiting.
//
// The client is github.com/cactus/go-statsd-client/v5, the current major
// version of the client hystrix-go uses, so the wire format is the same.
//
// Differences from hystrix-go:
//
//   - A configuration that cannot work (no config, an empty address, a
//     negative FlushBytes, a SampleRate outside 0 to 1) is an error that
//     names the field, returned with a client that sends nothing, as
//     hystrix-go returns one when it cannot reach the address; hystrix-go
//     took such values as they were.
//   - StatsdCollectorClient.Close sends what is buffered and stops the
//     client's goroutine; hystrix-go's client could not be closed.
//   - hystrix-go's datadog and graphite collectors are not provided;
//     rxhystrix's own Prometheus and OpenTelemetry exporters
//     (metricsstream/prometheus, metricsstream/otelmetrics) cover what
//     they were for, and any collector registered with
//     metricCollector.Registry receives every result.
package plugins
