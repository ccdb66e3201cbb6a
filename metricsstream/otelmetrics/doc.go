// Package otelmetrics reports the metrics of a [metricsstream.Registry]
// to OpenTelemetry: the same events, health, concurrency, latencies and
// pool figures as the Prometheus collector (package
// metricsstream/prometheus), read from the registry the same way, so the
// two agree value for value. It is a package of its own so that programs
// that do not use OpenTelemetry do not link it.
//
//	rx := otelmetrics.New(command.DefaultRegistry.Metrics())
//	reader := sdkmetric.NewPeriodicReader(exporter, sdkmetric.WithProducer(rx)) // or otelprom.New(otelprom.WithProducer(rx))
//	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
//	if _, err := rx.Register(provider.Meter(otelmetrics.ScopeName)); err != nil { ... }
//
// # Instruments
//
// Per command, with the attributes rxhystrix.command.name and
// rxhystrix.command.group:
//
//	rxhystrix.command.events{rxhystrix.event.type}       counter    {event}      executions by Hystrix event type ("SUCCESS", "TIMEOUT", ...)
//	rxhystrix.command.circuit.open                       gauge      {circuit}    1 while the circuit breaker is open, else 0
//	rxhystrix.command.circuit.state{rxhystrix.circuit.state}  gauge  {circuit}  1 for the breaker's state (CLOSED, OPEN, HALF_OPEN, ...), 0 for the others
//	rxhystrix.command.health.error                       gauge      %            the health window's error percentage (what the breaker judges)
//	rxhystrix.command.health.requests                    gauge      {request}    requests in the health window
//	rxhystrix.command.health.errors                      gauge      {error}      errors in the health window
//	rxhystrix.command.concurrent_executions              gauge      {execution}  executions running the command's code now
//	rxhystrix.command.rolling_max_concurrent_executions  gauge      {execution}  their maximum over the rolling window
//	rxhystrix.command.completions.dropped                counter    {completion} completions the Completions stream dropped for slow subscribers
//	rxhystrix.command.stream.subscribers.panicked        counter    {subscriber} subscribers of its metrics streams that panicked
//	rxhystrix.command.execution.duration                 histogram  s            how long the command's code ran
//	rxhystrix.command.duration                           histogram  s            how long callers waited
//	rxhystrix.command.adaptive_limit{rxhystrix.limit.algorithm}  gauge  {permit}  the adaptive limit on the permits, when there is one
//
// and, per partition of a command's permits (command.Config.Partitions),
// with rxhystrix.partition as well:
//
//	rxhystrix.command.partition.guaranteed  gauge    {permit}     the permits the partition is guaranteed now
//	rxhystrix.command.partition.in_flight   gauge    {execution}  its executions holding a permit
//	rxhystrix.command.partition.rejected    counter  {execution}  its executions refused at the limit
//
// and, for a command with a backlog (command.Config.Backlog), with the
// command's attributes:
//
//	rxhystrix.command.backlog.size                       gauge    {execution}  the most executions that may wait for a permit
//	rxhystrix.command.backlog.waiting                    gauge    {execution}  executions waiting for a permit now
//	rxhystrix.command.backlog.admitted                   counter  {execution}  executions that waited and took a permit
//	rxhystrix.command.backlog.wait_time                  counter  s            how long those waited, in sum
//	rxhystrix.command.backlog.rejected{rxhystrix.reason} counter  {execution}  executions the backlog refused: "full", or "timeout"
//
// and, for a command whose breaker's sleep window grows or has a jitter
// (breaker.Config.MaxSleepWindow, SleepWindowJitter), with the command's
// attributes:
//
//	rxhystrix.command.circuit.sleep_window  gauge  s  the breaker's sleep window now
//
// and, for a command whose breaker throttles
// (breaker.Config.ThrottleSuccessPercentage), with the command's
// attributes:
//
//	rxhystrix.command.circuit.throttle  gauge  1  the share of executions, 0 to 1, the closed breaker refuses now
//
// and, for a command that injects faults or did (command.Config.Faults),
// with the command's attributes:
//
//	rxhystrix.command.fault_injection.enabled  gauge    1            1 while it injects faults, else 0
//	rxhystrix.command.faults.injected          counter  {execution}  executions delayed or failed by a fault, by rxhystrix.fault ("delay", "error")
//
// Per worker pool, with rxhystrix.pool.name:
//
//	rxhystrix.pool.active_commands  gauge    {command}  commands running on the pool's workers
//	rxhystrix.pool.queued_commands  gauge    {command}  commands waiting in its queue
//	rxhystrix.pool.executed         counter  {command}  commands the pool ran (Hystrix's EXECUTED)
//	rxhystrix.pool.rejected         counter  {command}  commands the pool refused (REJECTED)
//	rxhystrix.pool.core_size        gauge    {worker}   the pool's CoreSize, or its adaptive limit now (when the command package reports it)
//	rxhystrix.pool.workers          gauge    {worker}   workers alive now (likewise)
//	rxhystrix.pool.adaptive_limit{rxhystrix.limit.algorithm}  gauge  {worker}  the adaptive limit on the workers, when there is one
//
// Per request collapser, with rxhystrix.collapser.name:
//
//	rxhystrix.collapser.events{rxhystrix.event.type}  counter  {event}  "BATCH_EXECUTED", "ADDED_TO_BATCH", "RESPONSE_FROM_CACHE"
//
// For the registry, without attributes:
//
//	rxhystrix.request_events.dropped               counter  {request}     ended requests the request events stream dropped for slow subscribers
//	rxhystrix.request_events.subscribers.panicked  counter  {subscriber}  subscribers of the request events stream that panicked
//
// A Turbine's instances (package turbine) have instruments of their own,
// with rxhystrix.turbine.instance.url, which [RegisterTurbine] makes:
//
//	rxhystrix.turbine.instance.connected       gauge    {instance}  1 while the instance's stream is read, else 0
//	rxhystrix.turbine.instance.objects         gauge    {object}    the instance's objects in the sum
//	rxhystrix.turbine.instance.ignored_events  counter  {event}     events of the instance that were not usable
//
// and, without attributes, those of a Turbine's discovery of its
// instances (turbine.WithDiscovery):
//
//	rxhystrix.turbine.discovery.failures       counter  {discovery}  discoveries that failed
//	rxhystrix.turbine.discovery.last_success   gauge    s            when a discovery last found the instances (Unix time), 0 before
//
// The counters are observable counters, cumulative, and the gauges
// observable gauges, all read by one callback that [Metrics.Register]
// registers. The event counter has one series per event type of
// metricsstream but COMMAND_MAX_ACTIVE (a gauge of its own), as the
// Prometheus collector's; an event type added to metricsstream appears
// in both. Counters lag by up to one rolling bucket (1s by default),
// since they count closed buckets; the gauges are the values the
// dashboard stream shows.
//
// # Names
//
// OpenTelemetry has no semantic conventions for circuit breakers,
// bulkheads or collapsers yet, so the names follow its general naming
// rules for metrics and attributes (the semantic conventions' "Metrics"
// and "Attribute naming" guidelines): lowercase, dot-separated namespaces
// under the project's own, rxhystrix; units in the instrument's unit, in
// UCUM ("s", "%") or as annotations in braces ("{event}"), never in the
// name; no _total suffix on counters (exporters add it); an attribute
// that names a thing ends in .name. The Prometheus exporter translates
// them into rxhystrix_command_events_total{rxhystrix_command_name=...},
// rxhystrix_command_execution_duration_seconds and so on: the Prometheus
// collector's event counters keep their names, the rest differ where OTel
// and Prometheus conventions do. Attribute values are the keys, escaped
// as the Prometheus collector escapes its label values when a key is not
// valid UTF-8 or holds `\x` (and so could pass for an escaped one).
//
// # Latency histograms come through a producer
//
// metricsstream keeps latencies as HdrHistogram distributions per
// percentile bucket (10s by default), not one measurement at a time, and
// the OpenTelemetry API has no instrument that accepts a histogram
// already bucketed (there is no observable histogram). So the histograms
// are not instruments of the Meter: [Metrics] is a
// [go.opentelemetry.io/otel/sdk/metric.Producer], as OpenTelemetry's own
// bridges are, and a reader given it with WithProducer gets both
// histograms as cumulative explicit-bucket histograms in seconds, over
// [WithLatencyBuckets] or the Prometheus collector's default bounds. They
// are built exactly as the Prometheus collector's are: each collection
// adds every closed percentile bucket it has not added yet, so they lag
// by up to one percentile bucket, and must be collected at least once a
// percentile window (60s by default) or the buckets that left it are
// missed. Their start time is when [New] was called, or, for a command
// whose metrics idle eviction took out for longer than their percentile
// window and whose histograms therefore start again from zero, the time
// of the collection before they came back; their time is the registry's
// clock.
//
// Every instrument is cumulative, as metricsstream counts. A reader
// configured for delta temporality gets its deltas from the SDK, which
// remembers only the series of the collection before: a command whose
// metrics idle eviction took out and that comes back reports its whole
// count again as one delta. Read these instruments with cumulative
// temporality, the SDK's default, or evict only keys that do not come
// back.
//
// # Concurrency
//
// Metrics is safe for concurrent use and starts no goroutine: the
// callback and Produce run on the reader's goroutine, at collection.
package otelmetrics
