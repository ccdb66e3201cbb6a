package metricsstream

import "time"

// CommandProperties are the settings of a command that the Hystrix
// dashboard shows (its propertyValue_* fields) and the configuration
// stream writes (see [ConfigHandler]). The command package
// reports them through a [CommandStatusProvider]; metricsstream only
// carries them.
type CommandProperties struct {
	CircuitBreakerEnabled         bool
	RequestVolumeThreshold        int
	SleepWindow                   time.Duration
	MaxSleepWindow                time.Duration // 0 when the sleep window does not grow
	SleepWindowMultiplier         float64       // what a failed trial multiplies the sleep window by, with MaxSleepWindow
	SleepWindowJitter             time.Duration // the most random time added to each sleep window
	ErrorThresholdPercentage      int
	ConsecutiveFailures           int     // the run of failures that trips the breaker at once; 0 when none does
	ThrottleSuccessPercentage     int     // the success percentage below which the breaker throttles; 0 when it does not
	ThrottleAggression            float64 // the shape of the throttling curve, with ThrottleSuccessPercentage
	MaxThrottlePercentage         int     // the most executions the breaker throttles, with ThrottleSuccessPercentage
	ForceOpen, ForceClosed        bool
	Isolation                     string        // Hystrix's name: "THREAD" or "SEMAPHORE"
	Timeout                       time.Duration // of the execution
	TimeoutEnabled                bool
	InterruptOnTimeout            bool
	PoolKeyOverride               string // empty when the pool key is not overridden
	MaxConcurrentRequests         int    // an adaptive limit's current limit, when AdaptiveLimit is set
	AdaptiveLimit                 string // the algorithm that sets MaxConcurrentRequests, or "" for a fixed count
	FallbackEnabled               bool
	FallbackMaxConcurrentRequests int
	RequestCacheEnabled           bool
	RequestLogEnabled             bool
}

// SleepWindowVaries reports whether the breaker's sleep window may differ
// from SleepWindow, so that CommandStatus.CircuitBreakerSleepWindow
// tells something: it grows (MaxSleepWindow), or has a jitter.
func (p *CommandProperties) SleepWindowVaries() bool {
	return p.MaxSleepWindow > 0 || p.SleepWindowJitter > 0
}

// Throttles reports whether the breaker throttles executions while
// closed (breaker.Config.ThrottleSuccessPercentage), so that
// CommandStatus.CircuitBreakerThrottle tells something.
func (p *CommandProperties) Throttles() bool { return p.ThrottleSuccessPercentage > 0 }

// CommandStatus is what a command knows of itself that its metrics do not:
// its group and pool keys, whether its circuit breaker is open, and its
// properties.
type CommandStatus struct {
	Group, Pool        string
	CircuitBreakerOpen bool
	// CircuitBreakerState is the state of the command's breaker, one of
	// [CircuitStates], as resilience4j reports it beside the open flag
	// Hystrix has; "" when the provider does not tell it.
	CircuitBreakerState string
	// CircuitBreakerSleepWindow is how long the command's breaker
	// refuses every request once it opens: the window of its latest
	// opening while it is open, grown by failed trials when
	// Properties.MaxSleepWindow is set, with its jitter, and SleepWindow
	// while it is closed.
	CircuitBreakerSleepWindow time.Duration
	// CircuitBreakerThrottle is the probability, 0 to 1, with which the
	// command's closed breaker refuses an execution now, when it
	// throttles (Properties.Throttles); a refused execution is
	// SHORT_CIRCUITED.
	CircuitBreakerThrottle float64
	Properties             CommandProperties
	// Partitions are the partitions of the command's execution permits
	// (command.Config.Partitions), in the order its Config names them;
	// nil for a command without.
	Partitions []PartitionStatus
	// Backlog is the command's backlog of executions waiting for a
	// permit (command.Config.Backlog); its Size is 0 for a command
	// without.
	Backlog BacklogStatus
	// Faults is the command's fault injection (command.Config.Faults)
	// and the faults it has injected.
	Faults FaultStatus
}

// The states of a command's circuit breaker, as
// CommandStatus.CircuitBreakerState names them: the state machine's
// three, and the three that configuration sets over it.
const (
	CircuitClosed       = "CLOSED"
	CircuitOpen         = "OPEN"
	CircuitHalfOpen     = "HALF_OPEN"
	CircuitForcedOpen   = "FORCED_OPEN"   // circuitBreaker.forceOpen
	CircuitForcedClosed = "FORCED_CLOSED" // circuitBreaker.forceClosed
	CircuitDisabled     = "DISABLED"      // circuitBreaker.enabled = false
)

// CircuitStates are the states of a command's circuit breaker, in the
// order above: a metric that has a series for each state lists them so.
var CircuitStates = []string{CircuitClosed, CircuitOpen, CircuitHalfOpen, CircuitForcedOpen, CircuitForcedClosed, CircuitDisabled}

