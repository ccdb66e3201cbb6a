package main

import (
	"io"
	"net/http"
	"sync"
	"sync/atomic"
)

// downstream is the site the article's service fetches. It answers every
// request, drops every connection while its network is down, and keeps
// the requests it gets while held.
type downstream struct {
	down atomic.Bool

	mu      sync.Mutex
	gate    chan struct{} // closed to let held requests go; nil when not holding
	arrived chan struct{} // a token for each request held
}

func newDownstream() *downstream { return &downstream{} }

// setUp brings the downstream's network up or down.
func (d *downstream) setUp(up bool) { d.down.Store(!up) }

func (d *downstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if d.down.Load() {
		panic(http.ErrAbortHandler) // the connection drops: the caller reads EOF
	}
	d.mu.Lock()
	gate, arrived := d.gate, d.arrived
	d.mu.Unlock()
	if gate != nil {
		select {
		case arrived <- struct{}{}:
		case <-r.Context().Done():
			return
		}
		select {
		case <-gate:
		case <-r.Context().Done():
			return
		}
	}
	io.WriteString(w, "<html>hello</html>")
}

// hold keeps the next requests, at most n, until release is called;
// arrived receives a token as each one arrives.
func (d *downstream) hold(n int) (arrived <-chan struct{}, release func()) {
	gate, ch := make(chan struct{}), make(chan struct{}, n)
	d.mu.Lock()
	d.gate, d.arrived = gate, ch
	d.mu.Unlock()
	var once sync.Once
	return ch, func() {
		once.Do(func() {
			d.mu.Lock()
			d.gate, d.arrived = nil, nil
			d.mu.Unlock()
			close(gate)
		})
	}
}
