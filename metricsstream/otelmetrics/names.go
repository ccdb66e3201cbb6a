package otelmetrics

import (
	"go.opentelemetry.io/otel/attribute"

	"github.com/rxhystrix/rxhystrix/internal/otelattr"
	"github.com/rxhystrix/rxhystrix/metricsstream/internal/reading"
)

// The attribute keys. The values are the keys of commands, groups, pools
// and collapsers, escaped as the Prometheus collector escapes its label
// values when they are not valid UTF-8, and Hystrix's event type names.
// The spans of package oteltrace name their command, group, pool and
// collapser by the same keys.
const (
	CommandKey   = otelattr.CommandKey
	GroupKey     = otelattr.GroupKey
	EventKey     = attribute.Key("rxhystrix.event.type")
	PoolKey      = otelattr.PoolKey
	CollapserKey = otelattr.CollapserKey
	// PartitionKey names a partition of a command's execution permits
	// (command.Config.Partitions).
	PartitionKey = attribute.Key("rxhystrix.partition")
	// AlgorithmKey names the algorithm of an adaptive limit ("vegas",
	// "gradient2", "aimd").
	AlgorithmKey = attribute.Key("rxhystrix.limit.algorithm")
	// CircuitStateKey names a state of a command's circuit breaker
	// (metricsstream.CircuitStates).
	CircuitStateKey = attribute.Key("rxhystrix.circuit.state")
	// FaultKey names the kind of an injected fault (command.Config.Faults):
	// "delay" or "error".
	FaultKey = otelattr.FaultKey
	// ReasonKey names why a command's backlog refused an execution
	// (command.Config.Backlog): "full" or "timeout".
	ReasonKey = attribute.Key("rxhystrix.reason")
)

// instrument is the name, unit and description of one instrument.
type instrument struct{ name, unit, description string }

// commandInstruments are the instruments of the command metrics both
// exporters report (reading.CommandPoints), and commandLabelKeys the
// attribute keys of those with a label of their own.
var (
	commandInstruments = [reading.NumCommandMetrics]instrument{
		reading.CommandEvents:                  commandEvents,
		reading.CircuitOpen:                    circuitOpen,
		reading.ErrorPercentage:                errorPercentage,
		reading.HealthRequests:                 healthRequests,
		reading.HealthErrors:                   healthErrors,
		reading.ConcurrentExecutions:           concurrent,
		reading.RollingMaxConcurrentExecutions: rollingMaxConcurrent,
		reading.CompletionsDropped:             completionsDropped,
		reading.StreamPanics:                   streamPanics,
		reading.CircuitState:                   circuitState,
		reading.AdaptiveLimit:                  adaptiveLimit,
		reading.PartitionGuaranteed:            partitionGuaranteed,
		reading.PartitionInFlight:              partitionInFlight,
		reading.PartitionRejected:              partitionRejected,
		reading.BacklogSize:                    backlogSize,
		reading.BacklogWaiting:                 backlogWaiting,
		reading.BacklogAdmitted:                backlogAdmitted,
		reading.BacklogWaitTime:                backlogWaitTime,
		reading.BacklogRejected:                backlogRejected,
		reading.SleepWindow:                    sleepWindow,
		reading.Throttle:                       throttle,
		reading.FaultInjection:                 faultInjection,
		reading.FaultsInjected:                 faultsInjected,
	}
	commandLabelKeys = [reading.NumCommandMetrics]attribute.Key{
		reading.CommandEvents:       EventKey,
		reading.CircuitState:        CircuitStateKey,
		reading.AdaptiveLimit:       AlgorithmKey,
		reading.PartitionGuaranteed: PartitionKey,
		reading.PartitionInFlight:   PartitionKey,
		reading.PartitionRejected:   PartitionKey,
		reading.BacklogRejected:     ReasonKey,
		reading.FaultsInjected:      FaultKey,
	}
)

