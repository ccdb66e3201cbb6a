package turbine

import (
	"context"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// failAfter bounds a wait for the network, so that a test that breaks
// fails instead of hanging. Nothing waits for time to pass: the clocks
// are manual.
const failAfter = 10 * time.Second

// fakeInstance is the Hystrix stream of one instance: it writes the frames
// a test hands it, so the test decides what the instance reports.
type fakeInstance struct {
	srv         *httptest.Server
	frames      chan []string // the data of each event of one frame
	end         chan struct{} // ends the connection being served
	connections atomic.Int32  // connections served
	serving     atomic.Int32  // connections being served now
}

func newFakeInstance(t *testing.T) *fakeInstance {
	t.Helper()
	f := &fakeInstance{frames: make(chan []string), end: make(chan struct{})}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close) // after the aggregator's Close, registered later
	return f
}

func (f *fakeInstance) url() string { return f.srv.URL + "/hystrix.stream" }

func (f *fakeInstance) serve(w http.ResponseWriter, r *http.Request) {
	f.connections.Add(1)
	f.serving.Add(1)
	defer f.serving.Add(-1)
	w.Header().Set("Content-Type", "text/event-stream;charset=UTF-8")
	w.WriteHeader(http.StatusOK)
	w.(http.Flusher).Flush()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-f.end:
			return
		case frame := <-f.frames:
			var b strings.Builder
			for _, data := range frame {
				b.WriteString("data: " + data + "\n\n")
			}
			b.WriteString("ping: \n\n")
			if _, err := w.Write([]byte(b.String())); err != nil {
				return
			}
			w.(http.Flusher).Flush()
		}
	}
}

// send hands a frame to the connection being served.
func (f *fakeInstance) send(t *testing.T, events ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), failAfter)
	defer cancel()
	select {
	case f.frames <- events:
	case <-ctx.Done():
		t.Fatal("the aggregator never read the instance")
	}
}

// waitServing waits until the instance has served n connections and
// serves only the last, so that a frame sent next goes to it.
func (f *fakeInstance) waitServing(t *testing.T, n int32) {
	t.Helper()
	deadline := time.Now().Add(failAfter)
	for f.connections.Load() != n || f.serving.Load() != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("%d connections served, %d being served; want the %dth alone", f.connections.Load(), f.serving.Load(), n)
		}
		runtime.Gosched()
	}
}

// hangUp ends the connection being served.
func (f *fakeInstance) hangUp(t *testing.T) {
	t.Helper()
	select {
	case f.end <- struct{}{}:
	case <-time.After(failAfter):
		t.Fatal("no connection to end")
	}
}
