package metricsstream

import (
	"math"
	"sync/atomic"
	"time"
)

// The words of a slot of the rolling ring (the event counters, then the
// maximum concurrency) and of the health ring.
const (
	rollingSlotWords = rollingWords + 1
	healthSlotWords  = (healthCounters + 1) / 2
)

// recordCache says where the recorders of one exclusive stripe (see
// stripe) write while the time since the metrics were created lies in
// [from, to): the slots of the current rolling, health and latency
// buckets. Finding a bucket's slot costs more than the adds into it, and
// the buckets change only at the boundaries of the narrowest of them (500
// ms by default), so a recorder finds them once per bucket and stripe,
// and the recorders that follow on that processor use them until time
// leaves the range.
//
// Only recorders pinned to the stripe's processor use its cache, one at a
// time, so it is filled in place and never torn; its fields are atomic
// because those recorders are different goroutines, which nothing else
// orders. A recorder of an exclusive stripe claims slots only in fill,
// which empties the range first, or the slow way after fill failed, which
// left it empty; so the slots a cache names hold its buckets for as long
// as its range is not empty.
type recordCache struct {
	from, to atomic.Int64 // durations since the metrics were created

	ring    atomic.Pointer[counterRing] // the health ring of health (ResetStream replaces it)
	rolling atomic.Pointer[[rollingSlotWords]atomic.Int64]
	health  atomic.Pointer[[healthSlotWords]atomic.Int64]
	// latency is nil when no executed completion came since the cache
	// was filled: a key that only short-circuits allocates no histograms.
	latency atomic.Pointer[histogram]
}

// covers reports whether the cache holds the buckets of since, with
// health the metrics' health ring.
func (rc *recordCache) covers(since time.Duration, health *counterRing) bool {
	return int64(since) >= rc.from.Load() && int64(since) < rc.to.Load() && rc.ring.Load() == health
}

// recordCacheFor returns the cache of stripe s filled for a completion at
// since; withLatency asks for the latency histograms too. It returns nil
// for a shared stripe, which has no cache, and when a bucket of since has
// left its ring (a recorder much older than the rings keep): the caller
// records the slow way.
func (m *CommandMetrics) recordCacheFor(since time.Duration, s stripe, withLatency bool) *recordCache {
	if s.shared {
		return nil
	}
	rc := &m.caches[s.index]
	health := m.health.Load()
	if rc.covers(since, health) && (!withLatency || rc.latency.Load() != nil) {
		return rc
	}
	if !rc.fill(m, since, s, health, withLatency) {
		return nil
	}
	return rc
}

// fill points rc at the buckets of since in stripe s, claiming their
// slots, and reports whether it could.
func (rc *recordCache) fill(m *CommandMetrics, since time.Duration, s stripe, health *counterRing, withLatency bool) bool {
	rc.to.Store(0) // empty while its slots change
	// The range is where every bucket found holds: empty (from >= to)
	// when since lies before the epoch of a ring, whose bucket 0 then
	// holds it; the cache serves this recorder, and the next one fills
	// it again.
	from, to := time.Duration(math.MinInt64), time.Duration(math.MaxInt64)
	narrow := func(w *window, n int64) {
		lo := w.offset + time.Duration(n)*w.width
		from, to = max(from, lo), min(to, lo+w.width)
	}

	n := m.rolling.bucketForSince(since)
	rolling := m.rolling.bucket(n, s)
	if rolling == nil {
		return false
	}
	narrow(&m.rolling.window, n)
	n = health.bucketForSince(since)
	healthWords := health.bucket(n, s)
	if healthWords == nil {
		return false
	}
	narrow(&health.window, n)
	var latency *histogram
	if withLatency {
		n = m.latency.bucketForSince(since)
		slot := m.latency.slot(n, s)
		if slot == nil {
			return false
		}
		latency = loadOrNew(&slot.histograms)
		narrow(&m.latency.window, n)
	}
	rc.ring.Store(health)
	rc.rolling.Store((*[rollingSlotWords]atomic.Int64)(rolling))
	rc.health.Store((*[healthSlotWords]atomic.Int64)(healthWords))
	rc.latency.Store(latency)
	rc.from.Store(int64(from))
	rc.to.Store(int64(to))
	return true
}
