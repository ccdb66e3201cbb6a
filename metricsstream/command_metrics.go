package metricsstream

import (
	"sync/atomic"
	"time"

	"github.com/rxhystrix/rxhystrix/internal/clock"
)

// A rolling bucket counts each EventType (the ExceptionThrown counter stays
// unused: it is derived) and keeps one max, the highest concurrency seen by
// an execution that started in the bucket.
const (
	rollingMaxConcurrency = 0 // the first max word
	rollingWords          = (int(NumEventTypes) + 1) / 2
)

// The counters of a health bucket.
const (
	healthTotal = iota
	healthErrors
	healthSlow
	healthCounters
)

// CommandMetrics holds the metrics of one command key, as Hystrix's
// HystrixCommandMetrics: rolling and cumulative event counts, health
// counts, execution and total latency distributions, and concurrency.
// Get one from a [Registry]; every command with the same key shares it.
//
// The command reports each execution with [CommandMetrics.MarkStart] when
// the user's code starts and [CommandMetrics.MarkCompletion] when the
// execution ends. Recording takes no lock, starts no goroutine and does
// not allocate: it is atomic adds into the current buckets and a lock-free
// histogram. Everything else is derived from the buckets when somebody
// asks, and every rolling value is made of closed buckets only.
//
// CommandMetrics is safe for concurrent use.
type CommandMetrics struct {
	// Set at creation, read by every recording.
	key          string
	cfg          Config // with defaults applied
	clock        clock.Clock
	registry     *Registry
	created      time.Time
	createdNanos int64 // created in Unix nanoseconds
	rolling      *counterRing
	latency      *latencyRing
	health       atomic.Pointer[counterRing] // replaced by ResetStream
	calls        atomic.Pointer[callWindow]  // with Config.HealthWindowCalls; replaced by ResetStream
	slowCall     atomic.Int64                // Config.SlowCallDuration, or what SetSlowCallDuration set
	evicted      atomic.Bool
	caches       []recordCache // per exclusive stripe

	completions  fanout[Completion]
	streams      atomic.Pointer[commandStreams] // made at the first stream call
	healthRests  atomic.Bool                    // the health stream rests: a completion that counts for health wakes it
	status       atomic.Pointer[commandStatusBox]
	latencyCache atomic.Pointer[latencySnapshot]
	drops        atomic.Int64  // tick stream values dropped for busy subscribers
	panics       atomic.Uint64 // subscribers that panicked

	// Written by every execution: kept off the lines above, which every
	// recording reads.
	_           [64]byte
	concurrency atomic.Int64
	admission   atomic.Int64 // see AdmissionWord
	_           [48]byte
}

func newCommandMetrics(key string, cfg Config, c clock.Clock, r *Registry) *CommandMetrics {
	cfg = cfg.withDefaults()
	now := c.Now()
	m := &CommandMetrics{key: key, cfg: cfg, clock: c, registry: r, created: now, createdNanos: now.UnixNano()}
	m.rolling = newCounterRing(now, cfg.rollingBucket(), cfg.Buckets, int(NumEventTypes), 1, true)
	m.latency = newLatencyRing(now, cfg.percentileBucket(), cfg.PercentileBuckets)
	m.health.Store(newHealthRing(now, cfg))
	m.slowCall.Store(int64(cfg.SlowCallDuration))
	if cfg.HealthWindowCalls > 0 {
		m.calls.Store(newCallWindow(cfg.HealthWindowCalls))
	}
	m.caches = make([]recordCache, exclusiveStripes)
	return m
}

// newHealthRing returns empty health buckets starting at epoch: buckets of
// HealthSnapshotInterval over the rolling window, as Hystrix's
// HealthCountsStream.
func newHealthRing(epoch time.Time, cfg Config) *counterRing {
	return newCounterRing(epoch, cfg.HealthSnapshotInterval, cfg.healthBuckets(), healthCounters, 0, false)
}

