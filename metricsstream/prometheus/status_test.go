package prometheus

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"

	"github.com/rxhystrix/rxhystrix/clock"
	"github.com/rxhystrix/rxhystrix/metricsstream"
)

const wantBacklog = `
# HELP rxhystrix_command_backlog_size The most executions that may wait for a permit in the command's backlog, for a command that has one (command.Config.Backlog).
# TYPE rxhystrix_command_backlog_size gauge
rxhystrix_command_backlog_size{command="Search",group="Web"} 50
# HELP rxhystrix_command_backlog_waiting Executions waiting for a permit in the command's backlog now.
# TYPE rxhystrix_command_backlog_waiting gauge
rxhystrix_command_backlog_waiting{command="Search",group="Web"} 7
# HELP rxhystrix_command_backlog_admitted_total Executions that waited in the command's backlog and took a permit, since its key was first used.
# TYPE rxhystrix_command_backlog_admitted_total counter
rxhystrix_command_backlog_admitted_total{command="Search",group="Web"} 40
# HELP rxhystrix_command_backlog_wait_seconds_total How long the executions that waited in the command's backlog and took a permit waited, in sum, since its key was first used: over rxhystrix_command_backlog_admitted_total, the mean wait.
# TYPE rxhystrix_command_backlog_wait_seconds_total counter
rxhystrix_command_backlog_wait_seconds_total{command="Search",group="Web"} 2.5
# HELP rxhystrix_command_backlog_rejected_total Executions of the command refused (SEMAPHORE_REJECTED) by its backlog, by reason: full (the backlog was) or timeout (the wait ran out before a permit came), since its key was first used.
# TYPE rxhystrix_command_backlog_rejected_total counter
rxhystrix_command_backlog_rejected_total{command="Search",group="Web",reason="full"} 3
rxhystrix_command_backlog_rejected_total{command="Search",group="Web",reason="timeout"} 1
`

// A command with a backlog reports its size, its waiters and what their
// waits came to; a command without has none of those series.
func TestCollectorReportsBacklogs(t *testing.T) {
	reg := metricsstream.NewRegistry(clock.NewManual(t0))
	reg.Command("Search", metricsstream.Config{}).SetStatusProvider(commandStatus{
		Group:   "Web",
		Backlog: metricsstream.BacklogStatus{Size: 50, Order: "LIFO", Waiting: 7, Admitted: 40, WaitTime: 2500 * time.Millisecond, Full: 3, Expired: 1},
	})
	reg.Command("Plain", metricsstream.Config{}).SetStatusProvider(commandStatus{})
	c := NewCollector(reg)
	gather(t, c)
	assert.NoError(t, testutil.CollectAndCompare(c, strings.NewReader(wantBacklog),
		"rxhystrix_command_backlog_size", "rxhystrix_command_backlog_waiting", "rxhystrix_command_backlog_admitted_total",
		"rxhystrix_command_backlog_wait_seconds_total", "rxhystrix_command_backlog_rejected_total"))
}

const wantSleepWindow = `
# HELP rxhystrix_command_circuit_sleep_window_seconds How long the command's circuit breaker refuses every request once it opens: the window of its latest opening, grown by failed trials and with its jitter, for a breaker whose window grows or has a jitter (breaker.Config.MaxSleepWindow, SleepWindowJitter).
# TYPE rxhystrix_command_circuit_sleep_window_seconds gauge
rxhystrix_command_circuit_sleep_window_seconds{command="Reserve",group="Web"} 5.3
rxhystrix_command_circuit_sleep_window_seconds{command="Search",group="Web"} 20
`

// A command whose breaker's sleep window grows or has a jitter reports
// the window now; a command whose window is fixed does not.
func TestCollectorReportsGrowingSleepWindows(t *testing.T) {
	reg := metricsstream.NewRegistry(clock.NewManual(t0))
	reg.Command("Search", metricsstream.Config{}).SetStatusProvider(commandStatus{
		Group:                     "Web",
		CircuitBreakerSleepWindow: 20 * time.Second,
		Properties:                metricsstream.CommandProperties{SleepWindow: 5 * time.Second, MaxSleepWindow: time.Minute, SleepWindowMultiplier: 2},
	})
	reg.Command("Reserve", metricsstream.Config{}).SetStatusProvider(commandStatus{
		Group:                     "Web",
		CircuitBreakerSleepWindow: 5300 * time.Millisecond,
		Properties:                metricsstream.CommandProperties{SleepWindow: 5 * time.Second, SleepWindowJitter: time.Second},
	})
	reg.Command("Plain", metricsstream.Config{}).SetStatusProvider(commandStatus{
		CircuitBreakerSleepWindow: 5 * time.Second,
		Properties:                metricsstream.CommandProperties{SleepWindow: 5 * time.Second},
	})
	c := NewCollector(reg)
	gather(t, c)
	assert.NoError(t, testutil.CollectAndCompare(c, strings.NewReader(wantSleepWindow),
		"rxhystrix_command_circuit_sleep_window_seconds"))
}

