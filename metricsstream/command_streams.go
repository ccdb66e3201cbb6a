package metricsstream

import (
	"time"

	"github.com/rxhystrix/rxhystrix/observable"
)

// commandStreams holds the timer-driven streams of a command. It is made
// on the first call for a stream, so that keys nobody watches do not pay
// for it.
type commandStreams struct {
	health         *tickStream[HealthCounts]
	rolling        *tickStream[EventTotals]
	cumulative     *tickStream[EventTotals]
	latencies      *tickStream[Latencies]
	maxConcurrency *tickStream[int64]
}

func (m *CommandMetrics) streamSet() *commandStreams {
	if s := m.streams.Load(); s != nil {
		return s
	}
	healthNext := func(now time.Time) time.Time { return m.health.Load().nextBoundary(now) }
	s := &commandStreams{
		health:         newTickStream(m.clock, healthNext, m.healthAt, &m.drops, &m.panics).restWhen(m.healthQuiet, &m.healthRests),
		rolling:        newTickStream(m.clock, m.rolling.nextBoundary, m.rollingAt, &m.drops, &m.panics),
		cumulative:     newTickStream(m.clock, m.rolling.nextBoundary, m.cumulativeAt, &m.drops, &m.panics),
		latencies:      newTickStream(m.clock, m.latency.nextBoundary, m.latenciesAt, &m.drops, &m.panics),
		maxConcurrency: newTickStream(m.clock, m.rolling.nextBoundary, m.rollingMaxAt, &m.drops, &m.panics),
	}
	m.streams.CompareAndSwap(nil, s)
	return m.streams.Load()
}

// healthQuiet reports whether the health counts are zero at now and stay
// so until a completion that counts for health is recorded: the window of
// now, and every bucket after it, is empty.
func (m *CommandMetrics) healthQuiet(now time.Time) bool {
	r := m.health.Load()
	return r.emptyFrom(r.bucketAt(now) - int64(r.size))
}

// wakeHealth wakes the resting health stream, unless another recorder
// has.
func (m *CommandMetrics) wakeHealth() {
	if m.healthRests.CompareAndSwap(true, false) {
		m.streams.Load().health.wake()
	}
}

// HealthStream returns the hot stream of health counts, as Hystrix's
// HealthCountsStream: a subscription receives the current
// [CommandMetrics.HealthCounts] at once, then the new health counts each
// time a health bucket closes (every HealthSnapshotInterval). It never
// completes; it ends when the subscription does.
//
// The first value is delivered inside Subscribe, on the subscriber's
// goroutine; the others on the goroutine the clock fires its timers on
// (for clock.Real a timer goroutine, for a manual clock the goroutine that
// advances it, within Advance), one at a time. A subscriber should return
// quickly: while it is busy, up to 16 values wait for it, then the oldest
// are dropped (see [CommandMetrics.DroppedNotifications]). A subscriber
// that panics is unsubscribed and counted (see [SubscriberPanicError]).
// The same holds for the other timer-driven streams of CommandMetrics.
//
// The stream's timer runs only while somebody subscribes and there is
// something new to snapshot: once the health window is empty and its
// all-zero snapshot has been delivered, the stream sends nothing and runs
// no timer until a completion that counts for health is recorded; the next
// snapshot then comes when the bucket holding it closes, on the same
// HealthSnapshotInterval cadence as before (counted from the creation of
// the metrics or the latest ResetStream). So a key nobody executes costs
// no timer wake-ups, although its circuit breaker subscribes.
func (m *CommandMetrics) HealthStream() observable.Observable[HealthCounts] {
	return m.streamSet().health.observable()
}

// RollingCountsStream returns the hot stream of rolling counts (see
// [CommandMetrics.RollingCount]), a value at subscription and one each time
// a rolling bucket closes, delivered as [CommandMetrics.HealthStream]
// describes.
func (m *CommandMetrics) RollingCountsStream() observable.Observable[EventTotals] {
	return m.streamSet().rolling.observable()
}

// CumulativeCountsStream returns the hot stream of cumulative counts (see
// [CommandMetrics.CumulativeCount]), a value at subscription and one each
// time a rolling bucket closes, delivered as [CommandMetrics.HealthStream]
// describes.
func (m *CommandMetrics) CumulativeCountsStream() observable.Observable[EventTotals] {
	return m.streamSet().cumulative.observable()
}

// LatencyStream returns the hot stream of latency distributions (see
// [CommandMetrics.Latencies]), a value at subscription and one each time a
// percentile bucket closes, delivered as [CommandMetrics.HealthStream]
// describes.
func (m *CommandMetrics) LatencyStream() observable.Observable[Latencies] {
	return m.streamSet().latencies.observable()
}

// MaxConcurrencyStream returns the hot stream of the rolling maximum
// concurrency (see [CommandMetrics.RollingMaxConcurrentExecutions]), a
// value at subscription and one each time a rolling bucket closes,
// delivered as [CommandMetrics.HealthStream] describes.
func (m *CommandMetrics) MaxConcurrencyStream() observable.Observable[int64] {
	return m.streamSet().maxConcurrency.observable()
}

// Completions returns the hot stream of completions, as Hystrix's
// HystrixCommandCompletionStream: every subscriber receives a copy of each
// [Completion] recorded while it is subscribed, once, in the order they
// were recorded by one goroutine. Each subscription delivers on a
// goroutine of its own, which ends with the subscription; recording never
// waits for a subscriber: when 512 completions wait for one, new ones are
// dropped for it, and counted ([CommandMetrics.DroppedCompletions]). So
// counting Completions gives a lower bound under load; the exact totals
// are the cumulative counts ([CommandMetrics.CumulativeCount]), which
// recording keeps whatever the subscribers do. A subscriber that panics is
// unsubscribed and counted (see [SubscriberPanicError]).
func (m *CommandMetrics) Completions() observable.Observable[Completion] {
	return m.completions.observable(&m.panics)
}

// subscribers returns how many subscriptions of all the streams are live.
func (m *CommandMetrics) subscribers() int {
	n := m.completions.subscribers()
	if s := m.streams.Load(); s != nil {
		n += s.health.subscribers() + s.rolling.subscribers() + s.cumulative.subscribers() +
			s.latencies.subscribers() + s.maxConcurrency.subscribers()
	}
	return n
}
