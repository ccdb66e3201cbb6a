package reliability

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fault is how a faultServer misbehaves.
type fault int32

const (
	healthy     fault = iota // answers 200 with a JSON reply
	hang                     // reads the request and never answers
	slow                     // answers, but only after slowDelay
	refused                  // nothing listens: connecting fails
	reset                    // resets the connection once the request is read
	serverError              // answers 503
	garbage                  // answers 200 with a body that is not JSON
)

func (f fault) String() string {
	return [...]string{"healthy", "hang", "slow", "refused", "reset", "5xx", "garbage"}[f]
}

// slowDelay is how late a slow server answers: far beyond the timeouts
// of the tests, as a server whose answer never arrives in time.
const slowDelay = 2 * time.Second

// reply is what a server answers and the client decodes.
type reply struct {
	Server string `json:"server"`
	N      int64  `json:"n"`
}

// faultServer is an HTTP server on 127.0.0.1 whose fault can change while
// it runs. Its address stays the same for its life: a refused server stops
// listening, and listens again on the same port when it is healed.
type faultServer struct {
	t    testing.TB
	name string
	addr string
	url  string

	fault  atomic.Int32
	served atomic.Int64
	quit   chan struct{} // closed by close: releases hung handlers

	mu     sync.Mutex
	srv    *http.Server // nil while refusing
	serves sync.WaitGroup
}

// newFaultServer starts a healthy server; it is closed when the test ends.
func newFaultServer(t testing.TB, name string) *faultServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen on loopback: %v", err)
	}
	s := &faultServer{t: t, name: name, addr: ln.Addr().String(), quit: make(chan struct{})}
	s.url = "http://" + s.addr + "/" + name
	s.mu.Lock()
	s.serveLocked(ln)
	s.mu.Unlock()
	t.Cleanup(s.close)
	return s
}

func (s *faultServer) serveLocked(ln net.Listener) {
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 5 * time.Second}
	s.srv = srv
	s.serves.Go(func() { _ = srv.Serve(ln) })
}

// set changes the server's fault. Refusing closes the listener and every
// connection; leaving refusal listens again on the same address.
func (s *faultServer) set(f fault) {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fault.Store(int32(f))
	switch {
	case f == refused && s.srv != nil:
		_ = s.srv.Close()
		s.srv = nil
	case f != refused && s.srv == nil:
		ln, err := listenAgain(s.addr)
		if err != nil {
			s.t.Fatalf("listen again on %s: %v", s.addr, err)
		}
		s.serveLocked(ln)
	}
}

// listenAgain listens on addr, which was just released: the kernel may
// need a moment before the port can be bound again.
func listenAgain(addr string) (net.Listener, error) {
	deadline := time.Now().Add(5 * time.Second)
	for {
		ln, err := net.Listen("tcp", addr)
		if err == nil || time.Now().After(deadline) {
			return ln, err
		}
		time.Sleep(time.Millisecond)
	}
}

func (s *faultServer) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-s.quit:
		return
	default:
	}
	close(s.quit)
	if s.srv != nil {
		_ = s.srv.Close()
		s.srv = nil
	}
	s.serves.Wait()
}

func (s *faultServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch fault(s.fault.Load()) {
	case hang:
		select {
		case <-r.Context().Done():
		case <-s.quit:
		}
	case slow:
		select {
		case <-time.After(slowDelay):
			s.answer(w)
		case <-r.Context().Done():
		case <-s.quit:
		}
	case reset:
		conn, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			panic(fmt.Sprintf("hijack: %v", err))
		}
		_ = conn.(*net.TCPConn).SetLinger(0) // close with RST, not FIN
		_ = conn.Close()
	case serverError:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"error":"unavailable"}`))
	case garbage:
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte("<html><body>502 Bad Gateway</body></html>"))
	default:
		s.answer(w)
	}
}

func (s *faultServer) answer(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(reply{Server: s.name, N: s.served.Add(1)})
}
