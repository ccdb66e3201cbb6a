package metricsstream

import (
	"sync/atomic"
	"time"

	"github.com/rxhystrix/rxhystrix/internal/clock"
)

// A pool's rolling bucket counts each PoolEventType and keeps one max, the
// highest active count seen by a command that started in the bucket.
const (
	poolMaxActive = 0                                // the first max word
	poolWords     = (int(NumPoolEventTypes) + 1) / 2 // where the max words start
)

// PoolMetrics holds the metrics of one worker pool key, as Hystrix's
// HystrixThreadPoolMetrics: rolling and cumulative counts of executed and
// rejected commands, the active count and its rolling maximum, and the
// queue size. Get one from a [Registry].
//
// The pool reports with [PoolMetrics.MarkStart] when a worker starts a
// command, [PoolMetrics.MarkDone] when it finishes,
// [PoolMetrics.MarkRejected] when the pool refuses one, and
// [PoolMetrics.SetQueueSize] when its queue changes. A pool that counts
// its running commands itself (to bound them, say) can spare the metrics a
// second count, written by every command: it registers its count with
// [PoolMetrics.CountActiveWith] and reports with
// [PoolMetrics.MarkStartedAt] and [PoolMetrics.MarkExecutedAt] instead of
// MarkStart and MarkDone. Recording takes no lock and does not allocate.
// The rolling window is Config.RollingWindow in Config.Buckets buckets;
// the other fields of Config do not apply.
//
// PoolMetrics is safe for concurrent use.
type PoolMetrics struct {
	key          string
	cfg          Config
	clock        clock.Clock
	registry     *Registry
	created      time.Time
	createdNanos int64 // created in Unix nanoseconds
	rolling      *counterRing
	status       atomic.Pointer[poolStatusBox]
	evicted      atomic.Bool
	counted      atomic.Pointer[func() int64] // the pool's own active count, if it keeps one

	_       [64]byte
	active  atomic.Int64
	queue   atomic.Int64
	largest atomic.Int64
	_       [40]byte
}

func newPoolMetrics(key string, cfg Config, c clock.Clock, r *Registry) *PoolMetrics {
	cfg = cfg.withDefaults()
	now := c.Now()
	p := &PoolMetrics{key: key, cfg: cfg, clock: c, registry: r, created: now, createdNanos: now.UnixNano()}
	p.rolling = newCounterRing(now, cfg.rollingBucket(), cfg.Buckets, int(NumPoolEventTypes), 1, true)
	return p
}

// Key returns the pool key.
func (p *PoolMetrics) Key() string { return p.key }

// Config returns the windows in use, with defaults applied.
func (p *PoolMetrics) Config() Config { return p.cfg }

// MarkStart records that a worker started a command and returns the new
// active count.
func (p *PoolMetrics) MarkStart() (active int64) { return p.MarkStartAt(clock.UnixNano(p.clock)) }

// MarkStartAt is [PoolMetrics.MarkStart] for a pool that has read the
// clock already: the command started at now, in Unix nanoseconds (see the
// package doc's "Times").
func (p *PoolMetrics) MarkStartAt(now int64) (active int64) {
	return p.MarkStartedAt(now, p.active.Add(1))
}

// MarkStartedAt records that a worker started a command at now (Unix
// nanoseconds, see the package doc's "Times"), in a pool that counts its
// active commands itself (see [PoolMetrics.CountActiveWith]) and counts
// active of them with this one: the rolling maximum and the largest count
// follow active, and the metrics' own count is left alone. It returns
// active.
func (p *PoolMetrics) MarkStartedAt(now, active int64) int64 {
	s := pinStripe()
	p.rolling.raise(p.bucketAt(now), s, poolMaxActive, active)
	s.unpin()
	if active > p.largest.Load() {
		storeMax(&p.largest, active)
	}
	p.touch()
	return active
}

// MarkExecutedAt records that a worker finished a command at now (Unix
// nanoseconds; Hystrix's EXECUTED), in a pool that counts its active
// commands itself: the counterpart of [PoolMetrics.MarkStartedAt].
func (p *PoolMetrics) MarkExecutedAt(now int64) { p.count(PoolExecuted, now) }