// AdmissionWord returns a word for the caller's own use, on the cache
// line of the count of executions in flight, which every execution
// writes when it starts and when it ends. A caller that writes a word of
// its own for every execution of the command (a rate limiter's state,
// say) keeps it here, so that with callers on several processors the
// two writes move one cache line between them instead of two: a token
// bucket in a word of its own cost 1.5× a semaphore-isolated Execute
// with 75 callers, and 1.1× here (bench/peers
// rxhystrix-semaphore-ratelimit). The package never reads or writes it;
// it starts at 0.
func (m *CommandMetrics) AdmissionWord() *atomic.Int64 { return &m.admission }

// Key returns the command key.
func (m *CommandMetrics) Key() string { return m.key }

// Config returns the windows in use, with defaults applied.
func (m *CommandMetrics) Config() Config {
	c := m.cfg
	c.SlowCallDuration = time.Duration(m.slowCall.Load())
	return c
}

// MarkStart records that an execution started running the user's code:
// the concurrent execution count goes up by one, and the rolling maximum
// concurrency takes the new count into account. It returns the new count,
// which the command puts in [Completion.ConcurrencyAtStart].
func (m *CommandMetrics) MarkStart() (concurrencyAtStart int64) {
	return m.MarkStartAt(clock.UnixNano(m.clock))
}

// MarkStartAt is [CommandMetrics.MarkStart] for a caller that has read the
// clock already: the execution started at t, in Unix nanoseconds (see
// the package doc's "Times").
func (m *CommandMetrics) MarkStartAt(t int64) (concurrencyAtStart int64) {
	n := m.concurrency.Add(1)
	m.raiseConcurrency(m.since(t), n)
	m.touch()
	return n
}

// since returns the time from the metrics' creation to t, in Unix
// nanoseconds: where the rolling and latency windows place t.
func (m *CommandMetrics) since(t int64) time.Duration { return time.Duration(t - m.createdNanos) }

// raiseConcurrency raises the rolling maximum concurrency of the bucket of
// since (see CommandMetrics.since) to n.
func (m *CommandMetrics) raiseConcurrency(since time.Duration, n int64) {
	s := pinStripe()
	if rc := m.recordCacheFor(since, s, false); rc != nil {
		s.raiseWord(&rc.rolling.Load()[rollingWords+rollingMaxConcurrency], n)
	} else {
		m.rolling.raise(m.rolling.bucketForSince(since), s, rollingMaxConcurrency, n)
	}
	s.unpin()
}

// TryMarkStartAt is [CommandMetrics.MarkStartAt] for an execution that may
// start only while fewer than limit executions of the key run: the
// concurrent execution count doubles as the key's execution semaphore
// (Hystrix's TryableSemaphore, whose permits are exactly the executions
// running), so that semaphore isolation costs one shared counter, not two.
// When limit executions run already it records nothing and reports false.
// A permit taken is returned by the MarkCompletion whose
// ConcurrencyAtStart is the count returned. t is in Unix nanoseconds, as
// for MarkStartAt.
func (m *CommandMetrics) TryMarkStartAt(t, limit int64) (concurrencyAtStart int64, ok bool) {
	n := m.concurrency.Add(1)
	if n > limit {
		m.concurrency.Add(-1)
		return 0, false
	}
	m.raiseConcurrency(m.since(t), n)
	m.touch()
	return n, true
}

// MarkCompletion records an execution that ended: its events go into the
// current rolling and health buckets, its latencies into the current
// latency histograms (if it ran), the subscribers of
// [CommandMetrics.Completions], if any, are offered a copy of c, and then
// the concurrent execution count goes down by one (if it started). c is
// not retained.
func (m *CommandMetrics) MarkCompletion(c *Completion) {
	if c.End.IsZero() {
		m.MarkCompletionAt(c, clock.UnixNano(m.clock))
		return
	}
	// Placed on the metrics' clock: for clock.Real, whose time line does
	// not follow steps of the system clock, End.UnixNano() of a time.Now
	// reading is as far off as the system clock was stepped.
	m.MarkCompletionAt(c, clock.UnixNanoOf(m.clock, c.End))
}

