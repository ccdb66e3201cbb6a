package metricsstream

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/rxhystrix/rxhystrix/internal/clock"
	"github.com/stretchr/testify/assert"
)

// successCompletion returns what a command records for a successful
// execution: SUCCESS and EMIT, both latencies, ended at end.
func successCompletion(concurrencyAtStart int64, end time.Time, latency time.Duration) Completion {
	c := Completion{
		CommandKey: "cmd", GroupKey: "group", PoolKey: "pool",
		ExecutionLatency: latency, TotalLatency: latency + 50*time.Microsecond,
		Executed: true, ConcurrencyAtStart: concurrencyAtStart, End: end,
	}
	c.Events[Emit] = 1
	c.Events[Success] = 1
	return c
}

func TestRecordingDoesNotAllocate(t *testing.T) {
	m, mc := newTestMetrics(t, Config{SlowCallDuration: time.Millisecond})
	warm := successCompletion(0, time.Time{}, 3*time.Millisecond)
	m.MarkCompletion(&warm) // allocates the latency chunks once
	allocs := testing.AllocsPerRun(1000, func() {
		c := successCompletion(m.MarkStart(), time.Time{}, 3*time.Millisecond)
		m.MarkCompletion(&c)
		mc.Advance(time.Millisecond)
	})
	assert.Zero(t, allocs)
}

// completionsFor returns 64 successful completions ending at end, with
// execution latencies from 0 to 6.3ms: what a benchmark records in turn.
func completionsFor(end time.Time) []Completion {
	cs := make([]Completion, 64)
	for i := range cs {
		cs[i] = successCompletion(0, end, time.Duration(i)*100*time.Microsecond)
	}
	return cs
}

// BenchmarkMarkCompletion records one successful execution per op, in
// parallel on one key: every counter (rolling, cumulative, health), both
// latency histograms and the concurrency. The end time is given, as the
// command gives it: it has read the clock to measure the latencies.
func BenchmarkMarkCompletion(b *testing.B) {
	m := NewRegistry(clock.Real).Command("bench", Config{})
	end := clock.Real.Now()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		cs := completionsFor(end)
		for i := 0; pb.Next(); i++ {
			m.MarkCompletion(&cs[i&63])
		}
	})
}

// BenchmarkMarkCompletionReadingClock is BenchmarkMarkCompletion with the
// end left for MarkCompletion to read from the clock.
func BenchmarkMarkCompletionReadingClock(b *testing.B) {
	m := NewRegistry(clock.Real).Command("bench", Config{})
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		cs := completionsFor(time.Time{})
		for i := 0; pb.Next(); i++ {
			m.MarkCompletion(&cs[i&63])
		}
	})
}

// BenchmarkMarkCompletionPercentileDisabled is BenchmarkMarkCompletion
// with latency recording off: the striped counters alone. The difference
// is what the two latency histograms cost.
func BenchmarkMarkCompletionPercentileDisabled(b *testing.B) {
	m := NewRegistry(clock.Real).Command("bench", Config{PercentileDisabled: true})
	end := clock.Real.Now()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		cs := completionsFor(end)
		for i := 0; pb.Next(); i++ {
			m.MarkCompletion(&cs[i&63])
		}
	})
}

// BenchmarkMarkStartAndCompletion is a whole execution's recording:
// MarkStartAt, then MarkCompletion.
func BenchmarkMarkStartAndCompletion(b *testing.B) {
	m := NewRegistry(clock.Real).Command("bench", Config{})
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			i++
			start := time.Now()
			c := successCompletion(m.MarkStartAt(start.UnixNano()), start, time.Duration(i%64)*100*time.Microsecond)
			m.MarkCompletion(&c)
		}
	})
}

// BenchmarkMarkCompletionWithSubscriber adds a Completions subscriber.
func BenchmarkMarkCompletionWithSubscriber(b *testing.B) {
	m := NewRegistry(clock.Real).Command("bench", Config{})
	sub := m.Completions().SubscribeFunc(b.Context(), func(Completion) {}, nil, nil)
	defer sub.Unsubscribe()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			c := successCompletion(0, time.Now(), time.Millisecond)
			m.MarkCompletion(&c)
		}
	})
}