var (
	commandEvents = instrument{"rxhystrix.command.events", "{event}",
		"Executions of the command by Hystrix event type, since its metrics were created (up to the last closed rolling bucket)."}
	circuitOpen = instrument{"rxhystrix.command.circuit.open", "{circuit}",
		"1 while the command's circuit breaker is open, else 0."}
	circuitState = instrument{"rxhystrix.command.circuit.state", "{circuit}",
		"1 for the state the command's circuit breaker is in (CLOSED, OPEN, HALF_OPEN, FORCED_OPEN, FORCED_CLOSED, DISABLED), 0 for the others."}
	errorPercentage = instrument{"rxhystrix.command.health.error", "%",
		"Errors per 100 requests in the command's health window, truncated: what its circuit breaker compares with its threshold."}
	healthRequests = instrument{"rxhystrix.command.health.requests", "{request}",
		"Requests in the command's health window: successes, failures, timeouts and rejections."}
	healthErrors = instrument{"rxhystrix.command.health.errors", "{error}",
		"Errors in the command's health window: failures, timeouts and rejections."}
	concurrent = instrument{"rxhystrix.command.concurrent_executions", "{execution}",
		"Executions running the command's code now."}
	rollingMaxConcurrent = instrument{"rxhystrix.command.rolling_max_concurrent_executions", "{execution}",
		"The most executions of the command that ran at once, over the rolling window."}
	completionsDropped = instrument{"rxhystrix.command.completions.dropped", "{completion}",
		"Completions of the command that its Completions stream did not deliver because a subscriber was too slow, summed over subscribers."}
	streamPanics = instrument{"rxhystrix.command.stream.subscribers.panicked", "{subscriber}",
		"Subscribers of the command's metrics streams (health counts, completions and the others) that panicked and were unsubscribed."}
	executionDuration = instrument{"rxhystrix.command.execution.duration", "s",
		"How long the command's code ran, for executions that ran; cumulative, from the closed buckets of the percentile window."}
	commandDuration = instrument{"rxhystrix.command.duration", "s",
		"How long callers of the command waited, for executions that ran; cumulative, from the closed buckets of the percentile window."}

	adaptiveLimit = instrument{"rxhystrix.command.adaptive_limit", "{permit}",
		"The adaptive limit on the command's execution permits now, for a semaphore-isolated command that has one."}
	poolAdaptiveLimit = instrument{"rxhystrix.pool.adaptive_limit", "{worker}",
		"The adaptive limit on the pool's workers now, for a pool that has one."}

	partitionGuaranteed = instrument{"rxhystrix.command.partition.guaranteed", "{permit}",
		"The execution permits the partition is guaranteed now, for a command with partitions (command.Config.Partitions)."}
	partitionInFlight = instrument{"rxhystrix.command.partition.in_flight", "{execution}",
		"The partition's executions holding a permit now."}
	partitionRejected = instrument{"rxhystrix.command.partition.rejected", "{execution}",
		"The partition's executions refused at the limit, with the partition holding all it is guaranteed, since the command's key was first used."}

	backlogSize = instrument{"rxhystrix.command.backlog.size", "{execution}",
		"The most executions that may wait for a permit in the command's backlog, for a command that has one (command.Config.Backlog)."}
	backlogWaiting = instrument{"rxhystrix.command.backlog.waiting", "{execution}",
		"Executions waiting for a permit in the command's backlog now."}
	backlogAdmitted = instrument{"rxhystrix.command.backlog.admitted", "{execution}",
		"Executions that waited in the command's backlog and took a permit, since its key was first used."}
	backlogWaitTime = instrument{"rxhystrix.command.backlog.wait_time", "s",
		"How long the executions that waited in the command's backlog and took a permit waited, in sum, since its key was first used."}
	backlogRejected = instrument{"rxhystrix.command.backlog.rejected", "{execution}",
		"Executions of the command refused (SEMAPHORE_REJECTED) by its backlog, by rxhystrix.reason: full (the backlog was) or timeout (the wait ran out before a permit came), since its key was first used."}

	sleepWindow = instrument{"rxhystrix.command.circuit.sleep_window", "s",
		"How long the command's circuit breaker refuses every request once it opens: the window of its latest opening, grown by failed trials and with its jitter, for a breaker whose window grows or has a jitter (breaker.Config.MaxSleepWindow, SleepWindowJitter)."}

	throttle = instrument{"rxhystrix.command.circuit.throttle", "1",
		"The share of executions, 0 to 1, that the command's closed circuit breaker refuses now, for a breaker that throttles (breaker.Config.ThrottleSuccessPercentage)."}

	faultInjection = instrument{"rxhystrix.command.fault_injection.enabled", "1",
		"1 while the command injects faults into its executions (command.Config.Faults), else 0; for a command that does or did."}
	faultsInjected = instrument{"rxhystrix.command.faults.injected", "{execution}",
		"Executions of the command into which a fault was injected (command.Config.Faults), by fault (rxhystrix.fault): delay or error, since its key was first used."}

	poolActive = instrument{"rxhystrix.pool.active_commands", "{command}",
		"Commands running on the pool's workers now."}
	poolQueued = instrument{"rxhystrix.pool.queued_commands", "{command}",
		"Commands waiting in the pool's queue now."}
	poolExecuted = instrument{"rxhystrix.pool.executed", "{command}",
		"Commands the pool ran, since its metrics were created (up to the last closed rolling bucket)."}
	poolRejected = instrument{"rxhystrix.pool.rejected", "{command}",
		"Commands the pool refused, since its metrics were created (up to the last closed rolling bucket)."}
	poolCoreSize = instrument{"rxhystrix.pool.core_size", "{worker}",
		"The most commands the pool's workers run at once: its CoreSize, or its adaptive limit now."}
	poolWorkers = instrument{"rxhystrix.pool.workers", "{worker}",
		"The pool's workers alive now."}

	requestEventsDropped = instrument{"rxhystrix.request_events.dropped", "{request}",
		"Ended requests that the request events stream did not deliver because a subscriber was too slow, summed over subscribers."}
	requestEventsPanics = instrument{"rxhystrix.request_events.subscribers.panicked", "{subscriber}",
		"Subscribers of the request events stream that panicked and were unsubscribed."}

	collapserEvents = instrument{"rxhystrix.collapser.events", "{event}",
		"Events of the request collapser by Hystrix collapser event type, since its metrics were created (up to the last closed rolling bucket)."}
)
