package metricsstream

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// deadlineWriter is a ResponseWriter with write deadlines, as a server's,
// that logs the stream's calls in order: "set" and "clear" for
// SetWriteDeadline, "write", "flush".
type deadlineWriter struct {
	*httptest.ResponseRecorder
	mu      sync.Mutex
	log     []string
	flushes chan struct{}
}

func (w *deadlineWriter) add(s string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.log = append(w.log, s)
}

func (w *deadlineWriter) SetWriteDeadline(d time.Time) error {
	if d.IsZero() {
		w.add("clear")
	} else {
		w.add("set")
	}
	return nil
}

func (w *deadlineWriter) Write(b []byte) (int, error) {
	w.add("write")
	return w.ResponseRecorder.Write(b)
}

func (w *deadlineWriter) Flush() {
	w.add("flush")
	w.ResponseRecorder.Flush()
	w.flushes <- struct{}{}
}

// TestHandlerDoesNotWaitWithAWriteDeadline checks that the 10s write
// deadline bounds the writing of a frame only, not the wait for the next
// tick. An HTTP/2 server arms a timer for a stream's write deadline that
// resets the stream when it fires, written to or not: a stream whose
// interval is longer than the deadline (?delay=20000, which the handler
// accepts) was cut 10s after each frame.
func TestHandlerDoesNotWaitWithAWriteDeadline(t *testing.T) {
	reg, mc := newStreamRegistry()
	reg.Command("C", Config{})
	h := Handler(WithRegistry(reg))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := &deadlineWriter{ResponseRecorder: httptest.NewRecorder(), flushes: make(chan struct{}, 10)}
	req := httptest.NewRequestWithContext(ctx, http.MethodGet, "/hystrix.stream?delay=20000", nil)
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.ServeHTTP(w, req)
	}()
	for i := range 2 {
		select {
		case <-w.flushes:
		case <-time.After(failAfter):
			t.Fatalf("frame %d was not written", i)
		}
		if i == 0 {
			mc.Advance(20 * time.Second)
		}
	}
	cancel()
	<-done

	w.mu.Lock()
	defer w.mu.Unlock()
	require.Contains(t, w.log, "flush")
	for i, s := range w.log {
		if s != "flush" {
			continue
		}
		next := ""
		for _, d := range w.log[i+1:] {
			if d == "set" || d == "clear" {
				next = d
				break
			}
		}
		assert.Equal(t, "clear", next, "after the flush at %d the deadline is cleared before the stream waits: %v", i, w.log)
	}
}
