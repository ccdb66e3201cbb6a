// Package metricsstream records what Hystrix records of every command
// execution and exposes it as numbers and as streams: the event types
// ([EventType]), rolling and cumulative event counts, the health counts
// the circuit breaker judges by ([HealthCounts]), execution and total
// latency distributions, concurrency, and the metrics of worker pools.
//
// # Recording
//
// A [Registry] holds one [CommandMetrics] per command key and one
// [PoolMetrics] per pool key, created on first use with the [Config] of
// that first call ([DefaultRegistry] runs on the real clock). A command
// calls [CommandMetrics.MarkStart] when the user's code starts and
// [CommandMetrics.MarkCompletion] with a [Completion] when the execution
// ends. Recording takes no lock, starts no goroutine and does not
// allocate, and nothing runs in the background: buckets close because
// time passes, and every value is derived from the buckets when somebody
// asks.
//
// # Times
//
// The methods whose names end in At ([CommandMetrics.MarkStartAt],
// [CommandMetrics.MarkCompletionAt], [PoolMetrics.MarkStartedAt] and the
// others) are for a recorder that has read the registry's clock already,
// and take that reading in Unix nanoseconds, as [time.Time.UnixNano]
// gives it: a command reads the clock when an execution starts and when
// it ends, and measures and places the execution with integer
// subtractions, where building and subtracting time.Time values would
// cost as much as reading the clock. The times must come from the same
// clock as the registry's.
//
// # Reading
//
// Rolling values are made of closed buckets only, as in Hystrix's
// BucketedRollingCounterStream: the rolling count of an event is the sum
// of the last Config.Buckets closed buckets of Config.RollingWindow, and
// it changes only at bucket boundaries. Health counts use buckets of
// Config.HealthSnapshotInterval over the rolling window (Hystrix's
// HealthCountsStream); [CommandMetrics.ResetStream] starts them over from
// empty buckets, as the breaker needs when it closes. Cumulative counts run
// from the creation of the metrics to the last closed bucket.
// EXCEPTION_THROWN is derived from the exception-producing events, never
// recorded. Latency distributions cover Config.PercentileWindow in
// Config.PercentileBuckets buckets. [CommandMetrics.Snapshot] reads
// everything at one instant, which is what a dashboard stream needs; the
// command package reports what only it knows (breaker state, properties,
// group and pool) through a [CommandStatusProvider].
//
// # Streams
//
// Each value is also a hot [observable.Observable]:
// [CommandMetrics.HealthStream], [CommandMetrics.RollingCountsStream],
// [CommandMetrics.CumulativeCountsStream], [CommandMetrics.LatencyStream]
// and [CommandMetrics.MaxConcurrencyStream] emit the current value at
// subscription, then a new value each time a bucket of theirs closes. Such
// a stream runs a timer only while somebody subscribes; the last subscriber
// to leave stops it. The health stream also rests while there is nothing
// new to snapshot (see [CommandMetrics.HealthStream]), so that the keys
// nobody executes cost no timer although their circuit breakers subscribe.
// The first value is delivered inside Subscribe on the subscriber's
// goroutine; the others on the goroutine the clock fires timers on (for
// clock.Real a timer goroutine, for a manual clock the goroutine calling
// Advance), one at a time per subscriber. A subscriber still busy with a
// value has up to 16 waiting; beyond that the oldest are dropped.
// [CommandMetrics.Completions] hands every subscriber a copy of each
// Completion, on a goroutine the subscription owns, with up to 512 waiting
// before new ones are dropped. Recording never waits for a subscriber;
// drops are counted ([CommandMetrics.DroppedNotifications],
// [CommandMetrics.DroppedCompletions]), and exact totals come from the
// cumulative counts, not from counting what a stream delivered. A
// subscriber that panics in OnNext does not take the process down: it is
// unsubscribed, its subscription fails with a [*SubscriberPanicError], and
// it is counted ([CommandMetrics.PanickedSubscribers]); the others go on.
// Cancel the subscription's context or call Unsubscribe to stop; streams
// never complete by themselves.
//
// # Dashboard stream
//
// [Handler] serves a registry's commands, pools and collapsers as the
// Hystrix metrics stream (text/event-stream, Hystrix 1.5.4+'s transport
// and JSON), which the Hystrix Dashboard, Turbine and the dashboard
// subpackage read; the prometheus subpackage exports the same metrics to
// Prometheus. Where the stream differs from Hystrix's servlet (the first
// frame at once, one ping per frame, ?delay= honoured, keys in order,
// pools listed once they have done anything) is listed on Handler.
// [ConfigHandler], [UtilizationHandler] and [RequestEventsHandler] serve
// Hystrix's sibling streams on the same transport: every command's,
// pool's and collapser's settings ("HystrixConfig",
// /hystrix/config.stream), how busy each command and pool is now
// ("HystrixUtilization", /hystrix/utilization.stream), and the executions
// of each request as it ends (/hystrix/requests.stream, the request log
// of a request context, [RequestEvents]).
//
// # Latencies and memory
//
// Latencies are kept in microseconds with HdrHistogram's precision for 3
// significant digits (values below 2.048ms exact, larger ones within
// 0.1%), up to one hour (longer ones count as one hour). Percentiles and
// means are HdrHistogram's: [Distribution.Percentile] returns the highest
// value equivalent to the value at that rank. With the default windows,
// the metrics of an idle command key hold about 1.2 KB, and 4.8 KB once a
// completion was recorded; a key's latency histograms grow with the spread
// of its latencies (about 40 KB per bucket for latencies spread over
// 1–25ms). How recording stays lock-free and uncontended (buckets striped
// per processor) is in docs/design.md.
//
// By default a registry keeps every key forever, as Hystrix does. With
// [WithIdleEviction] it forgets keys idle for a given time (nothing
// recorded, nothing running, nobody subscribed); it sweeps lazily, when a
// new key is created or on [Registry.EvictIdle], and evicted metrics that
// are used again return.
//
// # Differences from Hystrix
//
//   - Buckets start at the creation of the metrics (Hystrix: at the first
//     subscription of each stream, which for health is the creation too)
//     and, for health, at each ResetStream. A completion counts in the
//     bucket of its end time.
//   - The health stream leaves out the snapshots that would repeat the
//     all-zero snapshot of an empty window, which Hystrix emits every
//     interval; the snapshots it sends come at the times Hystrix's would.
//   - There is one stream of each kind per key, and subscriptions outlive
//     ResetStream: the health stream simply ticks at the boundaries of the
//     new buckets (Hystrix replaces the stream and the breaker
//     resubscribes, which works here too).
//   - Latencies are microseconds, not milliseconds, with the same 3
//     significant digits; any percentile may be asked for, not only the
//     ones Hystrix caches.
//   - Config.PercentileDisabled does turn latency recording off (Hystrix
//     1.5 ignores metrics.rollingPercentile.enabled).
//   - Config.SlowCallDuration and HealthCounts.Slow have no Hystrix
//     counterpart: they let a breaker trip on slow calls.
//   - Config.HealthWindowCalls has none either: the health counts are
//     then those of the latest calls, resilience4j's count-based window,
//     and count a call as soon as it is recorded, where the time window
//     counts closed buckets only.
//   - The event types are Hystrix 1.5.12's, then rxhystrix's own RETRIED,
//     HEDGED, RETRY_BUDGET_EXHAUSTED and RATE_LIMITED, which Hystrix has
//     no word for; FALLBACK_DISABLED, added on Hystrix's master after
//     1.5.13, is not one of them.
//   - PoolMetrics.MarkRejected leaves the active count alone (Hystrix's
//     markThreadRejection decrements it without a matching increment).
//   - A completion counts in the buckets of its end time, not in those in
//     progress when it is recorded. Counts are exact once their bucket has
//     closed, however large they grow; a completion recorded at the very
//     moment a bucket closes may miss a read made at that same moment, and
//     appears in the next one.
//     A completion whose end time is so old that its bucket has left the
//     ring (the window and at least two buckets more) counts in the
//     cumulative counts only, at once: no rolling value read since covers
//     its bucket. An end time in the future of the clock is not allowed.
package metricsstream
