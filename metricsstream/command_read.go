package metricsstream

import (
	"sync/atomic"
	"time"
)

// HealthCounts returns the health counts of the closed buckets of the
// health window, what the circuit breaker judges by (see [HealthCounts]),
// or, with Config.HealthWindowCalls, those of the latest executions.
// After [CommandMetrics.ResetStream] they start again from zero.
func (m *CommandMetrics) HealthCounts() HealthCounts { return m.healthAt(m.clock.Now()) }

func (m *CommandMetrics) healthAt(now time.Time) HealthCounts {
	if w := m.calls.Load(); w != nil {
		return w.health()
	}
	r := m.health.Load()
	var c [healthCounters]int64
	r.sumsInto(r.bucketAt(now), c[:])
	return HealthCountsOf(c[healthTotal], c[healthErrors], c[healthSlow])
}

// ResetStream starts the health counts over from empty buckets beginning
// now, as Hystrix's HystrixCommandMetrics.resetStream: executions
// recorded before the reset never count in health again. One recorded
// after it counts, in the first new bucket if it ended before the reset
// (its recorder read the clock, then the breaker closed), as Hystrix
// counts an event in the bucket it reaches the stream in. The circuit
// breaker calls it when it closes. With Config.HealthWindowCalls the
// window of calls starts empty too. Rolling and cumulative counts,
// latencies and the other streams are not affected; subscribers of
// [CommandMetrics.HealthStream] stay subscribed and tick from then on at
// the boundaries of the new buckets.
func (m *CommandMetrics) ResetStream() {
	now := m.clock.Now()
	h := newHealthRing(now, m.cfg)
	h.offset = now.Sub(m.created)
	m.health.Store(h)
	calls := m.calls.Load() != nil
	if calls {
		m.calls.Store(newCallWindow(m.cfg.HealthWindowCalls))
	}
	if s := m.streams.Load(); s != nil {
		s.health.realign()
		if calls && m.healthRests.Load() {
			// The stream may rest with the counts of the calls just
			// dropped, the buckets being empty: it sends the empty
			// window at the next boundary, then rests again.
			m.wakeHealth()
		}
	}
}

// RollingCount returns how many times e happened in the closed buckets of
// the rolling window (the bucket in progress is not counted, as in
// Hystrix). RollingCount(ExceptionThrown) is derived: the rolling
// BAD_REQUEST + FALLBACK_FAILURE + FALLBACK_MISSING + FALLBACK_REJECTION.
func (m *CommandMetrics) RollingCount(e EventType) int64 {
	if !e.valid() {
		return 0
	}
	t := m.rollingAt(m.clock.Now())
	return t[e]
}

// RollingCounts returns every rolling count (see
// [CommandMetrics.RollingCount]).
func (m *CommandMetrics) RollingCounts() EventTotals { return m.rollingAt(m.clock.Now()) }

func (m *CommandMetrics) rollingAt(now time.Time) EventTotals {
	var t EventTotals
	m.rolling.sumsInto(m.rolling.bucketAt(now), t[:])
	deriveExceptionThrown(&t)
	return t
}

// CumulativeCount returns how many times e happened since the metrics were
// created, up to the last closed rolling bucket, as Hystrix's
// CumulativeCommandEventCounterStream. ExceptionThrown is derived as for
// [CommandMetrics.RollingCount].
func (m *CommandMetrics) CumulativeCount(e EventType) int64 {
	if !e.valid() {
		return 0
	}
	t := m.cumulativeAt(m.clock.Now())
	return t[e]
}

// CumulativeCounts returns every cumulative count (see
// [CommandMetrics.CumulativeCount]).
func (m *CommandMetrics) CumulativeCounts() EventTotals { return m.cumulativeAt(m.clock.Now()) }

func (m *CommandMetrics) cumulativeAt(now time.Time) EventTotals {
	var t EventTotals
	m.rolling.totalsInto(m.rolling.bucketAt(now), t[:])
	deriveExceptionThrown(&t)
	return t
}

func deriveExceptionThrown(t *EventTotals) {
	t[ExceptionThrown] = 0
	for e := range NumEventTypes {
		if e.IsExceptionProducing() {
			t[ExceptionThrown] += t[e]
		}
	}
}

// ConcurrentExecutions returns how many executions are running the user's
// code now: started and not yet completed. An execution leaves the count
// only once [CommandMetrics.MarkCompletion] has recorded it, so a reader
// who sees the count fall to 0 finds every execution counted.
func (m *CommandMetrics) ConcurrentExecutions() int64 { return m.concurrency.Load() }

// RollingMaxConcurrentExecutions returns the highest concurrency an
// execution saw at its start in the closed buckets of the rolling window,
// as Hystrix's RollingCommandMaxConcurrencyStream.
func (m *CommandMetrics) RollingMaxConcurrentExecutions() int64 {
	return m.rollingMaxAt(m.clock.Now())
}

