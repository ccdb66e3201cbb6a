package metricsstream

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// throttling is the status of a command whose closed breaker throttles
// below a 50% success rate and refuses 36.5% of its executions now.
var throttling = commandStatus{
	CircuitBreakerState:    CircuitClosed,
	CircuitBreakerThrottle: 0.365,
	Properties: CommandProperties{Isolation: "SEMAPHORE", MaxConcurrentRequests: 10,
		ThrottleSuccessPercentage: 50, ThrottleAggression: 1, MaxThrottlePercentage: 80},
}

// A command whose breaker throttles writes the share it refuses now,
// last; a command whose breaker does not throttle does not.
func TestHandlerShowsTheThrottle(t *testing.T) {
	reg, mc := newStreamRegistry()
	throttled := reg.Command("Search", Config{})
	throttled.SetStatusProvider(throttling)
	plain := reg.Command("Lookup", Config{})
	plain.SetStatusProvider(commandStatus{Properties: CommandProperties{Isolation: "SEMAPHORE"}})
	for _, c := range []*CommandMetrics{throttled, plain} {
		recordEvents(c, 1, 1, Success)
	}
	mc.Advance(1e9)

	objs := objectsOfFrame(t, c0(t, reg))
	require.Equal(t, []string{"HystrixCommand Lookup", "HystrixCommand Search"}, names(objs))
	lookup, search := objs[0], objs[1]
	assert.Equal(t, "circuitBreakerThrottlePercentage", search.keys[len(search.keys)-1])
	assert.Equal(t, json.Number("36.5"), search.values["circuitBreakerThrottlePercentage"])
	assert.Equal(t, false, search.values["isCircuitBreakerOpen"], "a throttling breaker is closed")
	assert.NotContains(t, lookup.keys, "circuitBreakerThrottlePercentage")
}

// A command whose breaker throttles lists the throttle's settings in its
// "circuitBreaker", after Hystrix's fields, after the run of failures
// that trips it when it has one.
func TestConfigHandlerShowsTheThrottle(t *testing.T) {
	reg, _ := newStreamRegistry()
	status := throttling
	status.Properties.ThrottleAggression = 1.5
	status.Properties.ConsecutiveFailures = 5
	reg.Command("Search", Config{}).SetStatusProvider(status)
	reg.Command("Lookup", Config{})
	srv := newStreamServer(t, ConfigHandler(WithRegistry(reg)))
	o := oneEvent(t, connect(t, srv.URL))
	cb := o.object(t, "commands").object(t, "Search").object(t, "circuitBreaker")
	assert.Equal(t, []string{"sleepInMilliseconds", "consecutiveFailures", "throttleSuccessPercentage", "throttleAggression", "maxThrottlePercentage"}, cb.keys[len(cb.keys)-5:])
	assert.Equal(t, json.Number("5"), cb.get(t, "consecutiveFailures"))
	assert.Equal(t, json.Number("50"), cb.get(t, "throttleSuccessPercentage"))
	assert.Equal(t, json.Number("1.5"), cb.get(t, "throttleAggression"))
	assert.Equal(t, json.Number("80"), cb.get(t, "maxThrottlePercentage"))
	lookup := o.object(t, "commands").object(t, "Lookup").object(t, "circuitBreaker").keys
	assert.NotContains(t, lookup, "throttleSuccessPercentage")
	assert.NotContains(t, lookup, "consecutiveFailures")
}