// BacklogStatus is a command's backlog of executions waiting for an
// execution permit (command.Config.Backlog), at the instant of its
// CommandStatus.
type BacklogStatus struct {
	// Size is the most executions that may wait at once.
	Size int
	// Timeout bounds each wait; 0 leaves it to the execution's timeout.
	Timeout time.Duration
	// Order is which waiter a permit given back goes to: "LIFO" or
	// "FIFO".
	Order string
	// Waiting is the number of executions waiting now.
	Waiting int64
	// Admitted counts the executions that waited and took a permit, and
	// WaitTime is how long they waited, in sum: WaitTime / Admitted is
	// the mean wait of an execution the backlog served.
	Admitted int64
	WaitTime time.Duration
	// Full counts the executions refused because the backlog was full,
	// and Expired those whose wait ran out (Timeout, or the time the
	// execution's timeout left) before a permit came: both are
	// SEMAPHORE_REJECTED. An execution whose caller left while it waited
	// is CANCELLED, and in neither.
	Full, Expired int64
}

// FaultStatus is a command's fault injection (command.Config.Faults), at
// the instant of its CommandStatus: its settings, and the faults injected
// since the command's key was first used.
type FaultStatus struct {
	// Enabled is true while the command injects faults: they are on, and
	// Until, when set, has not passed.
	Enabled         bool
	Until           time.Time     // when the faults end by themselves; zero when they do not
	DelayPercentage float64       // the share, 0 to 100, of executions delayed
	Delay           time.Duration // how long each of them is delayed
	ErrorPercentage float64       // the share, 0 to 100, of executions failed
	MarkedOnly      bool          // only executions of marked requests meet the faults
	// Delays counts the executions delayed, and Errors those failed with
	// the injected error instead of running the command's code.
	Delays, Errors int64
}

// Shown reports whether there is anything to show of the fault
// injection: it is on, or has injected faults.
func (f *FaultStatus) Shown() bool { return f.Enabled || f.Delays > 0 || f.Errors > 0 }

// PartitionStatus is one partition of a command's execution permits
// (command.Config.Partitions), at the instant of its CommandStatus.
type PartitionStatus struct {
	Name  string
	Share float64
	// Guaranteed is the number of permits the partition is guaranteed
	// now: ⌈permits × Share⌉, at least one.
	Guaranteed int
	// InFlight is the number of the partition's executions holding a
	// permit.
	InFlight int64
	// Rejected counts the executions of the partition refused at the
	// limit since the command's key was first used: with the partition
	// holding all it is guaranteed, and the other partitions the rest.
	Rejected uint64
}

// CommandStatusProvider reports a command's status. The command package
// registers one per key with [CommandMetrics.SetStatusProvider], so that
// [CommandMetrics.Snapshot] (and the dashboard stream built on it) can
// show the breaker and the properties without metricsstream importing the
// packages above it. CommandStatus is called at every snapshot, from any
// goroutine: it must be safe for concurrent use and quick.
type CommandStatusProvider interface {
	CommandStatus() CommandStatus
}

type commandStatusBox struct{ p CommandStatusProvider }

// SetStatusProvider registers p as the source of the command's status; nil
// removes it. The last call wins.
func (m *CommandMetrics) SetStatusProvider(p CommandStatusProvider) {
	if p == nil {
		m.status.Store(nil)
		return
	}
	m.status.Store(&commandStatusBox{p})
}

// Status returns the status the registered provider reports, and false if
// none is registered (then, as Hystrix does for a key without a breaker,
// the breaker counts as closed).
func (m *CommandMetrics) Status() (CommandStatus, bool) {
	if b := m.status.Load(); b != nil {
		return b.p.CommandStatus(), true
	}
	return CommandStatus{}, false
}

// CommandSnapshot is everything known of a command at one instant: what
// one "HystrixCommand" object of the dashboard stream holds. All values
// are read at Time.
type CommandSnapshot struct {
	Key  string
	Time time.Time
	// Status is the registered provider's report (see
	// [CommandMetrics.SetStatusProvider]); HasStatus is false and Status
	// zero when there is none.
	Status    CommandStatus
	HasStatus bool
	// Health is what the breaker judges by: errorPercentage, errorCount
	// and requestCount in the dashboard.
	Health HealthCounts
	// Rolling and Cumulative are the rolling and cumulative event counts.
	Rolling, Cumulative EventTotals
	// ConcurrentExecutions is the current concurrency and
	// RollingMaxConcurrentExecutions its rolling maximum.
	ConcurrentExecutions, RollingMaxConcurrentExecutions int64
	// Latency holds the execution and total latency distributions
	// (latencyExecute and latencyTotal with their means).
	Latency Latencies
	// Config is the metrics' windows.
	Config Config
}

// Snapshot returns a consistent snapshot of the command's metrics, every
// value read at the same instant of the metrics' clock.
func (m *CommandMetrics) Snapshot() CommandSnapshot {
	now := m.clock.Now()
	s := CommandSnapshot{
		Key:                            m.key,
		Time:                           now,
		Health:                         m.healthAt(now),
		Rolling:                        m.rollingAt(now),
		Cumulative:                     m.cumulativeAt(now),
		ConcurrentExecutions:           m.concurrency.Load(),
		RollingMaxConcurrentExecutions: m.rollingMaxAt(now),
		Latency:                        m.latenciesAt(now),
		Config:                         m.Config(),
	}
	s.Status, s.HasStatus = m.Status()
	return s
}
