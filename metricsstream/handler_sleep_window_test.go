package metricsstream

import (
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// growingSleepWindow is the status of a command whose breaker's sleep
// window grows from 5s to a minute, doubling, and is 20s now.
var growingSleepWindow = commandStatus{
	CircuitBreakerOpen:        true,
	CircuitBreakerSleepWindow: 20 * time.Second,
	Properties: CommandProperties{Isolation: "SEMAPHORE", MaxConcurrentRequests: 10,
		SleepWindow: 5 * time.Second, MaxSleepWindow: time.Minute, SleepWindowMultiplier: 2},
}

// A command whose sleep window grows or has a jitter writes the window
// now, last; a command whose window is fixed does not.
func TestHandlerShowsAGrowingSleepWindow(t *testing.T) {
	reg, mc := newStreamRegistry()
	growing := reg.Command("Search", Config{})
	growing.SetStatusProvider(growingSleepWindow)
	jittered := reg.Command("Reserve", Config{})
	jittered.SetStatusProvider(commandStatus{CircuitBreakerSleepWindow: 5300 * time.Millisecond,
		Properties: CommandProperties{Isolation: "SEMAPHORE", SleepWindow: 5 * time.Second, SleepWindowJitter: time.Second}})
	fixed := reg.Command("Lookup", Config{})
	fixed.SetStatusProvider(commandStatus{Properties: CommandProperties{Isolation: "SEMAPHORE", SleepWindow: 5 * time.Second}})
	for _, c := range []*CommandMetrics{growing, jittered, fixed} {
		recordEvents(c, time.Millisecond, time.Millisecond, Success)
	}
	mc.Advance(time.Second)

	objs := objectsOfFrame(t, c0(t, reg))
	require.Equal(t, []string{"HystrixCommand Lookup", "HystrixCommand Reserve", "HystrixCommand Search"}, names(objs))
	lookup, reserve, search := objs[0], objs[1], objs[2]
	assert.Equal(t, "circuitBreakerSleepWindowInMilliseconds", search.keys[len(search.keys)-1])
	assert.Equal(t, json.Number("20000"), search.values["circuitBreakerSleepWindowInMilliseconds"])
	assert.Equal(t, json.Number("5000"), search.values["propertyValue_circuitBreakerSleepWindowInMilliseconds"], "Hystrix's property is the configured window")
	assert.Equal(t, json.Number("5300"), reserve.values["circuitBreakerSleepWindowInMilliseconds"])
	assert.NotContains(t, lookup.keys, "circuitBreakerSleepWindowInMilliseconds")
}

// A command whose sleep window grows lists its bound and multiplier in
// its "circuitBreaker", after Hystrix's fields, and its jitter after
// them.
func TestConfigHandlerShowsAGrowingSleepWindow(t *testing.T) {
	reg, _ := newStreamRegistry()
	status := growingSleepWindow
	status.Properties.SleepWindowMultiplier = 1.5
	status.Properties.SleepWindowJitter = 2500 * time.Millisecond
	reg.Command("Search", Config{}).SetStatusProvider(status)
	reg.Command("Lookup", Config{})
	srv := newStreamServer(t, ConfigHandler(WithRegistry(reg)))
	o := oneEvent(t, connect(t, srv.URL))
	cb := o.object(t, "commands").object(t, "Search").object(t, "circuitBreaker")
	assert.Equal(t, []string{"sleepInMilliseconds", "maxSleepInMilliseconds", "sleepMultiplier", "sleepJitterInMilliseconds"}, cb.keys[len(cb.keys)-4:])
	assert.Equal(t, json.Number("2500"), cb.get(t, "sleepJitterInMilliseconds"))
	assert.Equal(t, json.Number("5000"), cb.get(t, "sleepInMilliseconds"))
	assert.Equal(t, json.Number("60000"), cb.get(t, "maxSleepInMilliseconds"))
	assert.Equal(t, json.Number("1.5"), cb.get(t, "sleepMultiplier"))
	lookup := o.object(t, "commands").object(t, "Lookup").object(t, "circuitBreaker").keys
	assert.NotContains(t, lookup, "maxSleepInMilliseconds")
	assert.NotContains(t, lookup, "sleepJitterInMilliseconds")
}

func TestJSONFloat(t *testing.T) {
	for _, c := range []struct {
		v    float64
		want string
	}{{2, `{"f":2}`}, {1.5, `{"f":1.5}`}, {1e300, `{"f":1e+300}`}, {math.NaN(), `{"f":null}`}, {math.Inf(-1), `{"f":null}`}} {
		o := beginObject(nil)
		o.float("f", c.v)
		got := string(o.end())
		assert.Equal(t, c.want, got)
		assert.True(t, json.Valid([]byte(got)), got)
	}
}