// bucketAt returns the rolling bucket of now, in Unix nanoseconds.
func (p *PoolMetrics) bucketAt(now int64) int64 {
	// The rolling window starts at created.
	return p.rolling.bucketForSince(time.Duration(now - p.createdNanos))
}

// CountActiveWith has the metrics report active() as their active count,
// in place of the count MarkStart and MarkDone keep, for a pool that
// counts its active commands itself; active is called from any goroutine,
// when the count is read. nil goes back to the metrics' own count.
func (p *PoolMetrics) CountActiveWith(active func() int64) {
	if active == nil {
		p.counted.Store(nil)
		return
	}
	p.counted.Store(&active)
}

// MarkDone records that a worker finished a command (Hystrix's EXECUTED):
// the active count goes down by one.
func (p *PoolMetrics) MarkDone() { p.MarkDoneAt(clock.UnixNano(p.clock)) }

// MarkDoneAt is [PoolMetrics.MarkDone] for a pool that has read the clock
// already: the command finished at now, in Unix nanoseconds.
func (p *PoolMetrics) MarkDoneAt(now int64) {
	p.active.Add(-1)
	p.MarkExecutedAt(now)
}

// MarkRejected records that the pool refused a command (Hystrix's
// REJECTED). Unlike Hystrix's markThreadRejection it leaves the active
// count alone: a rejected command never became active.
func (p *PoolMetrics) MarkRejected() { p.count(PoolRejection, clock.UnixNano(p.clock)) }

// count counts one e at now, in Unix nanoseconds.
func (p *PoolMetrics) count(e PoolEventType, now int64) {
	var adds [poolWords]uint64
	addTo(adds[:], int(e), 1)
	s := pinStripe()
	p.rolling.add(p.bucketAt(now), s, adds[:], nonZero(adds[:]))
	s.unpin()
	p.touch()
}

// SetQueueSize records how many commands wait in the pool's queue.
func (p *PoolMetrics) SetQueueSize(n int) { p.queue.Store(int64(n)) }

// ActiveCount returns how many commands the pool's workers run now.
func (p *PoolMetrics) ActiveCount() int64 {
	if f := p.counted.Load(); f != nil {
		return (*f)()
	}
	return p.active.Load()
}

// QueueSize returns the last queue size recorded.
func (p *PoolMetrics) QueueSize() int64 { return p.queue.Load() }

// LargestActiveCount returns the highest active count ever recorded.
func (p *PoolMetrics) LargestActiveCount() int64 { return p.largest.Load() }

// RollingCount returns how many times e happened in the closed buckets of
// the rolling window.
func (p *PoolMetrics) RollingCount(e PoolEventType) int64 {
	if e < 0 || e >= NumPoolEventTypes {
		return 0
	}
	return p.rolling.sum(p.rolling.bucketAt(p.clock.Now()), int(e))
}

// CumulativeCount returns how many times e happened since the metrics were
// created, up to the last closed rolling bucket.
func (p *PoolMetrics) CumulativeCount(e PoolEventType) int64 {
	if e < 0 || e >= NumPoolEventTypes {
		return 0
	}
	return p.cumulativeAt(p.clock.Now())[e]
}

func (p *PoolMetrics) cumulativeAt(now time.Time) (t [NumPoolEventTypes]int64) {
	p.rolling.totalsInto(p.rolling.bucketAt(now), t[:])
	return t
}

// RollingMaxActive returns the highest active count in the closed buckets
// of the rolling window (Hystrix's rollingMaxActiveThreads).
func (p *PoolMetrics) RollingMaxActive() int64 {
	return p.rolling.maxOf(p.rolling.bucketAt(p.clock.Now()), poolMaxActive)
}

// touch brings evicted metrics back into their registry when they are
// used again.
func (p *PoolMetrics) touch() {
	if p.evicted.Load() {
		p.registry.reattachPool(p)
	}
}

