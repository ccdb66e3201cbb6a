package dashboard_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/rxhystrix/rxhystrix/metricsstream/dashboard"
)

// The dashboard and its stream under one prefix: the page at /hystrix/ reads
// /hystrix/stream by default. Any handler of a Hystrix stream serves there;
// this example uses a stand-in that only says which it is.
func Example() {
	stream := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream;charset=UTF-8")
		fmt.Fprint(w, "ping: \n\n")
	})

	mux := http.NewServeMux()
	mux.Handle("/hystrix/", dashboard.Handler())
	mux.Handle("/hystrix/stream", stream)

	for _, path := range []string{"/hystrix/", "/hystrix/dashboard.js", "/hystrix/stream"} {
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		fmt.Println(path, rec.Code, rec.Header().Get("Content-Type"))
	}
	// Output:
	// /hystrix/ 200 text/html; charset=utf-8
	// /hystrix/dashboard.js 200 text/javascript; charset=utf-8
	// /hystrix/stream 200 text/event-stream;charset=UTF-8
}

// WithStream serves the stream next to the page, so one mount does both;
// WithStreamURL points the page at another stream by default, such as a
// Turbine cluster.
func ExampleWithStream() {
	stream := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream;charset=UTF-8")
	})

	mux := http.NewServeMux()
	mux.Handle("/hystrix/", dashboard.Handler(dashboard.WithStream(stream)))
	mux.Handle("/turbine/", http.StripPrefix("/turbine", dashboard.Handler(
		dashboard.WithStreamURL("http://turbine.internal:8989/turbine.stream?cluster=default"))))

	for _, path := range []string{"/hystrix/stream", "/turbine/"} {
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		fmt.Println(path, rec.Code, rec.Header().Get("Content-Type"))
	}
	// Output:
	// /hystrix/stream 200 text/event-stream;charset=UTF-8
	// /turbine/ 200 text/html; charset=utf-8
}
