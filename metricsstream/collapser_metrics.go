package metricsstream

import (
	"math"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/rxhystrix/rxhystrix/internal/clock"
)

// CollapserEventType is what a request collapser counts, as Hystrix's
// HystrixEventType.Collapser. The zero value is [CollapserBatchExecuted].
type CollapserEventType int

// The collapser event types, in Hystrix's order.
const (
	CollapserBatchExecuted     CollapserEventType = iota // a batch ran (BATCH_EXECUTED)
	CollapserAddedToBatch                                // a request went into a batch (ADDED_TO_BATCH)
	CollapserResponseFromCache                           // the request cache answered a request (RESPONSE_FROM_CACHE)

	// NumCollapserEventTypes is the number of collapser event types.
	NumCollapserEventTypes
)

// String returns Hystrix's name of e ("BATCH_EXECUTED", "ADDED_TO_BATCH",
// "RESPONSE_FROM_CACHE").
func (e CollapserEventType) String() string {
	switch e {
	case CollapserBatchExecuted:
		return "BATCH_EXECUTED"
	case CollapserAddedToBatch:
		return "ADDED_TO_BATCH"
	case CollapserResponseFromCache:
		return "RESPONSE_FROM_CACHE"
	}
	return "CollapserEventType(" + strconv.Itoa(int(e)) + ")"
}

// CollapserMetrics holds the metrics of one collapser key, as Hystrix's
// HystrixCollapserMetrics: rolling and cumulative counts of batches, of
// requests added to batches and of requests answered by the request
// cache, and the distribution of batch sizes. Get one from a [Registry].
//
// The collapser reports with [CollapserMetrics.MarkBatch] when a batch
// starts and [CollapserMetrics.MarkResponseFromCache] when the request
// cache answers a request. Recording takes no lock: it is atomic adds into
// the current rolling bucket and one into a lock-free histogram. The
// rolling counts use Config.RollingWindow in Config.Buckets buckets; the
// batch sizes Config.PercentileWindow in Config.PercentileBuckets buckets
// (nothing is kept when Config.PercentileDisabled is set).
//
// CollapserMetrics is safe for concurrent use.
type CollapserMetrics struct {
	key     string
	cfg     Config
	clock   clock.Clock
	rolling *counterRing
	sizes   *latencyRing // batch sizes, kept as durations of n histogram units
	status  atomic.Pointer[collapserStatusBox]
}

func newCollapserMetrics(key string, cfg Config, c clock.Clock) *CollapserMetrics {
	cfg = cfg.withDefaults()
	now := c.Now()
	return &CollapserMetrics{
		key:     key,
		cfg:     cfg,
		clock:   c,
		rolling: newCounterRing(now, cfg.rollingBucket(), cfg.Buckets, int(NumCollapserEventTypes), 0, true),
		sizes:   newLatencyRing(now, cfg.percentileBucket(), cfg.PercentileBuckets),
	}
}

// Key returns the collapser key.
func (m *CollapserMetrics) Key() string { return m.key }

// Config returns the windows in use, with defaults applied.
func (m *CollapserMetrics) Config() Config { return m.cfg }

// MarkBatch records that a batch of size requests started: one
// BATCH_EXECUTED, size ADDED_TO_BATCH and size in the batch-size
// distribution, as Hystrix's markBatch. A size below 1 records nothing.
func (m *CollapserMetrics) MarkBatch(size int) {
	if size < 1 {
		return
	}
	now := m.clock.Now()
	var adds [(int(NumCollapserEventTypes) + 1) / 2]uint64
	addTo(adds[:], int(CollapserBatchExecuted), 1)
	// A counter's add is 32 bits wide: a larger size goes in several.
	rest := int64(size)
	s := pinStripe()
	n := m.rolling.bucketFor(now)
	for {
		part := min(rest, math.MaxUint32)
		addTo(adds[:], int(CollapserAddedToBatch), part)
		m.rolling.add(n, s, adds[:], nonZero(adds[:]))
		if rest -= part; rest == 0 {
			break
		}
		clear(adds[:])
	}
	if !m.cfg.PercentileDisabled {
		m.sizes.record(m.sizes.bucketAtHint(now, m.sizes.newest.Load()), s, time.Duration(size)*histUnit, -1)
	}
	s.unpin()
}

// MarkResponseFromCache records that the request cache answered a request
// without adding it to a batch.
func (m *CollapserMetrics) MarkResponseFromCache() {
	var adds [(int(NumCollapserEventTypes) + 1) / 2]uint64
	addTo(adds[:], int(CollapserResponseFromCache), 1)
	now := m.clock.Now()
	s := pinStripe()
	m.rolling.add(m.rolling.bucketFor(now), s, adds[:], nonZero(adds[:]))
	s.unpin()
}

// RollingCount returns how many times e happened in the closed buckets of
// the rolling window.
func (m *CollapserMetrics) RollingCount(e CollapserEventType) int64 {
	if e < 0 || e >= NumCollapserEventTypes {
		return 0
	}
	return m.rolling.sum(m.rolling.bucketAt(m.clock.Now()), int(e))
}

