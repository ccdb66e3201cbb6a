package reading

import (
	"iter"

	"github.com/rxhystrix/rxhystrix/internal/label"
	"github.com/rxhystrix/rxhystrix/metricsstream"
)

// CommandMetric is one of the metrics of a command that both exporters
// report, each under its own name: the Prometheus collector's
// rxhystrix_command_* and the OpenTelemetry rxhystrix.command.* (the
// latency histograms aside, which are folded, see Folds).
type CommandMetric int

// The command metrics, in the order CommandPoints yields them.
const (
	CommandEvents                  CommandMetric = iota // counter, by event type: the cumulative count
	CircuitOpen                                         // 1 while the breaker is open, else 0
	ErrorPercentage                                     // of the health window
	HealthRequests                                      // in the health window
	HealthErrors                                        // in the health window
	ConcurrentExecutions                                // now
	RollingMaxConcurrentExecutions                      // over the rolling window
	CompletionsDropped                                  // counter
	StreamPanics                                        // counter
	CircuitState                                        // by state: 1 for the breaker's state, 0 for the others
	AdaptiveLimit                                       // by algorithm: the limit on the permits now
	PartitionGuaranteed                                 // by partition
	PartitionInFlight                                   // by partition
	PartitionRejected                                   // counter, by partition
	BacklogSize                                         // with a backlog
	BacklogWaiting                                      // with a backlog
	BacklogAdmitted                                     // counter, with a backlog: the waits that took a permit
	BacklogWaitTime                                     // counter, seconds, with a backlog: how long those waited
	BacklogRejected                                     // counter, by reason ("full", "timeout"), with a backlog
	SleepWindow                                         // seconds, when the window varies
	Throttle                                            // 0 to 1, when the breaker throttles
	FaultInjection                                      // 1 while faults are injected, else 0, when they are or were
	FaultsInjected                                      // counter, by fault ("delay", "error"), when they are or were
	NumCommandMetrics                                   // how many there are
)

// Counter reports whether the metric only grows (a counter), rather than
// going up and down (a gauge).
func (m CommandMetric) Counter() bool {
	switch m {
	case CommandEvents, CompletionsDropped, StreamPanics, PartitionRejected, BacklogAdmitted, BacklogWaitTime, BacklogRejected, FaultsInjected:
		return true
	}
	return false
}

// Labelled reports whether the metric has a label of its own beside the
// command and its group (Point.Label): the event type, the state, the
// algorithm, the partition, the reason of a refusal or the fault.
func (m CommandMetric) Labelled() bool {
	switch m {
	case CommandEvents, CircuitState, AdaptiveLimit, PartitionGuaranteed, PartitionInFlight, PartitionRejected, BacklogRejected, FaultsInjected:
		return true
	}
	return false
}

// Fractional reports whether the metric's values have fractions (seconds,
// a ratio), where the others are whole numbers.
func (m CommandMetric) Fractional() bool {
	return m == BacklogWaitTime || m == SleepWindow || m == Throttle
}

// Point is one value of a command's metric.
type Point struct {
	Metric CommandMetric
	// Label is the value of the metric's own label (see Labelled), "" for
	// a metric without one, escaped as label.Value escapes where it comes
	// from the program (a partition's name).
	Label string
	Value float64
}

// CommandPoints yields the values of every metric of the command whose
// metrics are m, as s (m's Snapshot) tells them: what both exporters
// report of it, in the order of the CommandMetric constants. A metric
// of a feature the command does not use (a backlog, partitions, faults)
// yields nothing.
func CommandPoints(m *metricsstream.CommandMetrics, s *metricsstream.CommandSnapshot) iter.Seq[Point] {
	return func(yield func(Point) bool) {
		for e := range EventTypes() {
			if !yield(Point{CommandEvents, e.String(), float64(s.Cumulative[e])}) {
				return
			}
		}
		st := &s.Status
		plain := [...]Point{
			{CircuitOpen, "", one(st.CircuitBreakerOpen)},
			{ErrorPercentage, "", float64(s.Health.ErrorPercentage)},
			{HealthRequests, "", float64(s.Health.Total)},
			{HealthErrors, "", float64(s.Health.Errors)},
			{ConcurrentExecutions, "", float64(s.ConcurrentExecutions)},
			{RollingMaxConcurrentExecutions, "", float64(s.RollingMaxConcurrentExecutions)},
			{CompletionsDropped, "", float64(m.DroppedCompletions())},
			{StreamPanics, "", float64(m.PanickedSubscribers())},
		}
		for _, p := range plain {
			if !yield(p) {
				return
			}
		}
		if state := st.CircuitBreakerState; state != "" {
			for _, each := range metricsstream.CircuitStates {
				if !yield(Point{CircuitState, each, one(each == state)}) {
					return
				}
			}
		}
		if p := &st.Properties; p.AdaptiveLimit != "" {
			if !yield(Point{AdaptiveLimit, p.AdaptiveLimit, float64(p.MaxConcurrentRequests)}) {
				return
			}
		}
		for _, p := range st.Partitions {
			name := label.Value(p.Name)
			if !yield(Point{PartitionGuaranteed, name, float64(p.Guaranteed)}) ||
				!yield(Point{PartitionInFlight, name, float64(p.InFlight)}) ||
				!yield(Point{PartitionRejected, name, float64(p.Rejected)}) {
				return
			}
		}
		if b := &st.Backlog; b.Size > 0 {
			if !yield(Point{BacklogSize, "", float64(b.Size)}) || !yield(Point{BacklogWaiting, "", float64(b.Waiting)}) ||
				!yield(Point{BacklogAdmitted, "", float64(b.Admitted)}) || !yield(Point{BacklogWaitTime, "", b.WaitTime.Seconds()}) ||
				!yield(Point{BacklogRejected, "full", float64(b.Full)}) || !yield(Point{BacklogRejected, "timeout", float64(b.Expired)}) {
				return
			}
		}
		if st.Properties.SleepWindowVaries() {
			if !yield(Point{SleepWindow, "", st.CircuitBreakerSleepWindow.Seconds()}) {
				return
			}
		}
		if st.Properties.Throttles() {
			if !yield(Point{Throttle, "", st.CircuitBreakerThrottle}) {
				return
			}
		}
		if f := &st.Faults; f.Shown() {
			_ = yield(Point{FaultInjection, "", one(f.Enabled)}) &&
				yield(Point{FaultsInjected, "delay", float64(f.Delays)}) &&
				yield(Point{FaultsInjected, "error", float64(f.Errors)})
		}
	}
}

// one is 1 for true and 0 for false.
func one(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
