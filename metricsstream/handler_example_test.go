package metricsstream_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/rxhystrix/rxhystrix/clock"
	"github.com/rxhystrix/rxhystrix/metricsstream"
)

// A service serves the stream next to its API, for the Hystrix Dashboard,
// Turbine or the dashboard package to read.
func ExampleHandler_mount() {
	mux := http.NewServeMux()
	mux.Handle("/hystrix.stream", metricsstream.Handler()) // the commands of command.DefaultRegistry
	_ = http.ListenAndServe("127.0.0.1:8080", mux)
}

// Each frame of the stream is one "data:" event per command and pool, in
// Hystrix's JSON, then a ping.
func ExampleHandler() {
	mc := clock.NewManual(start)
	reg := metricsstream.NewRegistry(mc)
	m := reg.Command("GetUser", metricsstream.Config{})
	complete(m, metricsstream.Success)
	complete(m, metricsstream.Success)
	complete(m, metricsstream.Timeout, metricsstream.FallbackSuccess)
	mc.Advance(time.Second) // the rolling bucket closes

	// A client that reads one frame and leaves.
	ctx, leave := context.WithCancel(context.Background())
	leave()
	req := httptest.NewRequestWithContext(ctx, http.MethodGet, "/hystrix.stream?delay=1000", nil)
	rec := httptest.NewRecorder()
	metricsstream.Handler(metricsstream.WithRegistry(reg)).ServeHTTP(rec, req)

	fmt.Println(rec.Header().Get("Content-Type"))
	sc := bufio.NewScanner(rec.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		field, value, _ := strings.Cut(sc.Text(), ": ")
		switch field {
		case "data":
			var o struct {
				Type, Name, Group   string
				RequestCount        int64
				ErrorPercentage     int
				RollingCountTimeout int64
				LatencyExecute      map[string]int64
			}
			if err := json.Unmarshal([]byte(value), &o); err != nil {
				fmt.Println(err)
				return
			}
			fmt.Printf("data: %s %s requests=%d errors=%d%% timeouts=%d p99.5=%dms\n",
				o.Type, o.Name, o.RequestCount, o.ErrorPercentage, o.RollingCountTimeout, o.LatencyExecute["99.5"])
		case "ping":
			fmt.Println("ping")
		}
	}
	// Output:
	// text/event-stream;charset=UTF-8
	// data: HystrixCommand GetUser requests=3 errors=33% timeouts=1 p99.5=0ms
	// ping
}

// A monitor that only needs to know how busy each command and pool is
// reads the utilization stream, beside the dashboard's.
func ExampleUtilizationHandler() {
	mc := clock.NewManual(start)
	reg := metricsstream.NewRegistry(mc)
	reg.Command("GetUser", metricsstream.Config{}).MarkStart() // one execution in flight

	ctx, leave := context.WithCancel(context.Background())
	leave() // read one event and leave
	req := httptest.NewRequestWithContext(ctx, http.MethodGet, "/hystrix/utilization.stream", nil)
	rec := httptest.NewRecorder()
	metricsstream.UtilizationHandler(metricsstream.WithRegistry(reg)).ServeHTTP(rec, req)
	fmt.Print(rec.Body.String())
	// Output:
	// data: {"type":"HystrixUtilization","commands":{"GetUser":{"activeCount":1}},"threadpools":{}}
	//
	// ping:
}
