package httpclient

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/rxhystrix/rxhystrix/command"
	"github.com/rxhystrix/rxhystrix/httpcommand"
)

// BenchmarkGet sends GETs in parallel through each transport and reads
// their bodies.
func BenchmarkGet(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"id":1,"name":"ann"}`)
	}))
	defer srv.Close()

	rows := []struct {
		name string
		make func(base *http.Transport) (http.RoundTripper, func())
	}{
		{"bare", func(base *http.Transport) (http.RoundTripper, func()) { return base, func() {} }},
		{"rxhystrix-transport", func(base *http.Transport) (http.RoundTripper, func()) {
			reg := command.NewRegistry()
			rt := httpcommand.New(httpcommand.WithBase(base), httpcommand.WithRegistry(reg),
				httpcommand.WithPoolConfig(func(string) command.PoolConfig { return command.PoolConfig{CoreSize: 64} }))
			return rt, reg.Close
		}},
	}
	for _, row := range rows {
		b.Run(row.name, func(b *testing.B) {
			base := &http.Transport{MaxIdleConnsPerHost: 64}
			rt, closeRow := row.make(base)
			client := &http.Client{Transport: rt}
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
			b.StopTimer()
			base.CloseIdleConnections()
			closeRow()
		})
	}
}
