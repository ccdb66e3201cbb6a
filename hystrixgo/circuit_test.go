package hystrix

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metricCollector "github.com/rxhystrix/rxhystrix/hystrixgo/metric_collector"
	"github.com/rxhystrix/rxhystrix/metricsstream"
)

func TestGetCircuitCreatesOnce(t *testing.T) {
	testEngine(t)
	var created atomic.Int32
	var wg sync.WaitGroup
	circuits := make([]*CircuitBreaker, 100)
	for i := range circuits {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cb, ok, err := GetCircuit("race")
			if err != nil {
				t.Error(err)
			}
			if ok {
				created.Add(1)
			}
			circuits[i] = cb
		}()
	}
	wg.Wait()
	if n := created.Load(); n != 1 {
		t.Fatalf("created = true %d times; want 1", n)
	}
	for _, cb := range circuits {
		if cb != circuits[0] {
			t.Fatal("racing callers got different circuits")
		}
	}
}

func TestFlush(t *testing.T) {
	_, mc := testEngine(t)
	withCollectors()
	ConfigureCommand("flush", CommandConfig{RequestVolumeThreshold: 2, Timeout: 123})
	trip(t, "flush", 2, mc.Advance)
	cb, _, _ := GetCircuit("flush")
	if !cb.IsOpen() {
		t.Fatal("precondition: the circuit is open")
	}
	rec := collectorOf(t, "flush")
	if n := len(streamFrames(current())); n != 2 {
		t.Fatalf("the stream shows %d events before Flush; want 2, a command and a pool", n)
	}
	Flush()
	if rec.resets != 2 {
		t.Fatalf("collector reset %d times; want 2, at its making and at Flush", rec.resets)
	}
	if n := len(streamFrames(current())); n != 0 {
		t.Fatalf("the stream still shows %d events after Flush; want none", n)
	}
	cb2, created, _ := GetCircuit("flush")
	if !created || cb2 == cb {
		t.Fatal("GetCircuit after Flush did not make the circuit afresh")
	}
	if cb2.IsOpen() {
		t.Fatal("the circuit made after Flush is open")
	}
	if collectorOf(t, "flush") == rec {
		t.Fatal("the new circuit kept the old collector")
	}
	if got := GetCircuitSettings()["flush"].Timeout; got != 123*time.Millisecond {
		t.Fatalf("settings after Flush: Timeout %v; want 123ms", got)
	}
	mc.Advance(time.Second)
	if cb2.IsOpen() {
		t.Fatal("the failures before Flush tripped the new circuit")
	}
}