// idle reports whether nothing runs or waits and nothing was recorded
// for at least d.
func (p *PoolMetrics) idle(now time.Time, d time.Duration) bool {
	return p.ActiveCount() == 0 && p.queue.Load() == 0 && now.Sub(p.rolling.lastActive(p.created)) >= d
}

// PoolStatus is what a worker pool knows of itself that its metrics do
// not: the sizes the dashboard's "HystrixThreadPool" object shows.
type PoolStatus struct {
	CoreSize                    int // currentCorePoolSize
	MaximumSize                 int // currentMaximumPoolSize
	PoolSize                    int // currentPoolSize: workers alive now
	LargestPoolSize             int // currentLargestPoolSize: most workers ever alive
	MaxQueueSize                int // maxQueueSize; <= 0: no queue
	QueueSizeRejectionThreshold int // propertyValue_queueSizeRejectionThreshold
	// AdaptiveLimit names the algorithm that sets CoreSize and
	// MaximumSize, its current limit, or is "" for a fixed size.
	AdaptiveLimit string // propertyValue_adaptiveLimit, when not ""
}

// PoolStatusProvider reports a pool's status. The command package
// registers one per pool key with [PoolMetrics.SetStatusProvider];
// PoolStatus is called at every snapshot, from any goroutine.
type PoolStatusProvider interface {
	PoolStatus() PoolStatus
}

type poolStatusBox struct{ p PoolStatusProvider }

// SetStatusProvider registers p as the source of the pool's status; nil
// removes it.
func (p *PoolMetrics) SetStatusProvider(s PoolStatusProvider) {
	if s == nil {
		p.status.Store(nil)
		return
	}
	p.status.Store(&poolStatusBox{s})
}

// Status returns the status the registered provider reports, and false if
// none is registered.
func (p *PoolMetrics) Status() (PoolStatus, bool) {
	if b := p.status.Load(); b != nil {
		return b.p.PoolStatus(), true
	}
	return PoolStatus{}, false
}

// PoolSnapshot is everything known of a pool at one instant: what one
// "HystrixThreadPool" object of the dashboard stream holds.
type PoolSnapshot struct {
	Key       string
	Time      time.Time
	Status    PoolStatus // zero, and HasStatus false, without a provider
	HasStatus bool
	// ActiveCount, QueueSize and LargestActiveCount are current values;
	// CompletedTaskCount is every command executed so far, and TaskCount
	// adds the active and queued ones, as the JDK executor counts.
	ActiveCount, QueueSize, LargestActiveCount int64
	CompletedTaskCount, TaskCount              int64
	// Rolling and Cumulative are indexed by PoolEventType: rolling
	// executed (rollingCountThreadsExecuted) and rejected
	// (rollingCountCommandRejections) counts, and their cumulative
	// counterparts.
	Rolling, Cumulative [NumPoolEventTypes]int64
	// RollingMaxActive is rollingMaxActiveThreads.
	RollingMaxActive int64
	Config           Config
}

// Snapshot returns a consistent snapshot of the pool's metrics, every
// value read at the same instant of the metrics' clock.
func (p *PoolMetrics) Snapshot() PoolSnapshot {
	now := p.clock.Now()
	n := p.rolling.bucketAt(now)
	s := PoolSnapshot{
		Key:                p.key,
		Time:               now,
		ActiveCount:        p.ActiveCount(),
		QueueSize:          p.queue.Load(),
		LargestActiveCount: p.largest.Load(),
		Cumulative:         p.cumulativeAt(now),
		RollingMaxActive:   p.rolling.maxOf(n, poolMaxActive),
		Config:             p.cfg,
	}
	p.rolling.sumsInto(n, s.Rolling[:])
	var all [NumPoolEventTypes]int64 // the buckets in progress too
	p.rolling.totalsInto(n+2, all[:])
	s.CompletedTaskCount = all[PoolExecuted]
	s.TaskCount = s.CompletedTaskCount + s.ActiveCount + s.QueueSize
	s.Status, s.HasStatus = p.Status()
	return s
}
