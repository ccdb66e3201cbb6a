package isolation

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"time"
)

// Farm is a set of downstream servers on 127.0.0.1: healthy ones that
// answer 200 after a delay, and hung ones that accept connections and never
// answer. Close stops all of them.
type Farm struct {
	// URLs lists every server; the first Hung of them are the hung ones.
	URLs []string
	// Hung is how many of URLs hang.
	Hung int

	healthy []*httptest.Server
	hung    []*hungServer
}

// StartFarm starts healthy servers answering after about latency, and
// hung servers that never answer.
func StartFarm(healthy, hung int, latency time.Duration) (*Farm, error) {
	if healthy < 0 || hung < 0 {
		return nil, fmt.Errorf("isolation: StartFarm: negative server count (healthy %d, hung %d)", healthy, hung)
	}
	f := &Farm{Hung: hung}
	for range hung {
		h, err := startHung()
		if err != nil {
			f.Close()
			return nil, err
		}
		f.hung = append(f.hung, h)
		f.URLs = append(f.URLs, "http://"+h.ln.Addr().String()+"/")
	}
	for range healthy {
		ln, err := listenLoopback()
		if err != nil {
			f.Close()
			return nil, err
		}
		s := httptest.NewUnstartedServer(answerAfter(latency))
		s.Listener.Close()
		s.Listener = ln
		s.Start()
		f.healthy = append(f.healthy, s)
		f.URLs = append(f.URLs, s.URL+"/")
	}
	return f, nil
}

// HungConnections returns how many connections the hung servers hold open.
func (f *Farm) HungConnections() int {
	n := 0
	for _, h := range f.hung {
		n += h.open()
	}
	return n
}

// Close stops every server and closes every connection, waiting for the
// handlers to return.
func (f *Farm) Close() {
	for _, h := range f.hung {
		h.close()
	}
	for _, s := range f.healthy {
		s.CloseClientConnections()
		s.Close()
	}
}

// listenLoopback listens on an ephemeral port of 127.0.0.1.
func listenLoopback() (net.Listener, error) {
	return net.Listen("tcp", "127.0.0.1:0")
}

// answerAfter answers 200 after a delay drawn uniformly from
// [latency/2, 3×latency/2), or returns early if the request is abandoned.
func answerAfter(latency time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d := latency/2 + time.Duration(rand.Int64N(int64(latency)+1))
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			w.WriteHeader(http.StatusOK)
		case <-r.Context().Done():
		}
	})
}

// hungServer accepts connections and never writes to them.
type hungServer struct {
	ln     net.Listener
	wg     sync.WaitGroup
	mu     sync.Mutex
	conn   map[net.Conn]struct{}
	closed bool
}

func startHung() (*hungServer, error) {
	ln, err := listenLoopback()
	if err != nil {
		return nil, err
	}
	h := &hungServer{ln: ln, conn: make(map[net.Conn]struct{})}
	h.wg.Add(1)
	go h.accept()
	return h, nil
}

// accept takes connections until the listener closes; each one is read
// and discarded until the peer or close ends it.
func (h *hungServer) accept() {
	defer h.wg.Done()
	for {
		c, err := h.ln.Accept()
		if err != nil {
			return
		}
		h.mu.Lock()
		if h.closed {
			h.mu.Unlock()
			c.Close()
			continue
		}
		h.conn[c] = struct{}{}
		h.wg.Add(1)
		h.mu.Unlock()
		go h.swallow(c)
	}
}

func (h *hungServer) swallow(c net.Conn) {
	defer h.wg.Done()
	buf := make([]byte, 512)
	for {
		if _, err := c.Read(buf); err != nil {
			break
		}
	}
	c.Close()
	h.mu.Lock()
	delete(h.conn, c)
	h.mu.Unlock()
}

func (h *hungServer) open() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.conn)
}

// close stops accepting, closes every connection and waits for the
// server's goroutines.
func (h *hungServer) close() {
	h.ln.Close()
	h.mu.Lock()
	h.closed = true
	for c := range h.conn {
		c.Close()
	}
	h.mu.Unlock()
	h.wg.Wait()
}

// errStatus is the error of an answer other than 200.
var errStatus = errors.New("isolation: answer was not 200 OK")

// get sends GET url with ctx and returns nil only for a 200 answer.
func get(ctx context.Context, c *http.Client, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%w: %s", errStatus, resp.Status)
	}
	return nil
}
