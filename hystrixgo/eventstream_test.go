package hystrix

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// wrapper is a handler in front of the stream, with a writer that hides
// the Flusher behind Unwrap, as middleware does.
type wrapper struct{ h http.Handler }

type wrappedWriter struct{ http.ResponseWriter }

func (w wrappedWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w wrapper) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	w.h.ServeHTTP(wrappedWriter{rw}, r)
}

func (sh *StreamHandler) clients() int {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	return len(sh.requests)
}

func TestStreamHandler(t *testing.T) {
	_, mc := testEngine(t)
	ConfigureCommand("streamed", CommandConfig{MaxConcurrentRequests: 7})
	for _, err := range []error{nil, errRun, errRun} {
		_ = Do("streamed", func() error { return err }, nil)
	}
	sh := NewStreamHandler()
	sh.Start()
	defer sh.Stop()
	srv := httptest.NewServer(wrapper{sh})
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("Content-Type = %q; want text/event-stream", ct)
	}
	for sh.clients() == 0 {
		time.Sleep(time.Millisecond) // the handler registers the client
	}
	mc.Advance(time.Second)

	r := bufio.NewReader(resp.Body)
	var cmd, pool map[string]any
	for cmd == nil || pool == nil {
		frame, err := readFrame(r)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(frame, []byte("data:{")) {
			t.Fatalf("frame %q; want data:{json} with no space", frame)
		}
		var ev map[string]any
		if err := json.Unmarshal(frame[len("data:"):], &ev); err != nil {
			t.Fatal(err)
		}
		switch ev["type"] {
		case "HystrixCommand":
			cmd = ev
		case "HystrixThreadPool":
			pool = ev
		}
	}
	checks := []struct {
		ev    map[string]any
		field string
		want  any
	}{
		{cmd, "name", "streamed"},
		{cmd, "requestCount", 3.0},
		{cmd, "errorCount", 2.0},
		{cmd, "errorPercentage", 67.0},
		{cmd, "rollingCountSuccess", 1.0},
		{cmd, "isCircuitBreakerOpen", false},
		{pool, "name", "streamed"},
		{pool, "currentPoolSize", 7.0},
		{pool, "rollingCountThreadsExecuted", 3.0},
	}
	for _, c := range checks {
		if got := c.ev[c.field]; got != c.want {
			t.Errorf("%s.%s = %v; want %v", c.ev["type"], c.field, got, c.want)
		}
	}
	for _, ev := range []map[string]any{cmd, pool} {
		for k, v := range ev {
			if f, ok := v.(float64); ok && f != float64(int64(f)) {
				t.Errorf("%s.%s = %v; want an integer", ev["type"], k, v)
			}
		}
	}

	// The client leaves: ServeHTTP returns.
	cancel()
	deadline := time.Now().Add(2 * time.Second)
	for sh.clients() > 0 {
		if time.Now().After(deadline) {
			t.Fatal("ServeHTTP still serving 2s after the client left")
		}
		time.Sleep(time.Millisecond)
	}
}

func readFrame(r *bufio.Reader) ([]byte, error) {
	var b bytes.Buffer
	for !strings.HasSuffix(b.String(), "\n\n") {
		c, err := r.ReadByte()
		if err != nil {
			return nil, err
		}
		b.WriteByte(c)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n\n")), nil
}

func TestStreamHandlerStopEndsServing(t *testing.T) {
	testEngine(t)
	sh := NewStreamHandler()
	sh.Start()
	rec := httptest.NewRecorder()
	done := make(chan struct{})
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	go func() { sh.ServeHTTP(rec, req); close(done) }()
	for sh.clients() == 0 {
		time.Sleep(time.Millisecond)
	}
	sh.Stop()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		t.Fatal("ServeHTTP did not return after Stop")
	}
	_, _ = io.ReadAll(rec.Body)
}

