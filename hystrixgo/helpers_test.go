package hystrix

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/rxhystrix/rxhystrix/clock"
	"github.com/rxhystrix/rxhystrix/command"
	metricCollector "github.com/rxhystrix/rxhystrix/hystrixgo/metric_collector"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// testEngine swaps the package's engine for one on a registry of its own
// on a manual clock, until the test ends.
func testEngine(t *testing.T) (*engine, *clock.Manual) {
	t.Helper()
	e, mc, restore := swapEngine()
	t.Cleanup(restore)
	return e, mc
}

// swapEngine swaps the package's engine for one on a registry of its own
// on a manual clock reading t0, until restore is called.
func swapEngine() (e *engine, mc *clock.Manual, restore func()) {
	mc = clock.NewManual(t0)
	reg := command.NewRegistry(command.WithClock(mc))
	e = newEngine(reg)
	old := std.Swap(e)
	return e, mc, func() {
		e.flush()
		std.Store(old)
		reg.Close()
	}
}

// recorder is a collector that keeps what it is told.
type recorder struct {
	mu      sync.Mutex
	updates []metricCollector.MetricResult
	resets  int
}

func (r *recorder) Update(m metricCollector.MetricResult) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.updates = append(r.updates, m)
}

func (r *recorder) Reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.resets++
}

func (r *recorder) results() []metricCollector.MetricResult {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]metricCollector.MetricResult(nil), r.updates...)
}

var (
	registerOnce sync.Once
	recordersMu  sync.Mutex
	recorders    = map[string][]*recorder{} // by circuit name, newest last
)

// collectorOf returns the collector the newest circuit of name was given.
func collectorOf(t fatalT, name string) *recorder {
	t.Helper()
	recordersMu.Lock()
	defer recordersMu.Unlock()
	rs := recorders[name]
	if len(rs) == 0 {
		t.Fatalf("no collector was made for %q", name)
	}
	return rs[len(rs)-1]
}

// withCollectors registers, once for the test binary, a factory of
// recorders.
func withCollectors() {
	registerOnce.Do(func() {
		metricCollector.Registry.Register(func(name string) metricCollector.MetricCollector {
			r := &recorder{}
			recordersMu.Lock()
			recorders[name] = append(recorders[name], r)
			recordersMu.Unlock()
			return r
		})
	})
}

// hang is a run that blocks until released or its context ends, and
// says when it has started.
type hang struct {
	started chan struct{}
	release chan struct{}
}

func newHang() *hang { return &hang{started: make(chan struct{}, 100), release: make(chan struct{})} }

func (h *hang) run(ctx context.Context) error {
	h.started <- struct{}{}
	<-h.release
	return nil
}

// wait waits until n runs have started.
func (h *hang) wait(t fatalT, n int) {
	t.Helper()
	for range n {
		select {
		case <-h.started:
		case <-time.After(10 * time.Second):
			t.Fatalf("run did not start")
		}
	}
}

// await returns the value on ch, failing after 10s of real time.
func await[T any](t fatalT, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("no result")
		var zero T
		return zero
	}
}

// fatalT is what the helpers need of a test: a *testing.T, or a
// *rapid.T in a property test.
type fatalT interface {
	Helper()
	Fatalf(format string, args ...any)
}

// doAsync runs DoC on a goroutine of its own and sends its result, nil
// included.
func doAsync(ctx context.Context, name string, run func(context.Context) error, fb func(context.Context, error) error) <-chan error {
	ch := make(chan error, 1)
	go func() { ch <- DoC(ctx, name, run, fb) }()
	return ch
}
