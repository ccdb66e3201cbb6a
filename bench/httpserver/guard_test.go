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

// discard is a ResponseWriter that keeps nothing but the status written,
// so that every row pays the same (nothing) for the response and a row
// that turns the request away (a guard's 503 or 429) fails rather than
// looks fast.
type discard struct {
	header http.Header
	status int // 0 until WriteHeader
}

func (d *discard) Header() http.Header         { return d.header }
func (d *discard) Write(b []byte) (int, error) { return len(b), nil }
func (d *discard) WriteHeader(code int)        { d.status = code }

// serve serves req with h into w and returns the status written, 200 if
// none was.
func (d *discard) serve(h http.Handler, req *http.Request) int {
	d.status = 0
	h.ServeHTTP(d, req)
	if d.status == 0 {
		return http.StatusOK
	}
	return d.status
}

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
				if status := w.serve(h, req); status != http.StatusOK {
					b.Fatalf("status %d", status)
				}
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
					if status := w.serve(h, req); status != http.StatusOK {
						b.Errorf("status %d", status)
						return
					}
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
					if resp.StatusCode != http.StatusOK {
						b.Errorf("status %d", resp.StatusCode)
						return
					}
				}
			})
		})
	}
}