// As hystrix-go's, the zero StreamHandler serves and stops without a
// panic, and one stopped starts again.
func TestZeroStreamHandlerStartsStopsAndStartsAgain(t *testing.T) {
	testEngine(t)
	var sh StreamHandler
	sh.Start()
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	ctx, cancel := context.WithCancel(req.Context())
	cancel() // a client that has left at once
	sh.ServeHTTP(httptest.NewRecorder(), req.WithContext(ctx))
	sh.Stop()
	sh.Stop() // twice is once

	sh.Start()
	served := make(chan struct{})
	go func() {
		sh.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil))
		close(served)
	}()
	for sh.clients() == 0 {
		runtime.Gosched()
	}
	sh.Stop()
	select {
	case <-served:
	case <-time.After(10 * time.Second):
		t.Fatal("ServeHTTP did not return after the second Stop")
	}
}

// slowWriter is a client's ResponseWriter whose first Write blocks until
// released, as a client a moment behind.
type slowWriter struct {
	header  http.Header
	entered chan struct{}
	release chan struct{}
	once    sync.Once
	mu      sync.Mutex
	buf     bytes.Buffer
}

func (w *slowWriter) Header() http.Header { return w.header }
func (w *slowWriter) WriteHeader(int)     {}
func (w *slowWriter) Write(b []byte) (int, error) {
	w.once.Do(func() { close(w.entered); <-w.release })
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(b)
}

func (w *slowWriter) events() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return bytes.Count(w.buf.Bytes(), []byte("data:"))
}

// Every second the stream has one command and one pool event per live
// circuit: with 17 circuits, a client that is still writing the first
// event of a tick still gets all 34.
func TestStreamSendsEveryCircuitOfATick(t *testing.T) {
	_, mc := testEngine(t)
	const circuits = 17
	for i := range circuits {
		GetCircuit(fmt.Sprint("circuit", i))
	}
	sh := NewStreamHandler()
	sh.Start()
	defer sh.Stop()
	w := &slowWriter{header: http.Header{}, entered: make(chan struct{}), release: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan struct{})
	go func() {
		sh.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil).WithContext(ctx))
		close(served)
	}()
	defer func() { cancel(); <-served }()
	for sh.clients() == 0 {
		time.Sleep(time.Millisecond)
	}
	mc.Advance(time.Second)
	await(t, w.entered)
	sh.mu.Lock() // the tick's events are all handed over
	sh.mu.Unlock()
	close(w.release)
	deadline := time.Now().Add(2 * time.Second)
	for w.events() < 2*circuits && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if got := w.events(); got != 2*circuits {
		t.Fatalf("the client got %d events of the tick; want %d, two per circuit", got, 2*circuits)
	}
}

// The pool of a name has no queue (MaxQueueSize 0: beyond
// MaxConcurrentRequests a command is rejected at once), so the stream's
// propertyValue_queueSizeRejectionThreshold, which the dashboard shows as
// the pool's "Queue Size", is 0, as hystrix-go sends it.
func TestStreamPoolHasNoQueue(t *testing.T) {
	e, _ := testEngine(t)
	ConfigureCommand("noqueue", CommandConfig{MaxConcurrentRequests: 7})
	if err := Do("noqueue", func() error { return nil }, nil); err != nil {
		t.Fatal(err)
	}
	cb, _, _ := GetCircuit("noqueue")
	ev := poolEvent(e, cb, e.settingsFor("noqueue"))
	if ev.QueueSizeRejectionThreshold != 0 || ev.CurrentQueueSize != 0 {
		t.Fatalf("pool event: queueSizeRejectionThreshold %d, currentQueueSize %d; want 0 and 0 (the pool has no queue)",
			ev.QueueSizeRejectionThreshold, ev.CurrentQueueSize)
	}
	if ev.CurrentPoolSize != 7 || ev.CurrentCorePoolSize != 7 || ev.CurrentMaximumPoolSize != 7 {
		t.Fatalf("pool event sizes %+v; want 7", ev)
	}
}
