package metricsstream

import (
	"sync/atomic"
	"time"

	"github.com/rxhystrix/rxhystrix/internal/clock"
)

// The counters of a rolling bucket: one per EventType (the ExceptionThrown
// one stays unused: it is derived), then the highest concurrency seen by
// an execution that started in the bucket.
const (
	rollingMaxConcurrency = int(NumEventTypes)
	rollingCounters       = rollingMaxConcurrency + 1
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
	key      string
	cfg      Config // with defaults applied
	clock    clock.Clock
	registry *Registry
	created  time.Time
	rolling  *counterRing
	latency  *latencyRing
	health   atomic.Pointer[counterRing] // replaced by ResetStream
	evicted  atomic.Bool

	completions  completionStream
	streams      atomic.Pointer[commandStreams] // made at the first stream call
	status       atomic.Pointer[commandStatusBox]
	latencyCache atomic.Pointer[latencySnapshot]
	drops        atomic.Int64

	// Written by every execution; kept off the lines above, which every
	// recording reads. concurrency shares its line with the most frequent
	// cumulative counters (EMIT, SUCCESS, FAILURE ...).
	_           [64]byte
	concurrency atomic.Int64
	cumulative  [NumEventTypes]atomic.Int64
	_           [64]byte
}

func newCommandMetrics(key string, cfg Config, c clock.Clock, r *Registry) *CommandMetrics {
	cfg = cfg.withDefaults()
	now := c.Now()
	m := &CommandMetrics{key: key, cfg: cfg, clock: c, registry: r, created: now}
	m.rolling = newCounterRing(now, cfg.rollingBucket(), cfg.Buckets, rollingCounters)
	m.latency = newLatencyRing(now, cfg.percentileBucket(), cfg.PercentileBuckets)
	m.health.Store(newHealthRing(now, cfg))
	return m
}

// newHealthRing returns empty health buckets starting at epoch: buckets of
// HealthSnapshotInterval over the rolling window, as Hystrix's
// HealthCountsStream.
func newHealthRing(epoch time.Time, cfg Config) *counterRing {
	return newCounterRing(epoch, cfg.HealthSnapshotInterval, cfg.healthBuckets(), healthCounters)
}

// Key returns the command key.
func (m *CommandMetrics) Key() string { return m.key }

// Config returns the windows in use, with defaults applied.
func (m *CommandMetrics) Config() Config { return m.cfg }

// MarkStart records that an execution started running the user's code:
// the concurrent execution count goes up by one, and the rolling maximum
// concurrency takes the new count into account. It returns the new count,
// which the command puts in [Completion.ConcurrencyAtStart].
func (m *CommandMetrics) MarkStart() (concurrencyAtStart int64) {
	return m.MarkStartAt(m.clock.Now())
}

// MarkStartAt is [CommandMetrics.MarkStart] for a caller that has read the
// clock already: the execution started at t.
func (m *CommandMetrics) MarkStartAt(t time.Time) (concurrencyAtStart int64) {
	n := m.concurrency.Add(1)
	if b := m.rolling.bucketAtTime(t); b != nil {
		storeMax(&b[rollingMaxConcurrency], n)
	}
	m.touch()
	return n
}

// MarkCompletion records an execution that ended: its events go into the
// current rolling, cumulative and health buckets, its latencies into the
// current latency histograms (if it ran), the concurrent execution count
// goes down by one (if it started), and the subscribers of
// [CommandMetrics.Completions], if any, are offered a copy of c. c is not
// retained.
func (m *CommandMetrics) MarkCompletion(c *Completion) {
	if c.ConcurrencyAtStart > 0 {
		m.concurrency.Add(-1)
	}
	end := c.End
	if end.IsZero() {
		end = m.clock.Now()
	}

	var total, errs int64
	bucket := m.rolling.bucketAtTime(end)
	for e, n := range &c.Events {
		if n <= 0 || EventType(e) == ExceptionThrown {
			continue
		}
		v := int64(n)
		if !EventType(e).isMultiple() {
			v = 1
		}
		m.cumulative[e].Add(v) // before the bucket: see cumulativeTotals
		if bucket != nil {
			bucket[e].Add(v)
		}
		switch healthKinds[e] {
		case healthKindError:
			errs += v
			total += v
		case healthKindTotal:
			total += v
		}
	}

	if total > 0 {
		h := m.health.Load()
		if b := h.bucketAtTime(end); b != nil {
			b[healthTotal].Add(total)
			if errs > 0 {
				b[healthErrors].Add(errs)
			}
			if m.cfg.SlowCallDuration > 0 && c.ExecutionLatency >= m.cfg.SlowCallDuration {
				b[healthSlow].Add(1)
			}
		}
	}

	if c.Executed && !m.cfg.PercentileDisabled {
		m.latency.record(end, c.ExecutionLatency, c.TotalLatency)
	}
	m.completions.publish(c, &m.drops)
	m.touch()
}

// How an event counts in health.
const (
	healthKindNone = iota
	healthKindTotal
	healthKindError
)

var healthKinds = func() (k [NumEventTypes]uint8) {
	for e := range NumEventTypes {
		switch {
		case e.IsHealthError():
			k[e] = healthKindError
		case e.CountsInHealth():
			k[e] = healthKindTotal
		}
	}
	return k
}()

// touch brings evicted metrics back into their registry when they are
// used again.
func (m *CommandMetrics) touch() {
	if m.evicted.Load() {
		m.registry.reattachCommand(m)
	}
}

// lastActive returns roughly when the metrics last recorded something:
// the start of the newest rolling bucket written, or their creation.
func (m *CommandMetrics) lastActive() time.Time {
	n := m.rolling.newest.Load()
	if n < 0 {
		return m.created
	}
	return m.rolling.epoch.Add(time.Duration(n) * m.rolling.width)
}

// idle reports whether nothing runs, nobody subscribes and nothing was
// recorded for at least d.
func (m *CommandMetrics) idle(now time.Time, d time.Duration) bool {
	return m.concurrency.Load() == 0 && m.subscribers() == 0 && now.Sub(m.lastActive()) >= d
}
