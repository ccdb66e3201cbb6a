package metricsstream

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// injecting is the status of a command that delays 10% of its executions
// by 2s and fails 5% of them, and has done so 7 and 3 times.
var injecting = commandStatus{
	CircuitBreakerState: CircuitClosed,
	Properties:          CommandProperties{Isolation: "SEMAPHORE", MaxConcurrentRequests: 10},
	Faults: FaultStatus{Enabled: true, DelayPercentage: 10, Delay: 2 * time.Second, ErrorPercentage: 5,
		MarkedOnly: true, Delays: 7, Errors: 3},
}

// A command that injects faults, or has, says so and counts them, last;
// a command that never did writes nothing of faults.
func TestHandlerShowsInjectedFaults(t *testing.T) {
	reg, mc := newStreamRegistry()
	faulty := reg.Command("Search", Config{})
	faulty.SetStatusProvider(injecting)
	stopped := injecting
	stopped.Faults.Enabled = false
	reg.Command("Browse", Config{}).SetStatusProvider(stopped)
	plain := reg.Command("Lookup", Config{})
	plain.SetStatusProvider(commandStatus{Properties: CommandProperties{Isolation: "SEMAPHORE"}})
	mc.Advance(1e9)

	objs := objectsOfFrame(t, c0(t, reg))
	require.Equal(t, []string{"HystrixCommand Browse", "HystrixCommand Lookup", "HystrixCommand Search"}, names(objs))
	browse, lookup, search := objs[0], objs[1], objs[2]
	assert.Equal(t, []string{"faultInjectionEnabled", "cumulativeCountFaultDelays", "cumulativeCountFaultErrors"}, search.keys[len(search.keys)-3:])
	assert.Equal(t, true, search.values["faultInjectionEnabled"])
	assert.Equal(t, json.Number("7"), search.values["cumulativeCountFaultDelays"])
	assert.Equal(t, json.Number("3"), search.values["cumulativeCountFaultErrors"])
	assert.Equal(t, false, browse.values["faultInjectionEnabled"], "switched off, with faults injected before")
	assert.NotContains(t, lookup.keys, "faultInjectionEnabled")
}

// A command that injects faults lists their settings in its "execution",
// after Hystrix's fields.
func TestConfigHandlerShowsFaults(t *testing.T) {
	reg, _ := newStreamRegistry()
	reg.Command("Search", Config{}).SetStatusProvider(injecting)
	reg.Command("Lookup", Config{})
	srv := newStreamServer(t, ConfigHandler(WithRegistry(reg)))
	o := oneEvent(t, connect(t, srv.URL))
	e := o.object(t, "commands").object(t, "Search").object(t, "execution")
	assert.Equal(t, "faults", e.keys[len(e.keys)-1])
	f := e.object(t, "faults")
	assert.Equal(t, []string{"delayPercentage", "delayInMilliseconds", "errorPercentage", "markedOnly"}, f.keys)
	assert.Equal(t, json.Number("10"), f.get(t, "delayPercentage"))
	assert.Equal(t, json.Number("2000"), f.get(t, "delayInMilliseconds"))
	assert.Equal(t, json.Number("5"), f.get(t, "errorPercentage"))
	assert.Equal(t, true, f.get(t, "markedOnly"))
	assert.NotContains(t, o.object(t, "commands").object(t, "Lookup").object(t, "execution").keys, "faults")
}

// Faults that end by themselves write their end, in RFC 3339.
func TestConfigHandlerShowsTheEndOfFaults(t *testing.T) {
	reg, _ := newStreamRegistry()
	ending := injecting
	ending.Faults.Until = time.Date(2026, 12, 6, 12, 30, 0, 0, time.UTC)
	reg.Command("Search", Config{}).SetStatusProvider(ending)
	srv := newStreamServer(t, ConfigHandler(WithRegistry(reg)))
	f := oneEvent(t, connect(t, srv.URL)).object(t, "commands").object(t, "Search").object(t, "execution").object(t, "faults")
	assert.Equal(t, "until", f.keys[len(f.keys)-1])
	assert.Equal(t, "2026-12-06T12:30:00Z", f.get(t, "until"))
}

// Faults that end by themselves write their end while they are on, as a
// string Turbine does not sum; once over, they do not.
func TestHandlerShowsTheEndOfFaults(t *testing.T) {
	reg, mc := newStreamRegistry()
	ending := injecting
	ending.Faults.Until = time.Date(2026, 12, 6, 12, 30, 0, 0, time.UTC)
	reg.Command("Search", Config{}).SetStatusProvider(ending)
	over := ending
	over.Faults.Enabled = false
	reg.Command("Browse", Config{}).SetStatusProvider(over)
	mc.Advance(1e9)

	objs := objectsOfFrame(t, c0(t, reg))
	require.Equal(t, []string{"HystrixCommand Browse", "HystrixCommand Search"}, names(objs))
	browse, search := objs[0], objs[1]
	assert.Equal(t, "faultInjectionUntil", search.keys[len(search.keys)-1])
	assert.Equal(t, "2026-12-06T12:30:00Z", search.values["faultInjectionUntil"])
	assert.NotContains(t, browse.keys, "faultInjectionUntil")
}
