package prometheus

import (
	"fmt"
	"slices"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rxhystrix/rxhystrix/internal/label"
	"github.com/rxhystrix/rxhystrix/metricsstream"
	"github.com/rxhystrix/rxhystrix/metricsstream/internal/reading"
)

// Collector is a [prometheus.Collector] over the commands, worker pools
// and request collapsers of a [metricsstream.Registry]; the package documentation lists what it
// reports. Register it with a Prometheus registry; it reads the metrics
// registry at each scrape, so commands made later are reported too.
//
// A Collector is safe for concurrent use. It keeps the running totals of
// the latency histograms; get one with [NewCollector].
type Collector struct {
	registry *metricsstream.Registry
	bounds   []float64 // seconds, increasing

	mu    sync.Mutex
	folds *reading.Folds // over bounds
}

// Descriptions of the metrics.
var (
	commandLabels = []string{"command", "group"}
	poolLabels    = []string{"pool"}

	commandEventsDesc = prometheus.NewDesc("rxhystrix_command_events_total",
		"Executions of the command by Hystrix event type, since its metrics were created (up to the last closed rolling bucket).",
		[]string{"command", "group", "event"}, nil)
	circuitOpenDesc = prometheus.NewDesc("rxhystrix_command_circuit_open",
		"1 while the command's circuit breaker is open, else 0.", commandLabels, nil)
	circuitStateDesc = prometheus.NewDesc("rxhystrix_command_circuit_state",
		"1 for the state the command's circuit breaker is in (CLOSED, OPEN, HALF_OPEN, FORCED_OPEN, FORCED_CLOSED, DISABLED), 0 for the others.",
		[]string{"command", "group", "state"}, nil)
	errorPercentageDesc = prometheus.NewDesc("rxhystrix_command_error_percentage",
		"Errors per 100 requests in the command's health window, truncated: what its circuit breaker compares with its threshold.",
		commandLabels, nil)
	healthRequestsDesc = prometheus.NewDesc("rxhystrix_command_health_requests",
		"Requests in the command's health window: successes, failures, timeouts and rejections.", commandLabels, nil)
	healthErrorsDesc = prometheus.NewDesc("rxhystrix_command_health_errors",
		"Errors in the command's health window: failures, timeouts and rejections.", commandLabels, nil)
	concurrentDesc = prometheus.NewDesc("rxhystrix_command_concurrent_executions",
		"Executions running the command's code now.", commandLabels, nil)
	rollingMaxConcurrentDesc = prometheus.NewDesc("rxhystrix_command_rolling_max_concurrent_executions",
		"The most executions of the command that ran at once, over the rolling window.", commandLabels, nil)
	executionLatencyDesc = prometheus.NewDesc("rxhystrix_command_execution_latency_seconds",
		"How long the command's code ran, for executions that ran; cumulative, from the closed buckets of the percentile window.",
		commandLabels, nil)
	totalLatencyDesc = prometheus.NewDesc("rxhystrix_command_total_latency_seconds",
		"How long callers of the command waited, for executions that ran; cumulative, from the closed buckets of the percentile window.",
		commandLabels, nil)
	completionsDroppedDesc = prometheus.NewDesc("rxhystrix_command_completions_dropped_total",
		"Completions of the command that its Completions stream did not deliver because a subscriber was too slow, summed over subscribers; rxhystrix_command_events_total counts every execution regardless.",
		commandLabels, nil)
	streamPanicsDesc = prometheus.NewDesc("rxhystrix_command_stream_subscribers_panicked_total",
		"Subscribers of the command's metrics streams (health counts, completions and the others) that panicked and were unsubscribed.",
		commandLabels, nil)

	requestEventsDroppedDesc = prometheus.NewDesc("rxhystrix_request_events_dropped_total",
		"Ended requests that the request events stream did not deliver because a subscriber was too slow, summed over subscribers.",
		nil, nil)
	requestEventsPanicsDesc = prometheus.NewDesc("rxhystrix_request_events_subscribers_panicked_total",
		"Subscribers of the request events stream that panicked and were unsubscribed.", nil, nil)

	poolActiveDesc = prometheus.NewDesc("rxhystrix_pool_active_commands",
		"Commands running on the pool's workers now.", poolLabels, nil)
	poolQueuedDesc = prometheus.NewDesc("rxhystrix_pool_queued_commands",
		"Commands waiting in the pool's queue now.", poolLabels, nil)
	poolExecutedDesc = prometheus.NewDesc("rxhystrix_pool_executed_total",
		"Commands the pool ran, since its metrics were created (up to the last closed rolling bucket).", poolLabels, nil)
	poolRejectedDesc = prometheus.NewDesc("rxhystrix_pool_rejected_total",
		"Commands the pool refused, since its metrics were created (up to the last closed rolling bucket).", poolLabels, nil)
	poolCoreSizeDesc = prometheus.NewDesc("rxhystrix_pool_core_size",
		"The most commands the pool's workers run at once: its CoreSize, or its adaptive limit now.", poolLabels, nil)
	poolWorkersDesc = prometheus.NewDesc("rxhystrix_pool_workers",
		"The pool's workers alive now.", poolLabels, nil)
	poolAdaptiveLimitDesc = prometheus.NewDesc("rxhystrix_pool_adaptive_limit",
		"The adaptive limit on the pool's workers now, for a pool that has one.", []string{"pool", "algorithm"}, nil)
	adaptiveLimitDesc = prometheus.NewDesc("rxhystrix_command_adaptive_limit",
		"The adaptive limit on the command's execution permits now, for a semaphore-isolated command that has one.",
		[]string{"command", "group", "algorithm"}, nil)

	partitionLabels         = []string{"command", "group", "partition"}
	partitionGuaranteedDesc = prometheus.NewDesc("rxhystrix_command_partition_guaranteed",
		"The execution permits the partition is guaranteed now, for a command with partitions (command.Config.Partitions).",
		partitionLabels, nil)
	partitionInFlightDesc = prometheus.NewDesc("rxhystrix_command_partition_in_flight",
		"The partition's executions holding a permit now.", partitionLabels, nil)
	partitionRejectedDesc = prometheus.NewDesc("rxhystrix_command_partition_rejected_total",
		"The partition's executions refused at the limit, with the partition holding all it is guaranteed, since the command's key was first used.",
		partitionLabels, nil)

	backlogSizeDesc = prometheus.NewDesc("rxhystrix_command_backlog_size",
		"The most executions that may wait for a permit in the command's backlog, for a command that has one (command.Config.Backlog).",
		commandLabels, nil)
	backlogWaitingDesc = prometheus.NewDesc("rxhystrix_command_backlog_waiting",
		"Executions waiting for a permit in the command's backlog now.", commandLabels, nil)
	backlogAdmittedDesc = prometheus.NewDesc("rxhystrix_command_backlog_admitted_total",
		"Executions that waited in the command's backlog and took a permit, since its key was first used.", commandLabels, nil)
	backlogWaitDesc = prometheus.NewDesc("rxhystrix_command_backlog_wait_seconds_total",
		"How long the executions that waited in the command's backlog and took a permit waited, in sum, since its key was first used: over rxhystrix_command_backlog_admitted_total, the mean wait.",
		commandLabels, nil)
	backlogRejectedDesc = prometheus.NewDesc("rxhystrix_command_backlog_rejected_total",
		"Executions of the command refused (SEMAPHORE_REJECTED) by its backlog, by reason: full (the backlog was) or timeout (the wait ran out before a permit came), since its key was first used.",
		[]string{"command", "group", "reason"}, nil)
	throttleDesc = prometheus.NewDesc("rxhystrix_command_circuit_throttle_ratio",
		"The share of executions, 0 to 1, that the command's closed circuit breaker refuses now, for a breaker that throttles (breaker.Config.ThrottleSuccessPercentage).",
		commandLabels, nil)
	sleepWindowDesc = prometheus.NewDesc("rxhystrix_command_circuit_sleep_window_seconds",
		"How long the command's circuit breaker refuses every request once it opens: the window of its latest opening, grown by failed trials and with its jitter, for a breaker whose window grows or has a jitter (breaker.Config.MaxSleepWindow, SleepWindowJitter).",
		commandLabels, nil)

	faultInjectionDesc = prometheus.NewDesc("rxhystrix_command_fault_injection_enabled",
		"1 while the command injects faults into its executions (command.Config.Faults), else 0; for a command that does or did.",
		commandLabels, nil)
	faultsInjectedDesc = prometheus.NewDesc("rxhystrix_command_faults_injected_total",
		"Executions of the command into which a fault was injected (command.Config.Faults), by fault: delay (the command's code started late) or error (it was not run and the injected error stood for it), since its key was first used.",
		[]string{"command", "group", "fault"}, nil)

	collapserEventsDesc = prometheus.NewDesc("rxhystrix_collapser_events_total",
		"Events of the request collapser by Hystrix collapser event type (BATCH_EXECUTED, ADDED_TO_BATCH, RESPONSE_FROM_CACHE), since its metrics were created (up to the last closed rolling bucket).",
		[]string{"collapser", "event"}, nil)

	// commandDescs are the descriptions of the command metrics both
	// exporters report (reading.CommandPoints).
	commandDescs = [reading.NumCommandMetrics]*prometheus.Desc{
		reading.CommandEvents:                  commandEventsDesc,
		reading.CircuitOpen:                    circuitOpenDesc,
		reading.ErrorPercentage:                errorPercentageDesc,
		reading.HealthRequests:                 healthRequestsDesc,
		reading.HealthErrors:                   healthErrorsDesc,
		reading.ConcurrentExecutions:           concurrentDesc,
		reading.RollingMaxConcurrentExecutions: rollingMaxConcurrentDesc,
		reading.CompletionsDropped:             completionsDroppedDesc,
		reading.StreamPanics:                   streamPanicsDesc,
		reading.CircuitState:                   circuitStateDesc,
		reading.AdaptiveLimit:                  adaptiveLimitDesc,
		reading.PartitionGuaranteed:            partitionGuaranteedDesc,
		reading.PartitionInFlight:              partitionInFlightDesc,
		reading.PartitionRejected:              partitionRejectedDesc,
		reading.BacklogSize:                    backlogSizeDesc,
		reading.BacklogWaiting:                 backlogWaitingDesc,
		reading.BacklogAdmitted:                backlogAdmittedDesc,
		reading.BacklogWaitTime:                backlogWaitDesc,
		reading.BacklogRejected:                backlogRejectedDesc,
		reading.SleepWindow:                    sleepWindowDesc,
		reading.Throttle:                       throttleDesc,
		reading.FaultInjection:                 faultInjectionDesc,
		reading.FaultsInjected:                 faultsInjectedDesc,
	}

	// allDescs are every description: commandDescs', then the others.
	allDescs = append(commandDescs[:],
		executionLatencyDesc, totalLatencyDesc, requestEventsDroppedDesc, requestEventsPanicsDesc,
		poolActiveDesc, poolQueuedDesc, poolExecutedDesc, poolRejectedDesc, poolCoreSizeDesc, poolWorkersDesc,
		poolAdaptiveLimitDesc, collapserEventsDesc,
	)
)

