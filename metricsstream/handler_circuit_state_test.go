package metricsstream

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A command whose status names its breaker's state writes it after its
// own events; a command whose status does not, does not.
func TestHandlerWritesTheCircuitState(t *testing.T) {
	reg, mc := newStreamRegistry()
	trial := reg.Command("Search", Config{})
	trial.SetStatusProvider(commandStatus{CircuitBreakerOpen: true, CircuitBreakerState: CircuitHalfOpen,
		Properties: CommandProperties{Isolation: "SEMAPHORE"}})
	plain := reg.Command("Lookup", Config{})
	plain.SetStatusProvider(commandStatus{Properties: CommandProperties{Isolation: "SEMAPHORE"}})
	for _, c := range []*CommandMetrics{trial, plain} {
		recordEvents(c, time.Millisecond, time.Millisecond, Success)
	}
	mc.Advance(time.Second)

	objs := objectsOfFrame(t, c0(t, reg))
	require.Equal(t, []string{"HystrixCommand Lookup", "HystrixCommand Search"}, names(objs))
	lookup, search := objs[0], objs[1]
	assert.Equal(t, "HALF_OPEN", search.values["circuitBreakerState"])
	assert.Equal(t, true, search.values["isCircuitBreakerOpen"])
	i := slices.Index(search.keys, "circuitBreakerState")
	require.Positive(t, i)
	assert.Equal(t, "rollingCountRateLimited", search.keys[i-1], "after rxhystrix's own events")
	assert.NotContains(t, lookup.keys, "circuitBreakerState")
}