// BenchmarkMemoryPerKey reports the heap held per command key with the
// default windows, for 10,000 keys: idle, and with one recorded
// completion (which allocates the two latency histograms' directories
// and one chunk each).
func BenchmarkMemoryPerKey(b *testing.B) {
	const keys = 10000
	for _, recordOne := range []bool{false, true} {
		name := "idle"
		if recordOne {
			name = "one-completion"
		}
		b.Run(name, func(b *testing.B) {
			names := make([]string, keys)
			for i := range names {
				names[i] = fmt.Sprintf("command-%05d", i)
			}
			var perKey float64
			for range b.N {
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				r := NewRegistry(clock.Real)
				now := time.Now()
				for _, k := range names {
					m := r.Command(k, Config{})
					if recordOne {
						c := successCompletion(m.MarkStartAt(now.UnixNano()), now, 3*time.Millisecond)
						m.MarkCompletion(&c)
					}
				}
				runtime.GC()
				runtime.ReadMemStats(&after)
				perKey = float64(after.HeapAlloc-before.HeapAlloc) / keys
				runtime.KeepAlive(r)
			}
			b.ReportMetric(perKey, "B/key")
		})
	}
}

// registryOf returns a registry of n keys, each with executions recorded
// in every bucket of its window and percentiles computed.
func registryOf(b *testing.B, n int) (*Registry, *clock.Manual) {
	mc := clock.NewManual(t0)
	r := NewRegistry(mc)
	ms := make([]*CommandMetrics, n)
	for i := range ms {
		ms[i] = r.Command(fmt.Sprintf("command-%04d", i), Config{})
	}
	for s := range 12 {
		for i, m := range ms {
			c := successCompletion(m.MarkStart(), time.Time{}, time.Duration(i+s)*time.Millisecond)
			if s%3 == 0 {
				c.Events = EventCounts{}
				c.Events.Add(Failure, 1)
				c.Events.Add(FallbackSuccess, 1)
			}
			m.MarkCompletion(&c)
		}
		mc.Advance(time.Second)
	}
	return r, mc
}

// BenchmarkHealthSnapshot1000Keys reads the health counts of 1,000 keys,
// what the breakers' health ticks cost (one op is all 1,000 keys).
func BenchmarkHealthSnapshot1000Keys(b *testing.B) {
	r, _ := registryOf(b, 1000)
	b.ReportAllocs()
	b.ResetTimer()
	var total int64
	for range b.N {
		for m := range r.Commands() {
			total += m.HealthCounts().Total
		}
	}
	runtime.KeepAlive(total)
}

// BenchmarkDashboardSnapshot1000Keys takes the full snapshot of 1,000
// keys, what one tick of the dashboard stream needs (one op is all 1,000
// keys); latency distributions come from their per-bucket cache.
func BenchmarkDashboardSnapshot1000Keys(b *testing.B) {
	r, _ := registryOf(b, 1000)
	for m := range r.Commands() {
		m.Snapshot() // fill the latency caches
	}
	b.ReportAllocs()
	b.ResetTimer()
	var total int64
	for range b.N {
		for m := range r.Commands() {
			s := m.Snapshot()
			total += s.Rolling[Success] + int64(s.Latency.Execution.Percentile(99))
		}
	}
	runtime.KeepAlive(total)
}

// BenchmarkLatencyDistribution merges the six closed latency buckets of a
// busy key into its distributions (done once per percentile bucket).
func BenchmarkLatencyDistribution(b *testing.B) {
	m, mc := newTestMetrics(b, Config{})
	for s := range 6 {
		for i := range 10000 {
			us := 200 + (i*7919)%200000 // 0.2ms to 200ms
			c := successCompletion(0, time.Time{}, time.Duration(us+s)*time.Microsecond)
			m.MarkCompletion(&c)
		}
		mc.Advance(10 * time.Second)
	}
	n := m.latency.bucketAt(mc.Now())
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		m.latency.distributions(n)
	}
}