// CumulativeCount returns how many times e happened since the metrics were
// created, up to the last closed rolling bucket.
func (m *CollapserMetrics) CumulativeCount(e CollapserEventType) int64 {
	if e < 0 || e >= NumCollapserEventTypes {
		return 0
	}
	var t [NumCollapserEventTypes]int64
	m.rolling.totalsInto(m.rolling.bucketAt(m.clock.Now()), t[:])
	return t[e]
}

// BatchSizes returns the distribution of the sizes of the batches that
// started in the closed buckets of the percentile window.
func (m *CollapserMetrics) BatchSizes() BatchSizeDistribution {
	d, _ := m.sizes.distributions(m.sizes.bucketAt(m.clock.Now()))
	return BatchSizeDistribution{d}
}

// BatchSizeDistribution is an immutable snapshot of batch sizes, as
// Hystrix's batch-size histogram. Sizes below 2048 are kept exactly. The
// zero value is empty: its percentiles and mean are 0.
type BatchSizeDistribution struct{ d Distribution }

// Count returns how many batches the distribution holds.
func (b BatchSizeDistribution) Count() int64 { return b.d.Count() }

// Percentile returns the batch size at percentile p (0 to 100), as
// HdrHistogram's getValueAtPercentile; 0 when empty. It panics if p is not
// within [0, 100].
func (b BatchSizeDistribution) Percentile(p float64) int64 {
	return int64(b.d.Percentile(p) / histUnit)
}

// Mean returns the mean batch size, truncated to an integer as Hystrix's
// getBatchSizeMean; 0 when empty.
func (b BatchSizeDistribution) Mean() int64 { return int64(b.d.mean) }

// CollapserStatus is what a collapser knows of itself that its metrics do
// not: the properties the Hystrix dashboard shows.
type CollapserStatus struct {
	// RequestCacheEnabled is propertyValue_requestCacheEnabled.
	RequestCacheEnabled bool
	// MaxRequestsInBatch is propertyValue_maxRequestsInBatch; 0 means no
	// cap (the snapshot then shows Hystrix's Integer.MAX_VALUE).
	MaxRequestsInBatch int
	// TimerDelay is propertyValue_timerDelayInMilliseconds.
	TimerDelay time.Duration
}

// CollapserStatusProvider reports a collapser's status. The command
// package registers one per collapser key with
// [CollapserMetrics.SetStatusProvider]; CollapserStatus is called at every
// snapshot, from any goroutine, and must be safe for concurrent use.
type CollapserStatusProvider interface {
	CollapserStatus() CollapserStatus
}

type collapserStatusBox struct{ p CollapserStatusProvider }

// SetStatusProvider registers p as the source of the collapser's status;
// nil removes it. The last call wins.
func (m *CollapserMetrics) SetStatusProvider(p CollapserStatusProvider) {
	if p == nil {
		m.status.Store(nil)
		return
	}
	m.status.Store(&collapserStatusBox{p})
}

// Status returns the status the registered provider reports, and false if
// none is registered.
func (m *CollapserMetrics) Status() (CollapserStatus, bool) {
	if b := m.status.Load(); b != nil {
		return b.p.CollapserStatus(), true
	}
	return CollapserStatus{}, false
}

// hystrixMaxBatch is what Hystrix reports for a collapser without a cap:
// its default maxRequestsInBatch, Integer.MAX_VALUE.
const hystrixMaxBatch = 1<<31 - 1

// batchCap is the maxRequestsInBatch Hystrix would report for a cap of n
// requests: n, or hystrixMaxBatch for no cap (n <= 0).
func batchCap(n int) int {
	if n > 0 {
		return n
	}
	return hystrixMaxBatch
}

// Snapshot returns what one "HystrixCollapser" object of the dashboard
// stream holds, every value read at the same instant of the metrics'
// clock: the rolling counts, the batch sizes and the registered
// provider's properties.
func (m *CollapserMetrics) Snapshot() CollapserSnapshot {
	now := m.clock.Now()
	var rolling [NumCollapserEventTypes]int64
	m.rolling.sumsInto(m.rolling.bucketAt(now), rolling[:])
	d, _ := m.sizes.distributions(m.sizes.bucketAt(now))
	sizes := BatchSizeDistribution{d}
	s := CollapserSnapshot{
		Key:                m.key,
		Time:               now,
		RequestsBatched:    rolling[CollapserAddedToBatch],
		Batches:            rolling[CollapserBatchExecuted],
		ResponsesFromCache: rolling[CollapserResponseFromCache],
		BatchSizeMean:      sizes.Mean(),
		MaxRequestsInBatch: hystrixMaxBatch,
	}
	for i, p := range collapserBatchPercentiles {
		s.BatchSizePercentiles[i] = sizes.Percentile(p)
	}
	if st, ok := m.Status(); ok {
		s.RequestCacheEnabled = st.RequestCacheEnabled
		s.TimerDelay = st.TimerDelay
		s.MaxRequestsInBatch = batchCap(st.MaxRequestsInBatch)
	}
	return s
}

// collapserBatchPercentiles are the percentiles of
// CollapserSnapshot.BatchSizePercentiles, in order.
var collapserBatchPercentiles = [len(CollapserSnapshot{}.BatchSizePercentiles)]float64{25, 50, 75, 90, 95, 99, 99.5, 100}
