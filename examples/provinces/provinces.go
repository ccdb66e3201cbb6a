package main

import (
	"context"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"sync"
	"time"
)

// names are the provincial systems the service pushes to.
var names = []string{
	"Beijing", "Tianjin", "Hebei", "Shanxi", "Neimenggu", "Liaoning", "Jilin", "Heilongjiang",
	"Shanghai", "Jiangsu", "Zhejiang", "Anhui", "Fujian", "Jiangxi", "Shandong", "Henan",
	"Hubei", "Hunan", "Guangdong", "Guangxi", "Hainan", "Chongqing", "Sichuan", "Guizhou",
	"Yunnan", "Xizang", "Shaanxi", "Gansu", "Qinghai", "Ningxia", "Xinjiang",
}

// province is one provincial system: an HTTP server and a gRPC server
// on 127.0.0.1 that accept pushes after a random delay around its latency
// (from half to one and a half times), or, while its network hangs, never
// answer them.
type province struct {
	Name    string
	URL     string
	Target  string // the gRPC server's address
	latency time.Duration
	server  *httptest.Server
	grpc    *grpcProvince

	mu      sync.Mutex
	hanging chan struct{} // closed when the network recovers; nil while it works
}

func startProvince(name string, latency time.Duration) *province {
	p := &province{Name: name, latency: latency}
	p.server = httptest.NewServer(p)
	p.URL = p.server.URL + "/push"
	p.grpc = startGRPCProvince(p)
	p.Target = p.grpc.addr
	return p
}

// hang makes the province's network hang until recover is called.
func (p *province) hang() {
	p.mu.Lock()
	p.hanging = make(chan struct{})
	p.mu.Unlock()
}

// recover makes the network answer again; pushes it was holding get
// their answers.
func (p *province) recover() {
	p.mu.Lock()
	if p.hanging != nil {
		close(p.hanging)
		p.hanging = nil
	}
	p.mu.Unlock()
}

func (p *province) close() {
	p.recover()
	p.server.Close()
	p.grpc.close()
}

func (p *province) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	if p.accept(r.Context()) {
		io.WriteString(w, `{"code":"OK"}`)
	}
}

// accept waits until the province accepts a push, and reports whether it
// did before ctx ended (the caller gave up).
func (p *province) accept(ctx context.Context) bool {
	p.mu.Lock()
	hanging := p.hanging
	p.mu.Unlock()
	if hanging != nil {
		select {
		case <-hanging:
		case <-ctx.Done():
			return false
		}
	}
	t := time.NewTimer(p.latency/2 + rand.N(p.latency))
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
