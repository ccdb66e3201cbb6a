package turbine

import (
	"context"
	"net/http/httptest"
	"runtime"
	"testing"
	"time"

	"github.com/rxhystrix/rxhystrix/internal/ssetest"
)

// failAfter bounds a wait for the network, so that a test that breaks
// fails instead of hanging. Nothing waits for time to pass: the clocks
// are manual.
const failAfter = 10 * time.Second

// fakeInstance is the Hystrix stream of one instance: it writes the frames
// a test hands it, so the test decides what the instance reports.
type fakeInstance struct {
	*ssetest.Stream
	srv *httptest.Server
}

func newFakeInstance(t *testing.T) *fakeInstance {
	t.Helper()
	f := &fakeInstance{Stream: ssetest.NewStream()}
	f.srv = httptest.NewServer(f.Stream)
	t.Cleanup(f.srv.Close) // after the aggregator's Close, registered later
	t.Cleanup(f.Close)     // before the server closes
	return f
}

func (f *fakeInstance) url() string { return f.srv.URL + "/hystrix.stream" }

// send hands a frame of objects, one event each, to the connection being
// served.
func (f *fakeInstance) send(t *testing.T, objects ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), failAfter)
	defer cancel()
	events := make([][]byte, len(objects))
	for i, o := range objects {
		events[i] = ssetest.Data(o)
	}
	if err := f.Send(ctx, events...); err != nil {
		t.Fatal("the aggregator never read the instance")
	}
}

// waitServing waits until the instance has served n connections and
// serves only the last, so that a frame sent next goes to it.
func (f *fakeInstance) waitServing(t *testing.T, n int32) {
	t.Helper()
	deadline := time.Now().Add(failAfter)
	for f.Connections() != n || f.Serving() != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("%d connections served, %d being served; want the %dth alone", f.Connections(), f.Serving(), n)
		}
		runtime.Gosched()
	}
}

// hangUp ends the connection being served.
func (f *fakeInstance) hangUp(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), failAfter)
	defer cancel()
	if err := f.HangUp(ctx); err != nil {
		t.Fatal("no connection to end")
	}
}