// MarkCompletionAt is [CommandMetrics.MarkCompletion] for a caller that
// has read the clock already: the execution ended at end, in Unix
// nanoseconds (see the package doc's "Times"), whatever c.End says. When
// c.End is the zero time, the subscribers of [CommandMetrics.Completions]
// receive the completion with End set to end; c itself is not changed.
func (m *CommandMetrics) MarkCompletionAt(c *Completion, end int64) {
	since := m.since(end)

	var own [rollingWords]uint64
	adds := &own
	var words uint32
	var total, errs int64
	if c.Events == successWords.events {
		adds, words, total, errs = &successWords.adds, successWords.words, successWords.total, successWords.errors
	} else {
		words, total, errs = eventWordsOf(&c.Events, &own)
	}
	var healthAdds [healthSlotWords]uint64 // total and errors share a word
	var healthWords uint32
	if total > 0 {
		addTo(healthAdds[:], healthTotal, total)
		addTo(healthAdds[:], healthErrors, errs)
		healthWords = 1 // the word of total and errors
		if m.slow(c) {
			addTo(healthAdds[:], healthSlow, 1)
			healthWords |= 1 << (healthSlow / 2)
		}
		if m.cfg.HealthWindowCalls > 0 {
			m.recordCall(errs > 0, c)
		}
	}
	latency := c.Executed && !m.cfg.PercentileDisabled

	stripe := pinStripe()
	if rc := m.recordCacheFor(since, stripe, latency); rc != nil {
		rolling, health := rc.rolling.Load(), rc.health.Load()
		if wrapped := addWords(rolling[:], adds[:], words); wrapped != 0 {
			m.rolling.spill(stripe.index, rolling[:], wrapped)
		}
		if wrapped := addWords(health[:], healthAdds[:], healthWords); wrapped != 0 {
			// rc.ring, not m.health: ResetStream may have replaced it.
			rc.ring.Load().spill(stripe.index, health[:], wrapped)
		}
		if latency {
			rc.latency.Load().record(c.ExecutionLatency, c.TotalLatency)
		}
	} else {
		m.rolling.add(m.rolling.bucketForSince(since), stripe, adds[:], words)
		if healthWords != 0 {
			h := m.health.Load()
			h.add(h.bucketForSince(since), stripe, healthAdds[:], healthWords)
		}
		if latency {
			m.latency.record(m.latency.bucketForSince(since), stripe, c.ExecutionLatency, c.TotalLatency)
		}
	}
	stripe.unpin()
	if latency {
		m.latencyRecorded(since)
	}
	if total > 0 && m.healthRests.Load() {
		m.wakeHealth()
	}
	if subs := m.completions.channels(); subs != nil {
		// A copy: c is the caller's, who may record it again with a
		// zero End for "now".
		v := *c
		if v.End.IsZero() {
			v.End = time.Unix(0, end)
		}
		m.completions.send(subs, v)
	}
	// Last, as Hystrix's markCommandDone: whoever sees the count fall
	// finds the execution recorded.
	if c.ConcurrencyAtStart > 0 {
		m.concurrency.Add(-1)
	}
	m.touch()
}

// slow reports whether c counts in HealthCounts.Slow, in the health
// buckets and in the window of calls alike.
func (m *CommandMetrics) slow(c *Completion) bool {
	d := time.Duration(m.slowCall.Load())
	return d > 0 && c.ExecutionLatency >= d
}

// SetSlowCallDuration changes the execution latency from which the
// executions recorded from now on count in [HealthCounts.Slow], as
// Config.SlowCallDuration does at creation; 0 turns slow counting off.
// A circuit breaker whose slow-call threshold changes live passes the
// new one on here. It panics if d is negative.
func (m *CommandMetrics) SetSlowCallDuration(d time.Duration) {
	if d < 0 {
		panic("metricsstream: SetSlowCallDuration with a negative duration")
	}
	m.slowCall.Store(int64(d))
}

// touch brings evicted metrics back into their registry when they are
// used again.
func (m *CommandMetrics) touch() {
	if m.evicted.Load() {
		m.registry.reattachCommand(m)
	}
}

// idle reports whether nothing runs, nobody subscribes and nothing was
// recorded for at least d.
func (m *CommandMetrics) idle(now time.Time, d time.Duration) bool {
	return m.concurrency.Load() == 0 && m.subscribers() == 0 && now.Sub(m.rolling.lastActive(m.created)) >= d
}
