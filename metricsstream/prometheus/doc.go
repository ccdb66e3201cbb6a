// Package prometheus exports the metrics of a [metricsstream.Registry] to
// Prometheus: a [Collector] reads the registry's commands, worker pools
// and request collapsers at each scrape and reports them as Prometheus metrics, so a service that
// runs rxhystrix commands serves them on its /metrics next to its own.
//
//	reg := prometheus.NewRegistry() // client_golang's
//	reg.MustRegister(rxprometheus.NewCollector(command.DefaultRegistry.Metrics()))
//	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
//
// (This package is named prometheus, as client_golang's is; import it under
// another name, such as rxprometheus.)
//
// # Metrics
//
// Per command, labelled command and group:
//
//	rxhystrix_command_events_total{event}              counter    executions by Hystrix event type ("SUCCESS", "TIMEOUT", ...)
//	rxhystrix_command_circuit_open                      gauge      1 while the circuit breaker is open, else 0
//	rxhystrix_command_circuit_state{state}              gauge      1 for the breaker's state (CLOSED, OPEN, HALF_OPEN, FORCED_OPEN, FORCED_CLOSED, DISABLED), 0 for the others
//	rxhystrix_command_error_percentage                  gauge      the health window's error percentage (what the breaker judges)
//	rxhystrix_command_health_requests                   gauge      requests in the health window
//	rxhystrix_command_health_errors                     gauge      errors in the health window
//	rxhystrix_command_concurrent_executions             gauge      executions running the command's code now
//	rxhystrix_command_rolling_max_concurrent_executions gauge      their maximum over the rolling window
//	rxhystrix_command_execution_latency_seconds         histogram  how long the command's code ran
//	rxhystrix_command_total_latency_seconds             histogram  how long callers waited
//	rxhystrix_command_completions_dropped_total         counter    completions the Completions stream dropped for slow subscribers
//	rxhystrix_command_stream_subscribers_panicked_total counter    subscribers of its metrics streams that panicked
//	rxhystrix_command_adaptive_limit{algorithm}         gauge      the adaptive limit on the execution permits, when there is one
//	rxhystrix_command_partition_guaranteed{partition}   gauge      the permits a partition (command.Config.Partitions) is guaranteed now
//	rxhystrix_command_partition_in_flight{partition}    gauge      the partition's executions holding a permit
//	rxhystrix_command_partition_rejected_total{partition} counter  the partition's executions refused at the limit
//	rxhystrix_command_backlog_size                      gauge      the most executions that may wait for a permit (command.Config.Backlog)
//	rxhystrix_command_backlog_waiting                   gauge      executions waiting for a permit now
//	rxhystrix_command_backlog_admitted_total            counter    executions that waited and took a permit
//	rxhystrix_command_backlog_wait_seconds_total        counter    how long those waited, in sum: over admitted_total, the mean wait
//	rxhystrix_command_backlog_rejected_total{reason}    counter    executions the backlog refused: "full", or their wait ran out ("timeout")
//	rxhystrix_command_circuit_sleep_window_seconds      gauge      the breaker's sleep window now, when it grows or has a jitter
//	rxhystrix_command_circuit_throttle_ratio            gauge      the share of executions, 0 to 1, the closed breaker refuses now, when it throttles
//	rxhystrix_command_fault_injection_enabled           gauge      1 while the command injects faults (command.Config.Faults), for one that does or did
//	rxhystrix_command_faults_injected_total{fault}      counter    executions delayed ("delay") or failed ("error") by an injected fault
//
// Per worker pool, labelled pool:
//
//	rxhystrix_pool_active_commands  gauge    commands running on the pool's workers
//	rxhystrix_pool_queued_commands  gauge    commands waiting in its queue
//	rxhystrix_pool_executed_total   counter  commands the pool ran (Hystrix's EXECUTED)
//	rxhystrix_pool_rejected_total   counter  commands the pool refused (REJECTED)
//	rxhystrix_pool_core_size        gauge    the pool's CoreSize, or its adaptive limit now
//	rxhystrix_pool_workers          gauge    workers alive now
//	rxhystrix_pool_adaptive_limit{algorithm}  gauge  the adaptive limit on the workers, when there is one
//
// Per request collapser, labelled collapser:
//
//	rxhystrix_collapser_events_total{event}  counter  "BATCH_EXECUTED", "ADDED_TO_BATCH" (requests batched), "RESPONSE_FROM_CACHE"
//
// (the mean batch size over a time is the rate of ADDED_TO_BATCH over that
// of BATCH_EXECUTED).
//
// For the registry, without labels:
//
//	rxhystrix_request_events_dropped_total               counter  ended requests the request events stream dropped for slow subscribers
//	rxhystrix_request_events_subscribers_panicked_total  counter  subscribers of the request events stream that panicked
//
// A Turbine's instances (package turbine) have a collector of their own,
// [NewTurbineCollector], labelled instance:
//
//	rxhystrix_turbine_instance_connected             gauge    1 while the instance's stream is read, else 0
//	rxhystrix_turbine_instance_objects               gauge    the instance's objects in the sum
//	rxhystrix_turbine_instance_ignored_events_total  counter  events of the instance that were not usable
//
// and, for a Turbine that finds its instances with a Discovery, without
// labels:
//
//	rxhystrix_turbine_discovery_failures_total                  counter  discoveries that failed
//	rxhystrix_turbine_discovery_last_success_timestamp_seconds  gauge    when a discovery last found the instances, 0 before
//
// The event counters are the metrics' cumulative counts, which include
// every closed rolling bucket since the metrics were created (so they lag
// by up to one rolling bucket, 1s by default); EXCEPTION_THROWN is derived
// as Hystrix derives it, and COMMAND_MAX_ACTIVE, which nothing records, is
// left out. The gauges are the values the dashboard stream shows. The group
// label is the command's group as the command package reports it (the key
// when nothing reports one). A pool's core size and workers are reported
// only when the command package reports them.
//
// Label values are the keys. Prometheus requires them to be valid UTF-8,
// so a key that is not is escaped: each invalid byte is written \xNN and
// each backslash \\ (a valid key that contains \x is escaped too, so that
// distinct keys never share a label value). A key that is not valid UTF-8
// therefore never fails the scrape of the others.
//
// # Latency histograms are cumulative
//
// Prometheus histograms count from the start of the process and are read
// with rate(); metricsstream keeps latencies only over its percentile
// window (60s by default, in 6 buckets). The collector therefore builds a
// cumulative histogram per command: at each scrape it adds the
// distribution of every closed percentile bucket it has not added yet
// ([metricsstream.CommandMetrics.LatencyBuckets]), counting each latency in
// the histogram buckets ([DefaultLatencyBuckets] or [WithLatencyBuckets])
// at or above it, to the 3 significant digits metricsstream keeps. So:
//
//   - the histograms lag by up to one percentile bucket (10s by default);
//   - they count the latencies of the buckets a scrape saw: scrape at least
//     once per percentile window, or the buckets that left the window
//     between two scrapes are missed;
//   - the first scrape starts from the buckets in the window at that time;
//   - _sum is each bucket's count times its mean, HdrHistogram's mean.
//
// The state of the histograms lives in the Collector: two collectors over
// one registry count apart, and metrics that the registry evicts and makes
// anew start from zero, as a counter reset.
//
// # Concurrency
//
// A Collector is safe for concurrent use; it starts no goroutine and does
// its work in Collect, on the goroutine of the Prometheus registry that
// gathers.
package prometheus
