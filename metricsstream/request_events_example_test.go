package metricsstream_test

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/rxhystrix/rxhystrix/metricsstream"
)

// A request that ran GetUser once and was served its response from the
// request cache twice, and whose GetOrders call timed out, as the request
// log and the request events stream show it.
func ExampleRequestEvents_MarshalJSON() {
	var ran, hit, timedOut metricsstream.EventCounts
	ran.Add(metricsstream.Success, 1)
	hit = ran
	hit.Add(metricsstream.ResponseFromCache, 1)
	timedOut.Add(metricsstream.Timeout, 1)
	timedOut.Add(metricsstream.FallbackSuccess, 1)
	request := metricsstream.RequestEvents{
		{Command: "GetUser", Events: ran, ExecutionLatency: 12 * time.Millisecond, CacheKey: "42"},
		{Command: "GetUser", Events: hit, ExecutionLatency: -1, CacheKey: "42"},
		{Command: "GetUser", Events: hit, ExecutionLatency: -1, CacheKey: "42"},
		{Command: "GetOrders", Events: timedOut, ExecutionLatency: time.Second},
	}
	js, _ := json.Marshal(request)
	fmt.Println(string(js))
	fmt.Println(request)
	// Output:
	// [{"name":"GetUser","events":["SUCCESS"],"latencies":[12],"cached":2},{"name":"GetOrders","events":["TIMEOUT","FALLBACK_SUCCESS"],"latencies":[1000]}]
	// GetUser[SUCCESS][12ms], GetUser[SUCCESS, RESPONSE_FROM_CACHE][0ms]x2, GetOrders[TIMEOUT, FALLBACK_SUCCESS][1000ms]
}