func TestReportEvent(t *testing.T) {
	cases := []struct {
		types   []string
		want    metricCollector.MetricResult
		event   metricsstream.EventType
		wantErr bool
	}{
		{types: []string{"success"}, want: metricCollector.MetricResult{Attempts: 1, Successes: 1}, event: metricsstream.Success},
		{types: []string{"failure"}, want: metricCollector.MetricResult{Attempts: 1, Failures: 1, Errors: 1}, event: metricsstream.Failure},
		{types: []string{"rejected", "fallback-success"}, want: metricCollector.MetricResult{Attempts: 1, Rejects: 1, Errors: 1, FallbackSuccesses: 1}, event: metricsstream.PoolRejected},
		{types: []string{"short-circuit", "fallback-failure"}, want: metricCollector.MetricResult{Attempts: 1, ShortCircuits: 1, Errors: 1, FallbackFailures: 1}, event: metricsstream.ShortCircuited},
		{types: []string{"timeout"}, want: metricCollector.MetricResult{Attempts: 1, Timeouts: 1, Errors: 1}, event: metricsstream.Timeout},
		{types: []string{"context_canceled"}, want: metricCollector.MetricResult{Attempts: 1, ContextCanceled: 1}, event: metricsstream.Cancelled},
		{types: []string{"context_deadline_exceeded"}, want: metricCollector.MetricResult{Attempts: 1, ContextDeadlineExceeded: 1}, event: metricsstream.Cancelled},
		{types: nil, wantErr: true},
		{types: []string{"nonsense"}, wantErr: true},
	}
	for _, c := range cases {
		t.Run(fmt.Sprint(c.types), func(t *testing.T) {
			e, mc := testEngine(t)
			withCollectors()
			cb, _, _ := GetCircuit("report")
			start := mc.Now()
			mc.Advance(3 * time.Millisecond)
			err := cb.ReportEvent(c.types, start, 2*time.Millisecond)
			if c.wantErr {
				if err == nil {
					t.Fatal("ReportEvent returned nil; want an error")
				}
				if n := len(collectorOf(t, "report").results()); n != 0 {
					t.Fatalf("a refused report reached the collector %d times", n)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := collectorOf(t, "report").results()
			want := c.want
			want.RunDuration, want.TotalDuration = 2*time.Millisecond, 3*time.Millisecond
			if len(got) != 1 || got[0] != want {
				t.Fatalf("collector got %+v; want %+v", got, want)
			}
			mc.Advance(time.Second)
			if n := e.coreFor("report").metrics.CumulativeCount(c.event); n != 1 {
				t.Fatalf("%v count = %d; want 1", c.event, n)
			}
		})
	}
}

// Every way a command ends reaches each collector as one Update.
func TestOneUpdatePerCommand(t *testing.T) {
	cases := []struct {
		name     string
		run      func() error
		fallback func(error) error
		want     metricCollector.MetricResult
	}{
		{"success", func() error { return nil }, nil, metricCollector.MetricResult{Attempts: 1, Successes: 1}},
		{"failure", func() error { return errRun }, nil, metricCollector.MetricResult{Attempts: 1, Failures: 1, Errors: 1}},
		{"failure, fallback succeeds", func() error { return errRun }, func(error) error { return nil },
			metricCollector.MetricResult{Attempts: 1, Failures: 1, Errors: 1, FallbackSuccesses: 1}},
		{"failure, fallback fails", func() error { return errRun }, func(err error) error { return err },
			metricCollector.MetricResult{Attempts: 1, Failures: 1, Errors: 1, FallbackFailures: 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			testEngine(t)
			withCollectors()
			_ = Do("update", c.run, c.fallback)
			got := collectorOf(t, "update").results()
			if len(got) != 1 {
				t.Fatalf("collector got %d updates; want 1", len(got))
			}
			got[0].RunDuration, got[0].TotalDuration = 0, 0
			if got[0] != c.want {
				t.Fatalf("collector got %+v; want %+v", got[0], c.want)
			}
		})
	}
}

// plainCollector keeps its counts without a lock, as a collector written
// for hystrix-go may: hystrix-go tells a circuit's collectors of one
// command at a time, and never while it resets them.
type plainCollector struct{ updates, inside, overlaps int }

func (p *plainCollector) Update(metricCollector.MetricResult) {
	p.inside++
	if p.inside > 1 {
		p.overlaps++
	}
	p.updates++
	p.inside--
}

func (p *plainCollector) Reset() { p.updates = 0 }

// A circuit's collector is told of one command at a time, however many
// of the circuit's commands end together (run with -race).
func TestCollectorIsToldOfOneCommandAtATime(t *testing.T) {
	testEngine(t)
	cb, _, _ := GetCircuit("serial")
	pc := &plainCollector{}
	cb.collectors = []metricCollector.MetricCollector{pc}
	const n = 8
	start := make(chan struct{})
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			_ = Do("serial", func() error { return nil }, nil)
		}()
	}
	close(start)
	wg.Wait()
	if pc.updates != n || pc.overlaps != 0 {
		t.Fatalf("collector counted %d updates, %d of them overlapping another; want %d, none overlapping", pc.updates, pc.overlaps, n)
	}
}

// A new circuit resets each collector it makes, before any Update, as
// hystrix-go's metric exchange does: a collector written for hystrix-go
// may make its state in Reset alone.
func TestNewCircuitResetsItsCollectors(t *testing.T) {
	testEngine(t)
	withCollectors()
	if _, created, _ := GetCircuit("fresh"); !created {
		t.Fatal("precondition: GetCircuit made the circuit")
	}
	rec := collectorOf(t, "fresh")
	rec.mu.Lock()
	resets, updates := rec.resets, len(rec.updates)
	rec.mu.Unlock()
	if resets != 1 || updates != 0 {
		t.Fatalf("a new circuit's collector had %d resets and %d updates; want 1 reset before any update", resets, updates)
	}
}