func (m *CommandMetrics) rollingMaxAt(now time.Time) int64 {
	return m.rolling.maxOf(m.rolling.bucketAt(now), rollingMaxConcurrency)
}

// Latencies is the pair of latency distributions of a command over its
// percentile window: how long the user's code ran (Execution, Hystrix's
// latencyExecute) and how long callers waited (Total, Hystrix's
// latencyTotal).
type Latencies struct {
	Execution, Total Distribution
}

// latencySnapshot caches the distributions of the closed latency buckets,
// which Latencies computes once per bucket rather than on every read: a
// hedge that starts at a percentile of its command's latency reads them
// on every call (bench/peers rxhystrix-semaphore-hedge).
//
// A recorder can be late: it read the clock before a bucket closed and
// records after a reader has cached that bucket. It then marks the
// snapshot stale (see latencyRecorded), and the next reader computes it
// again. The reader publishes its snapshot before it reads the
// histograms, so that a latency it misses was recorded after the
// publication, by a recorder that then sees the snapshot.
type latencySnapshot struct {
	bucket int64
	// from is where the bucket in progress at the snapshot begins, as a
	// duration since the metrics were created: a latency recorded at an
	// earlier time lies in a bucket the snapshot holds.
	from  time.Duration
	ready atomic.Bool // Latencies is written
	stale atomic.Bool // a latency came late into a bucket the snapshot holds
	Latencies
}

// Latencies returns the execution and total latency distributions of the
// closed buckets of the percentile window. They are computed once per
// bucket and shared, and again when a latency arrives late into one of
// those buckets.
func (m *CommandMetrics) Latencies() Latencies { return m.latenciesAt(m.clock.Now()) }

func (m *CommandMetrics) latenciesAt(now time.Time) Latencies {
	n := m.latency.bucketAt(now)
	if c := m.latencyCache.Load(); c != nil && c.bucket == n && c.ready.Load() && !c.stale.Load() {
		return c.Latencies
	}
	s := &latencySnapshot{bucket: n, from: m.latency.offset + time.Duration(n)*m.latency.width}
	m.latencyCache.Store(s)
	s.Execution, s.Total = m.latency.distributions(n)
	s.ready.Store(true)
	return s.Latencies
}

// latencyRecorded tells the cached distributions, if any, that latencies
// were recorded at since (a duration since the metrics were created).
func (m *CommandMetrics) latencyRecorded(since time.Duration) {
	if c := m.latencyCache.Load(); c != nil && since < c.from {
		c.stale.Store(true)
	}
}

// ExecutionLatencyPercentile returns the execution latency at percentile p
// (0 to 100) over the percentile window; 0 when no execution ran or
// percentiles are disabled. It panics if p is not within [0, 100].
func (m *CommandMetrics) ExecutionLatencyPercentile(p float64) time.Duration {
	checkPercentile(p)
	return m.Latencies().Execution.Percentile(p)
}

// ExecutionLatencyMean returns the mean execution latency over the
// percentile window.
func (m *CommandMetrics) ExecutionLatencyMean() time.Duration {
	return m.Latencies().Execution.Mean()
}

// TotalLatencyPercentile returns the total latency (what callers waited)
// at percentile p over the percentile window, as
// [CommandMetrics.ExecutionLatencyPercentile].
func (m *CommandMetrics) TotalLatencyPercentile(p float64) time.Duration {
	checkPercentile(p)
	return m.Latencies().Total.Percentile(p)
}

// TotalLatencyMean returns the mean total latency over the percentile
// window.
func (m *CommandMetrics) TotalLatencyMean() time.Duration { return m.Latencies().Total.Mean() }

// DroppedNotifications returns how many stream values were dropped because
// a subscriber was too slow to take them: the values of the timer-driven
// streams and the completions of [CommandMetrics.DroppedCompletions].
func (m *CommandMetrics) DroppedNotifications() int64 {
	return m.drops.Load() + int64(m.completions.dropped.Load())
}

// DroppedCompletions returns how many completions [CommandMetrics.Completions]
// did not deliver because a subscriber had 512 waiting already, summed over
// subscribers: a subscriber that was subscribed while n completions were
// recorded received n minus its drops.
func (m *CommandMetrics) DroppedCompletions() uint64 { return m.completions.dropped.Load() }

// PanickedSubscribers returns how many subscribers of the key's streams
// ([CommandMetrics.HealthStream], [CommandMetrics.Completions] and the
// others) panicked in OnNext. Each was unsubscribed, and its subscription
// failed with a [*SubscriberPanicError]; the other subscribers were not
// affected.
func (m *CommandMetrics) PanickedSubscribers() uint64 { return m.panics.Load() }
