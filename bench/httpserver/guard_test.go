package httpserver

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/failsafe-go/failsafe-go/adaptivelimiter"
	"github.com/failsafe-go/failsafe-go/bulkhead"
	"github.com/failsafe-go/failsafe-go/failsafehttp"

	"github.com/rxhystrix/rxhystrix/command"
	"github.com/rxhystrix/rxhystrix/httpcommand"
	"github.com/rxhystrix/rxhystrix/limit"
)

// discard is a ResponseWriter that keeps nothing, so that every row
// pays the same (nothing) for the response.
type discard struct{ header http.Header }

func (d *discard) Header() http.Header         { return d.header }
func (d *discard) Write(b []byte) (int, error) { return len(b), nil }
func (d *discard) WriteHeader(int)             {}

var handler = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
	_, _ = io.WriteString(w, `{"id":1,"name":"ann"}`)
})

// rows are the handlers measured; close, if any, ends a row.
func rows() []struct {
	name string
	make func() (http.Handler, func())
} {
	guard := func(cfg command.Config) func() (http.Handler, func()) {
		return func() (http.Handler, func()) {
			reg := command.NewRegistry()
			return &httpcommand.Guard{Handler: handler, Registry: reg,
				Config: func(string) command.Config { return cfg }}, reg.Close
		}
	}
	return []struct {
		name string
		make func() (http.Handler, func())
	}{
		{"bare", func() (http.Handler, func()) { return handler, func() {} }},
		{"rxhystrix-guard", guard(command.Config{MaxConcurrentRequests: 1000})},
		{"rxhystrix-guard-vegas", guard(command.Config{AdaptiveLimit: limit.Vegas{InitialLimit: 1000, MaxLimit: 1000}})},
		{"failsafe-bulkhead", func() (http.Handler, func()) {
			return failsafehttp.NewHandler(handler, bulkhead.New[*http.Response](1000)), func() {}
		}},
		{"failsafe-adaptivelimiter", func() (http.Handler, func()) {
			l := adaptivelimiter.NewBuilder[*http.Response]().WithLimits(1000, 1000, 1000).Build()
			return failsafehttp.NewHandler(handler, l), func() {}
		}},
	}
}

// BenchmarkServe serves GETs with each handler from one goroutine.
func BenchmarkServe(b *testing.B) {
	for _, row := range rows() {
		b.Run(row.name, func(b *testing.B) {
			h, closeRow := row.make()
			defer closeRow()
			req, _ := http.NewRequest(http.MethodGet, "http://example.com/users/1", nil)
			w := &discard{header: http.Header{}}
			b.ReportAllocs()
			for b.Loop() {
				h.ServeHTTP(w, req)
			}
		})
	}
}

// BenchmarkServeParallel serves GETs with each handler from GOMAXPROCS
// goroutines at once.
func BenchmarkServeParallel(b *testing.B) {
	for _, row := range rows() {
		b.Run(row.name, func(b *testing.B) {
			h, closeRow := row.make()
			defer closeRow()
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				req, _ := http.NewRequest(http.MethodGet, "http://example.com/users/1", nil)
				w := &discard{header: http.Header{}}
				for pb.Next() {
					h.ServeHTTP(w, req)
				}
			})
		})
	}
}

// BenchmarkLoopback sends GETs in parallel over loopback to a server of
// each handler, so that each guard's cost is set against a request's
// own.
func BenchmarkLoopback(b *testing.B) {
	for _, row := range rows() {
		b.Run(row.name, func(b *testing.B) {
			h, closeRow := row.make()
			defer closeRow()
			srv := httptest.NewServer(h)
			defer srv.Close()
			transport := &http.Transport{MaxIdleConnsPerHost: 64}
			defer transport.CloseIdleConnections()
			client := &http.Client{Transport: transport}
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					resp, err := client.Get(srv.URL)
					if err != nil {
						b.Error(err)
						return
					}
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			})
		})
	}
}
