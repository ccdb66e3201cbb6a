// Package plugins is hystrix-go's plugins package
// (github.com/afex/hystrix-go/plugins) for the drop-in package hystrix
// (github.com/rxhystrix/rxhystrix/hystrixgo): its statsd, Datadog and
// Graphite collectors, with hystrix-go's names, defaults and metrics, so
// that a program that sends its circuits' metrics to one of them changes
// its import and nothing else.
//
// # Statsd
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
// # Datadog
//
//	collector, err := plugins.NewDatadogCollector("localhost:8125", "myapp")
//	if err != nil {
//		panic(err)
//	}
//	metricCollector.Registry.Register(collector)
//
// The same statistics go to the DogStatsD agent under the names DM_*
// (hystrix.attempts, hystrix.runDuration, ...), after the prefix, with the
// tag hystrixcircuit:<circuit>, so that one graph or monitor covers every
// circuit. The client is github.com/DataDog/datadog-go/v5's, with its
// defaults: it buffers for at most 100 ms, and it sums counters and keeps
// the last gauge on the client for 2 seconds before sending them, which
// leaves Datadog's sums as they were with hystrix-go's client.
// NewDatadogCollectorWithClient takes any client with the three methods of
// DatadogClient.
//
// # Graphite
//
//	reporter, err := plugins.InitializeGraphiteCollector(&plugins.GraphiteCollectorConfig{
//		GraphiteAddr: &net.TCPAddr{IP: net.ParseIP("10.0.0.7"), Port: 2003},
//		Prefix:       "myapp.hystrix",
//		TickInterval: 10 * time.Second,
//	})
//	if err != nil {
//		log.Fatal(err)
//	}
//	defer reporter.Close()
//	metricCollector.Registry.Register(plugins.NewGraphiteCollector)
//
// As in hystrix-go, the collectors add their circuits' statistics to
// go-metrics' default registry (github.com/rcrowley/go-metrics, the
// library hystrix-go uses): cumulative counters, the gauge
// circuitOpen, and the timers totalDuration and runDuration with their
// percentiles and rates. The reporter sends the whole registry every
// TickInterval, in the lines of go-metrics' Graphite exporter. go-metrics
// keeps one goroutine of its own for the rates, for the life of the
// process.
//
// # Differences from hystrix-go
//
//   - A configuration that cannot work (no config, an empty address, a
//     negative FlushBytes, a SampleRate outside 0 to 1; a nil
//     GraphiteAddr, a TickInterval that is not positive) is an error that
//     names the field and matches ErrInvalidConfig, returned with a client
//     or a reporter that sends nothing, as hystrix-go returns one when it
//     cannot reach the statsd address; hystrix-go took such values as
//     they were.
//   - StatsdCollectorClient.Close sends what is buffered and stops the
//     client's goroutine; GraphiteReporter.Close stops the reporter's.
//     hystrix-go's could not be stopped, and InitializeGraphiteCollector
//     returned nothing; a call that ignores the results compiles as before.
//   - The Datadog and Graphite collectors send contextCanceled and
//     contextDeadlineExceeded too, as the statsd one does; the Graphite
//     collector sends circuitOpen as well. The Graphite collector does
//     not send concurrencyInUse, as hystrix-go's did not: go-metrics has
//     no timer of shares.
//   - Datadog's namespace gets its dot from datadog-go v5: the prefix
//     "myapp" gives myapp.hystrix.attempts, where hystrix-go's client
//     gave myapphystrix.attempts unless the prefix ended with a dot.
//   - A Graphite sending is bounded by TickInterval: connecting and
//     writing give up after it, and the next tick tries again. With an
//     empty Prefix the names have no leading dot, which go-metrics put
//     there.
package plugins
