package metricsstream

import (
	"math"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCollapserEventTypeString(t *testing.T) {
	assert.Equal(t, "BATCH_EXECUTED", CollapserBatchExecuted.String())
	assert.Equal(t, "ADDED_TO_BATCH", CollapserAddedToBatch.String())
	assert.Equal(t, "RESPONSE_FROM_CACHE", CollapserResponseFromCache.String())
	assert.Equal(t, "CollapserEventType(7)", CollapserEventType(7).String())
}

func TestCollapserMetricsCountBatchesInClosedBuckets(t *testing.T) {
	mc := newManual()
	m := NewRegistry(mc).Collapser("GetUser", Config{})
	m.MarkBatch(3)
	m.MarkBatch(5)
	m.MarkResponseFromCache()
	m.MarkBatch(0) // nothing

	assert.Zero(t, m.RollingCount(CollapserBatchExecuted), "the bucket in progress is not counted")
	mc.Advance(time.Second)
	assert.Equal(t, int64(2), m.RollingCount(CollapserBatchExecuted))
	assert.Equal(t, int64(8), m.RollingCount(CollapserAddedToBatch))
	assert.Equal(t, int64(1), m.RollingCount(CollapserResponseFromCache))
	assert.Zero(t, m.RollingCount(NumCollapserEventTypes))

	mc.Advance(10 * time.Second)
	assert.Zero(t, m.RollingCount(CollapserAddedToBatch), "out of the rolling window")
	assert.Equal(t, int64(8), m.CumulativeCount(CollapserAddedToBatch))
	assert.Equal(t, int64(2), m.CumulativeCount(CollapserBatchExecuted))
	assert.Zero(t, m.CumulativeCount(-1))
}

// ADDED_TO_BATCH is the high half of its word: batches whose sizes add up
// to more than 32 bits in one bucket must not lose the overflow off the
// top of the word.
func TestCollapserCountsBeyond32BitsPerBucketAreNotLost(t *testing.T) {
	// One processor, so one stripe: the three land in the same slot.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	mc := newManual()
	m := NewRegistry(mc).Collapser("collapser", Config{PercentileDisabled: true})
	for range 3 {
		m.MarkBatch(math.MaxInt32)
	}
	mc.Advance(time.Second)
	assert.Equal(t, int64(3), m.RollingCount(CollapserBatchExecuted))
	assert.Equal(t, int64(3*math.MaxInt32), m.RollingCount(CollapserAddedToBatch))
	assert.Equal(t, int64(3*math.MaxInt32), m.CumulativeCount(CollapserAddedToBatch))
}

func TestCollapserMetricsBatchSizes(t *testing.T) {
	mc := newManual()
	m := NewRegistry(mc).Collapser("GetUser", Config{})
	for _, n := range []int{1, 2, 3, 4, 10} {
		m.MarkBatch(n)
	}
	assert.Zero(t, m.BatchSizes().Count(), "sizes come from closed buckets")
	mc.Advance(10 * time.Second)
	d := m.BatchSizes()
	assert.Equal(t, int64(5), d.Count())
	assert.Equal(t, int64(4), d.Mean())
	assert.Equal(t, int64(3), d.Percentile(50))
	assert.Equal(t, int64(10), d.Percentile(100))
	assert.Equal(t, int64(1), d.Percentile(0))
	assert.Zero(t, BatchSizeDistribution{}.Mean())
}

func TestCollapserMetricsPercentileDisabled(t *testing.T) {
	mc := newManual()
	m := NewRegistry(mc).Collapser("GetUser", Config{PercentileDisabled: true})
	m.MarkBatch(4)
	mc.Advance(10 * time.Second)
	assert.Zero(t, m.BatchSizes().Count())
	assert.Equal(t, int64(4), m.RollingCount(CollapserAddedToBatch))
}

type fixedCollapserStatus CollapserStatus

func (s fixedCollapserStatus) CollapserStatus() CollapserStatus { return CollapserStatus(s) }

func TestCollapserMetricsSnapshot(t *testing.T) {
	mc := newManual()
	m := NewRegistry(mc).Collapser("GetUser", Config{})
	m.MarkBatch(2)
	m.MarkBatch(4)
	m.MarkResponseFromCache()
	mc.Advance(10 * time.Second)

	s := m.Snapshot()
	assert.Equal(t, "GetUser", s.Key)
	assert.Equal(t, mc.Now(), s.Time)
	assert.Equal(t, int64(2), s.Batches)
	assert.Equal(t, int64(6), s.RequestsBatched)
	assert.Equal(t, int64(1), s.ResponsesFromCache)
	assert.Equal(t, int64(3), s.BatchSizeMean)
	assert.Equal(t, [8]int64{2, 2, 4, 4, 4, 4, 4, 4}, s.BatchSizePercentiles)
	assert.Equal(t, 1<<31-1, s.MaxRequestsInBatch, "no provider: Hystrix's default, no cap")
	assert.False(t, s.RequestCacheEnabled)

	m.SetStatusProvider(fixedCollapserStatus{RequestCacheEnabled: true, MaxRequestsInBatch: 50, TimerDelay: 10 * time.Millisecond})
	s = m.Snapshot()
	assert.True(t, s.RequestCacheEnabled)
	assert.Equal(t, 50, s.MaxRequestsInBatch)
	assert.Equal(t, 10*time.Millisecond, s.TimerDelay)

	m.SetStatusProvider(nil)
	_, ok := m.Status()
	assert.False(t, ok)
}

func TestRegistryCollapsers(t *testing.T) {
	r := NewRegistry(newManual())
	a := r.Collapser("A", Config{})
	assert.Same(t, a, r.Collapser("A", Config{Buckets: 5}), "the first Config holds")
	r.Collapser("B", Config{})

	got, ok := r.LookupCollapser("A")
	require.True(t, ok)
	assert.Same(t, a, got)
	_, ok = r.LookupCollapser("C")
	assert.False(t, ok)

	var keys []string
	for m := range r.Collapsers() {
		keys = append(keys, m.Key())
	}
	assert.ElementsMatch(t, []string{"A", "B"}, keys)

	keys = keys[:0]
	for s := range r.CollapserSnapshots() {
		keys = append(keys, s.Key)
	}
	assert.ElementsMatch(t, []string{"A", "B"}, keys)
	for range r.CollapserSnapshots() {
		break // stopping early is allowed
	}

	assert.Panics(t, func() { r.Collapser("", Config{}) })
	assert.PanicsWithValue(t, `metricsstream: Registry.Collapser("D"): metricsstream: invalid config: Config.Buckets (-1) is negative`,
		func() { r.Collapser("D", Config{Buckets: -1}) })
}

// ADDED_TO_BATCH is a 32-bit half of a word: a batch of 2^32 requests or
// more used to lose its high bits and count nothing.
func TestCollapserBatchBeyond32Bits(t *testing.T) {
	mc := newManual()
	m := NewRegistry(mc).Collapser("collapser", Config{PercentileDisabled: true})
	const size = 1<<32 + 5
	m.MarkBatch(size)
	mc.Advance(time.Second)
	assert.Equal(t, int64(1), m.RollingCount(CollapserBatchExecuted))
	assert.Equal(t, int64(size), m.RollingCount(CollapserAddedToBatch))
	assert.Equal(t, int64(size), m.CumulativeCount(CollapserAddedToBatch))
}