// NewCollector returns a Collector over the metrics of r, for example
// command.DefaultRegistry.Metrics() or metricsstream.DefaultRegistry. It
// panics if r or an option is nil.
func NewCollector(r *metricsstream.Registry, opts ...Option) *Collector {
	if r == nil {
		panic("prometheus: NewCollector with nil registry")
	}
	c := &Collector{
		registry: r,
		bounds:   slices.Clone(DefaultLatencyBuckets),
	}
	for i, o := range opts {
		if o == nil {
			panic(fmt.Sprintf("prometheus: NewCollector: option %d is nil", i))
		}
		o.apply(c)
	}
	c.folds = reading.NewFolds(c.bounds)
	return c
}

// Describe sends the descriptions of every metric the Collector reports.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range allDescs {
		ch <- d
	}
}

// Collect sends the current value of every metric of the registry and
// of every command, pool and collapser in it.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(requestEventsDroppedDesc, prometheus.CounterValue,
		float64(c.registry.DroppedRequestEvents()))
	ch <- prometheus.MustNewConstMetric(requestEventsPanicsDesc, prometheus.CounterValue,
		float64(c.registry.PanickedSubscribers()))
	for _, m := range c.collectCommands() {
		ch <- m
	}
	for p := range c.registry.Pools() {
		collectPool(ch, p.Snapshot())
	}
	for m := range c.registry.Collapsers() {
		key := label.Value(m.Key())
		for e := range metricsstream.NumCollapserEventTypes {
			ch <- prometheus.MustNewConstMetric(collapserEventsDesc, prometheus.CounterValue,
				float64(m.CumulativeCount(e)), key, e.String())
		}
	}
}

