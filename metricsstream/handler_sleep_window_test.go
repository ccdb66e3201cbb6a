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

// A command whose sleep window grows writes the window now, last; a
// command whose window is fixed does not.
func TestHandlerShowsAGrowingSleepWindow(t *testing.T) {
	reg, mc := newStreamRegistry()
	growing := reg.Command("Search", Config{})
	growing.SetStatusProvider(growingSleepWindow)
	fixed := reg.Command("Lookup", Config{})
	fixed.SetStatusProvider(commandStatus{Properties: CommandProperties{Isolation: "SEMAPHORE", SleepWindow: 5 * time.Second}})
	recordEvents(growing, time.Millisecond, time.Millisecond, Success)
	recordEvents(fixed, time.Millisecond, time.Millisecond, Success)
	mc.Advance(time.Second)

	objs := objectsOfFrame(t, c0(t, reg))
	require.Equal(t, []string{"HystrixCommand Lookup", "HystrixCommand Search"}, names(objs))
	lookup, search := objs[0], objs[1]
	assert.Equal(t, "circuitBreakerSleepWindowInMilliseconds", search.keys[len(search.keys)-1])
	assert.Equal(t, json.Number("20000"), search.values["circuitBreakerSleepWindowInMilliseconds"])
	assert.Equal(t, json.Number("5000"), search.values["propertyValue_circuitBreakerSleepWindowInMilliseconds"], "Hystrix's property is the configured window")
	assert.NotContains(t, lookup.keys, "circuitBreakerSleepWindowInMilliseconds")
}

// A command whose sleep window grows lists its bound and multiplier in
// its "circuitBreaker", after Hystrix's fields.
func TestConfigHandlerShowsAGrowingSleepWindow(t *testing.T) {
	reg, _ := newStreamRegistry()
	status := growingSleepWindow
	status.Properties.SleepWindowMultiplier = 1.5
	reg.Command("Search", Config{}).SetStatusProvider(status)
	reg.Command("Lookup", Config{})
	srv := newStreamServer(t, ConfigHandler(WithRegistry(reg)))
	o := oneEvent(t, connect(t, srv.URL))
	cb := o.object(t, "commands").object(t, "Search").object(t, "circuitBreaker")
	assert.Equal(t, []string{"sleepInMilliseconds", "maxSleepInMilliseconds", "sleepMultiplier"}, cb.keys[len(cb.keys)-3:])
	assert.Equal(t, json.Number("5000"), cb.get(t, "sleepInMilliseconds"))
	assert.Equal(t, json.Number("60000"), cb.get(t, "maxSleepInMilliseconds"))
	assert.Equal(t, json.Number("1.5"), cb.get(t, "sleepMultiplier"))
	assert.NotContains(t, o.object(t, "commands").object(t, "Lookup").object(t, "circuitBreaker").keys, "maxSleepInMilliseconds")
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
