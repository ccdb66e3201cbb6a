// Package hystrix is a drop-in replacement for hystrix-go
// (github.com/afex/hystrix-go/hystrix) on rxhystrix's engine. A program
// changes its imports and nothing else:
//
//	github.com/afex/hystrix-go/hystrix                  → github.com/rxhystrix/rxhystrix/hystrixgo
//	github.com/afex/hystrix-go/hystrix/metric_collector → github.com/rxhystrix/rxhystrix/hystrixgo/metric_collector
//	github.com/afex/hystrix-go/plugins                  → github.com/rxhystrix/rxhystrix/hystrixgo/plugins (statsd, Datadog, Graphite)
//
// and its calls keep their meaning:
//
//	hystrix.ConfigureCommand("get_user", hystrix.CommandConfig{Timeout: 500, MaxConcurrentRequests: 20})
//	err := hystrix.Do("get_user", func() error { return fetchUser() }, func(err error) error {
//		return useCachedUser() // called with run's error, ErrTimeout, ErrCircuitOpen or ErrMaxConcurrency
//	})
//
// Each name is an rxhystrix command key (see package command) run in a
// pool of its own of MaxConcurrentRequests workers with no queue, with
// the key's circuit breaker, timeout and metrics. So the same commands
// are also on rxhystrix's own dashboard stream (metricsstream.Handler),
// dashboard and Prometheus collector, beside this package's
// StreamHandler, which writes hystrix-go's stream; and they take
// rxhystrix's injected faults (command.Config.Faults, set live with
// httpcommand.FaultsHandler(command.DefaultRegistry)), which
// ConfigureCommand keeps. A name that rxhystrix does not take as a key
// (the empty name, or one that is not valid UTF-8), and one that starts
// with a quote mark, is its key quoted as strconv.Quote quotes it: the
// empty name is the key `""` there.
//
// # Where it is deliberately better than hystrix-go
//
//   - The bulkhead holds (the one intended difference in behaviour):
//     hystrix-go frees a concurrency slot the moment the caller's timeout
//     fires, while run goes on, so goroutines pile up behind a hung
//     downstream. Here the caller still gets ErrTimeout at Timeout, and
//     run's context is cancelled then, but run keeps its slot until it
//     returns: MaxConcurrentRequests bounds the runs in flight, not only
//     the callers waiting. Run's context ends at the timeout while run
//     runs and whenever the caller's context ends, not once run has
//     returned, so a response body run returns stays readable after DoC
//     until the caller's context ends, as with hystrix-go's caller's
//     context.
//   - A panic in run or in the fallback is recovered and counted as a
//     failure (the error is a *command.PanicError) instead of crashing
//     the process.
//   - A success while the circuit is closed but unhealthy does not open
//     and at once close it again.
//
// # The circuit
//
// A name's circuit is rxhystrix's breaker (package breaker), which keeps
// Hystrix 1.5's rules. Where they differ from hystrix-go's:
//
//   - It trips on health counts taken every 250ms (Hystrix 1.5's way, at
//     a shorter interval than its 500ms), so it opens up to that long
//     after the request that tips it; hystrix-go checks on every request.
//   - The error percentage is truncated, as Hystrix's is; hystrix-go
//     rounds it. With ErrorPercentThreshold 67, two failures in three
//     requests (66.7%) open hystrix-go's circuit and not this one.
//   - A call whose caller's context ended before it did counts neither
//     as a request nor as an error; hystrix-go counts it as a request.
//   - Only a trial closes an open circuit. A call let through before the
//     circuit opened that succeeds while it waits out SleepWindow leaves
//     it open, where hystrix-go closes it.
//   - A trial that does not succeed opens the circuit again for a new
//     SleepWindow from its end; hystrix-go lets the next trial through
//     SleepWindow after the last one started. After a trial that timed
//     out, the next comes Timeout later here.
//
// metricCollector.Registry starts empty: neither the circuit nor
// rxhystrix's metrics need a collector. Register metricCollector.NewDefaultMetricCollector for
// hystrix-go's rolling counters. A collector's Update is called on the
// caller's goroutine as the command ends, where hystrix-go queues the
// result for a goroutine of its own (dropping it when 2,000 wait): a
// collector must not block, or it delays the callers. Flush resets the
// circuits and the collectors, not rxhystrix's rolling counts, which the
// stream shows until they roll out of the window.
package hystrix