// collectCommands returns the metrics of every command, folding the new
// latency buckets into the histograms' totals.
func (c *Collector) collectCommands() []prometheus.Metric {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.folds.Begin(c.registry.Clock().Now())
	defer c.folds.End() // forgets the totals of metrics the registry no longer holds
	var out []prometheus.Metric
	for m := range c.registry.Commands() {
		s := m.Snapshot()
		labels := []string{label.Value(s.Key), label.Value(reading.Group(s))}
		for p := range reading.CommandPoints(m, &s) {
			kind := prometheus.GaugeValue
			if p.Metric.Counter() {
				kind = prometheus.CounterValue
			}
			l := labels
			if p.Metric.Labelled() {
				l = append(labels[:2:2], p.Label)
			}
			out = append(out, prometheus.MustNewConstMetric(commandDescs[p.Metric], kind, p.Value, l...))
		}
		f := c.folds.Add(m)
		out = append(out,
			histogram(executionLatencyDesc, &f.Execution, c.bounds, labels),
			histogram(totalLatencyDesc, &f.Total, c.bounds, labels),
		)
	}
	return out
}

func collectPool(ch chan<- prometheus.Metric, s metricsstream.PoolSnapshot) {
	labels := []string{label.Value(s.Key)}
	ch <- gauge(poolActiveDesc, float64(s.ActiveCount), labels)
	ch <- gauge(poolQueuedDesc, float64(s.QueueSize), labels)
	ch <- prometheus.MustNewConstMetric(poolExecutedDesc, prometheus.CounterValue,
		float64(s.Cumulative[metricsstream.PoolExecuted]), labels...)
	ch <- prometheus.MustNewConstMetric(poolRejectedDesc, prometheus.CounterValue,
		float64(s.Cumulative[metricsstream.PoolRejection]), labels...)
	if s.HasStatus {
		ch <- gauge(poolCoreSizeDesc, float64(s.Status.CoreSize), labels)
		ch <- gauge(poolWorkersDesc, float64(s.Status.PoolSize), labels)
		if s.Status.AdaptiveLimit != "" {
			ch <- gauge(poolAdaptiveLimitDesc, float64(s.Status.CoreSize), append(labels, s.Status.AdaptiveLimit))
		}
	}
}

func gauge(d *prometheus.Desc, v float64, labels []string) prometheus.Metric {
	return prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
}

func histogram(d *prometheus.Desc, h *reading.Histogram, bounds []float64, labels []string) prometheus.Metric {
	buckets := make(map[float64]uint64, len(bounds))
	for i, b := range bounds {
		buckets[b] = h.AtOrBelow[i]
	}
	return prometheus.MustNewConstHistogram(d, h.Count, h.Sum, buckets, labels...)
}
