package metricsstream_test

import (
	"context"
	"fmt"
	"time"

	"github.com/rxhystrix/rxhystrix/clock"
	"github.com/rxhystrix/rxhystrix/metricsstream"
)

var start = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// complete records one execution made of events.
func complete(m *metricsstream.CommandMetrics, events ...metricsstream.EventType) {
	var c metricsstream.Completion
	for _, e := range events {
		c.Events.Add(e, 1)
	}
	m.MarkCompletion(&c)
}

// A command records each execution; rolling counts and health come from
// the closed buckets of the window.
func ExampleRegistry_Command() {
	mc := clock.NewManual(start)
	m := metricsstream.NewRegistry(mc).Command("GetUser", metricsstream.Config{})

	complete(m, metricsstream.Success)
	complete(m, metricsstream.Success)
	complete(m, metricsstream.Failure, metricsstream.FallbackSuccess)
	complete(m, metricsstream.ShortCircuited, metricsstream.FallbackSuccess)
	fmt.Println("before the bucket closes:", m.RollingCount(metricsstream.Success))

	mc.Advance(time.Second)
	fmt.Println("successes:", m.RollingCount(metricsstream.Success))
	fmt.Println("short-circuits:", m.RollingCount(metricsstream.ShortCircuited))
	fmt.Printf("health: %+v\n", m.HealthCounts())
	// Output:
	// before the bucket closes: 0
	// successes: 2
	// short-circuits: 1
	// health: {Total:3 Errors:1 ErrorPercentage:33 Slow:0}
}

// The circuit breaker subscribes to the health stream: the current counts
// at once, then new counts every HealthSnapshotInterval, while it stays
// subscribed and there is something new to snapshot.
func ExampleCommandMetrics_HealthStream() {
	mc := clock.NewManual(start)
	m := metricsstream.NewRegistry(mc).Command("GetUser", metricsstream.Config{})

	sub := m.HealthStream().SubscribeFunc(context.Background(), func(h metricsstream.HealthCounts) {
		fmt.Printf("%v total=%d errors=%d (%d%%)\n", mc.Since(start), h.Total, h.Errors, h.ErrorPercentage)
	}, nil, nil)

	complete(m, metricsstream.Success)
	complete(m, metricsstream.Timeout, metricsstream.FallbackMissing)
	mc.Advance(500 * time.Millisecond)
	complete(m, metricsstream.Failure, metricsstream.FallbackSuccess)
	mc.Advance(500 * time.Millisecond)

	m.ResetStream() // the breaker closed: health starts over
	mc.Advance(500 * time.Millisecond)

	sub.Unsubscribe()
	fmt.Println("timers left:", mc.Pending())
	// Output:
	// 0s total=0 errors=0 (0%)
	// 500ms total=2 errors=1 (50%)
	// 1s total=3 errors=2 (66%)
	// 1.5s total=0 errors=0 (0%)
	// timers left: 0
}

// Every subscriber of Completions receives each execution once, on a
// goroutine of its subscription.
func ExampleCommandMetrics_Completions() {
	m := metricsstream.NewRegistry(clock.NewManual(start)).Command("GetUser", metricsstream.Config{})

	got := make(chan metricsstream.Completion, 10)
	sub := m.Completions().SubscribeFunc(context.Background(), func(c metricsstream.Completion) { got <- c }, nil, nil)
	defer sub.Unsubscribe()

	complete(m, metricsstream.Failure, metricsstream.FallbackMissing)
	c := <-got
	for e := range metricsstream.NumEventTypes {
		if c.Events.Contains(e) {
			fmt.Println(e)
		}
	}
	// Output:
	// FAILURE
	// FALLBACK_MISSING
	// EXCEPTION_THROWN
}