const wantThrottle = `
# HELP rxhystrix_command_circuit_throttle_ratio The share of executions, 0 to 1, that the command's closed circuit breaker refuses now, for a breaker that throttles (breaker.Config.ThrottleSuccessPercentage).
# TYPE rxhystrix_command_circuit_throttle_ratio gauge
rxhystrix_command_circuit_throttle_ratio{command="Idle",group="Web"} 0
rxhystrix_command_circuit_throttle_ratio{command="Search",group="Web"} 0.365
`

// A command whose breaker throttles reports the share it refuses now,
// zero while it refuses none; a command whose breaker does not throttle
// has no series.
func TestCollectorReportsThrottles(t *testing.T) {
	reg := metricsstream.NewRegistry(clock.NewManual(t0))
	throttles := metricsstream.CommandProperties{ThrottleSuccessPercentage: 50, ThrottleAggression: 1, MaxThrottlePercentage: 80}
	reg.Command("Search", metricsstream.Config{}).SetStatusProvider(commandStatus{
		Group: "Web", CircuitBreakerThrottle: 0.365, Properties: throttles,
	})
	reg.Command("Idle", metricsstream.Config{}).SetStatusProvider(commandStatus{Group: "Web", Properties: throttles})
	reg.Command("Plain", metricsstream.Config{}).SetStatusProvider(commandStatus{Group: "Web"})
	c := NewCollector(reg)
	gather(t, c)
	assert.NoError(t, testutil.CollectAndCompare(c, strings.NewReader(wantThrottle),
		"rxhystrix_command_circuit_throttle_ratio"))
}

const wantCircuitStates = `
# HELP rxhystrix_command_circuit_state 1 for the state the command's circuit breaker is in (CLOSED, OPEN, HALF_OPEN, FORCED_OPEN, FORCED_CLOSED, DISABLED), 0 for the others.
# TYPE rxhystrix_command_circuit_state gauge
rxhystrix_command_circuit_state{command="Search",group="Web",state="CLOSED"} 0
rxhystrix_command_circuit_state{command="Search",group="Web",state="DISABLED"} 0
rxhystrix_command_circuit_state{command="Search",group="Web",state="FORCED_CLOSED"} 0
rxhystrix_command_circuit_state{command="Search",group="Web",state="FORCED_OPEN"} 0
rxhystrix_command_circuit_state{command="Search",group="Web",state="HALF_OPEN"} 1
rxhystrix_command_circuit_state{command="Search",group="Web",state="OPEN"} 0
`

// A command whose status names its breaker's state has a series for each
// state, 1 for the one it is in; a command whose status does not has
// none.
func TestCollectorReportsCircuitStates(t *testing.T) {
	reg := metricsstream.NewRegistry(clock.NewManual(t0))
	reg.Command("Search", metricsstream.Config{}).SetStatusProvider(commandStatus{
		Group: "Web", CircuitBreakerOpen: true, CircuitBreakerState: metricsstream.CircuitHalfOpen,
	})
	reg.Command("Plain", metricsstream.Config{}).SetStatusProvider(commandStatus{})
	c := NewCollector(reg)
	gather(t, c)
	assert.NoError(t, testutil.CollectAndCompare(c, strings.NewReader(wantCircuitStates), "rxhystrix_command_circuit_state"))
}

const wantFaults = `
# HELP rxhystrix_command_fault_injection_enabled 1 while the command injects faults into its executions (command.Config.Faults), else 0; for a command that does or did.
# TYPE rxhystrix_command_fault_injection_enabled gauge
rxhystrix_command_fault_injection_enabled{command="Browse",group="Web"} 0
rxhystrix_command_fault_injection_enabled{command="Search",group="Web"} 1
# HELP rxhystrix_command_faults_injected_total Executions of the command into which a fault was injected (command.Config.Faults), by fault: delay (the command's code started late) or error (it was not run and the injected error stood for it), since its key was first used.
# TYPE rxhystrix_command_faults_injected_total counter
rxhystrix_command_faults_injected_total{command="Browse",fault="delay",group="Web"} 0
rxhystrix_command_faults_injected_total{command="Browse",fault="error",group="Web"} 4
rxhystrix_command_faults_injected_total{command="Search",fault="delay",group="Web"} 7
rxhystrix_command_faults_injected_total{command="Search",fault="error",group="Web"} 3
`

// A command that injects faults, or did, reports whether it does now and
// how many it injected; a command that never did has neither series.
func TestCollectorReportsInjectedFaults(t *testing.T) {
	reg := metricsstream.NewRegistry(clock.NewManual(t0))
	reg.Command("Search", metricsstream.Config{}).SetStatusProvider(commandStatus{
		Group:  "Web",
		Faults: metricsstream.FaultStatus{Enabled: true, DelayPercentage: 10, Delay: time.Second, Delays: 7, Errors: 3},
	})
	reg.Command("Browse", metricsstream.Config{}).SetStatusProvider(commandStatus{
		Group:  "Web",
		Faults: metricsstream.FaultStatus{Errors: 4},
	})
	reg.Command("Plain", metricsstream.Config{}).SetStatusProvider(commandStatus{})
	c := NewCollector(reg)
	gather(t, c)
	assert.NoError(t, testutil.CollectAndCompare(c, strings.NewReader(wantFaults),
		"rxhystrix_command_fault_injection_enabled", "rxhystrix_command_faults_injected_total"))
}