// Latencies are kept to 3 significant digits over the percentile window.
func ExampleCommandMetrics_ExecutionLatencyPercentile() {
	mc := clock.NewManual(start)
	m := metricsstream.NewRegistry(mc).Command("GetUser", metricsstream.Config{})
	for i := 1; i <= 100; i++ {
		d := time.Duration(i) * time.Millisecond
		c := metricsstream.Completion{Executed: true, ExecutionLatency: d, TotalLatency: d + time.Millisecond}
		c.Events.Add(metricsstream.Success, 1)
		m.MarkCompletion(&c)
	}
	mc.Advance(10 * time.Second) // the first 10s percentile bucket closes

	for _, p := range []float64{0, 50, 99, 100} {
		fmt.Printf("p%v: %v\n", p, m.ExecutionLatencyPercentile(p).Round(time.Millisecond))
	}
	fmt.Println("mean:", m.ExecutionLatencyMean().Round(time.Millisecond))
	fmt.Println("total p50:", m.TotalLatencyPercentile(50).Round(time.Millisecond))
	// Output:
	// p0: 1ms
	// p50: 50ms
	// p99: 99ms
	// p100: 100ms
	// mean: 51ms
	// total p50: 51ms
}

// EventCounts counts emissions and marks the other events, as Hystrix's
// ExecutionResult does.
func ExampleEventCounts() {
	var c metricsstream.EventCounts
	c.Add(metricsstream.Emit, 1)
	c.Add(metricsstream.Emit, 1)
	c.Add(metricsstream.Success, 1)
	fmt.Println(c.Count(metricsstream.Emit), c.Count(metricsstream.Success), c.Count(metricsstream.ExceptionThrown))
	fmt.Println(c)
	// Output:
	// 2 1 0
	// [EMITx2, SUCCESS]
}

// EventTotals prints the events that happened, with their totals.
func ExampleEventTotals() {
	var t metricsstream.EventTotals
	t[metricsstream.Success] = 10
	t[metricsstream.Timeout] = 2
	fmt.Println(t)
	fmt.Println(metricsstream.EventTotals{})
	// Output:
	// [SUCCESS: 10, TIMEOUT: 2]
	// []
}

func ExampleParseEventType() {
	e, err := metricsstream.ParseEventType("THREAD_POOL_REJECTED")
	fmt.Println(e == metricsstream.PoolRejected, err)
	fmt.Println(e.IsHealthError(), e.IsTerminal())
	_, err = metricsstream.ParseEventType("REJECTED")
	fmt.Println(err)
	// Output:
	// true <nil>
	// true false
	// metricsstream: unknown event type: "REJECTED"
}

// A worker pool reports its commands; a provider adds what only the pool
// knows.
func ExamplePoolMetrics() {
	mc := clock.NewManual(start)
	p := metricsstream.NewRegistry(mc).Pool("users-db", metricsstream.Config{})
	p.SetStatusProvider(poolSize{core: 10})

	p.MarkStart()
	p.MarkStart()
	p.MarkDone()
	p.MarkRejected()
	p.SetQueueSize(3)
	mc.Advance(time.Second)

	s := p.Snapshot()
	fmt.Println("active:", s.ActiveCount, "queued:", s.QueueSize, "core:", s.Status.CoreSize)
	fmt.Println("executed:", s.Rolling[metricsstream.PoolExecuted], "rejected:", s.Rolling[metricsstream.PoolRejection])
	fmt.Println("max active:", s.RollingMaxActive)
	// Output:
	// active: 1 queued: 3 core: 10
	// executed: 1 rejected: 1
	// max active: 2
}

type poolSize struct{ core int }

func (p poolSize) PoolStatus() metricsstream.PoolStatus {
	return metricsstream.PoolStatus{CoreSize: p.core, MaximumSize: p.core}
}

// A dashboard takes one snapshot per key and tick.
func ExampleRegistry_Commands() {
	mc := clock.NewManual(start)
	r := metricsstream.NewRegistry(mc)
	complete(r.Command("GetUser", metricsstream.Config{}), metricsstream.Success)
	complete(r.Command("GetUser", metricsstream.Config{}), metricsstream.Timeout, metricsstream.FallbackSuccess)
	mc.Advance(time.Second)

	for m := range r.Commands() {
		s := m.Snapshot()
		fmt.Printf("%s: requests=%d errors=%d%% timeouts=%d open=%v\n",
			s.Key, s.Health.Total, s.Health.ErrorPercentage, s.Rolling[metricsstream.Timeout], s.Status.CircuitBreakerOpen)
	}
	// Output: GetUser: requests=2 errors=50% timeouts=1 open=false
}
