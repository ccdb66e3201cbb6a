package metricsstream

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// dashboardPercentiles are the percentiles the Hystrix dashboard shows.
var dashboardPercentiles = []float64{0, 25, 50, 75, 90, 95, 99, 99.5, 100}

func TestHistogramLayoutIsHdrHistograms(t *testing.T) {
	ref := hdrhistogram.New(1, histHighest, 3)
	// ByteSize is 6*8 + 5*4 + 8 bytes per count.
	assert.Equal(t, histCountsLen, (ref.ByteSize()-6*8-5*4)/8)
	assert.Zero(t, histCountsLen%histChunkLen)

	for _, v := range []int64{0, 1, 1023, 1024, 2047, 2048, 2049, 4095, 4096, 1e6, 123456789, histHighest} {
		i := histIndex(v)
		lo, hi := histLowest(i), histHighestEquivalent(i)
		assert.True(t, lo <= v && v <= hi, "%d not in [%d, %d]", v, lo, hi)
		assert.True(t, ref.ValuesAreEquivalent(lo, v) && ref.ValuesAreEquivalent(hi, v), "%d", v)
		assert.False(t, ref.ValuesAreEquivalent(hi+1, v), "%d", v)
		assert.LessOrEqual(t, float64(hi-lo), float64(v)/1000, "3 significant digits at %d", v)
	}
	assert.Equal(t, histIndex(histHighest), histIndex(math.MaxInt64), "clamped to one hour")
	assert.Equal(t, 0, histIndex(-5))
}

// recordLatency records an execution of latency d, ended now.
func recordLatency(m *CommandMetrics, execution, total time.Duration) {
	c := Completion{Executed: true, ExecutionLatency: execution, TotalLatency: total}
	c.Events.Add(Success, 1)
	m.MarkCompletion(&c)
}

// The distribution must match HdrHistogram's exactly: same buckets, same
// percentile ranks, same mean.
func TestLatencyPercentilesMatchHdrHistogram(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 2, 3, 10, 999, 20000} {
		m, mc := newTestMetrics(t, Config{})
		ref := hdrhistogram.New(1, histHighest, 3)
		exact := make([]int64, 0, n)
		for i := range n {
			// Log-normal-ish latencies from ~100µs to a few seconds.
			us := int64(math.Exp(rng.NormFloat64()*1.5 + 9))
			require.NoError(t, ref.RecordValue(us))
			exact = append(exact, us)
			recordLatency(m, time.Duration(us)*time.Microsecond, time.Duration(us+7)*time.Microsecond)
			if i%1000 == 999 {
				mc.Advance(time.Second) // spread over the six buckets
			}
		}
		mc.Advance(10 * time.Second)
		slices.Sort(exact)

		l := m.Latencies()
		require.Equal(t, int64(n), l.Execution.Count())
		require.Equal(t, int64(n), l.Total.Count())
		ps := append(slices.Clone(dashboardPercentiles), 0.1, 5, 33.3, 99.9, 99.99)
		for _, p := range ps {
			got := m.ExecutionLatencyPercentile(p)
			assert.Equal(t, time.Duration(ref.ValueAtPercentile(p))*time.Microsecond, got, "n=%d p=%v", n, p)

			// Against the exact nearest-rank value: within 3 significant digits.
			rank := min(max(int(p/100*float64(n)+0.5), 1), n)
			want := float64(exact[rank-1])
			assert.InDelta(t, want, float64(got/time.Microsecond), want/1000+1, "n=%d p=%v", n, p)
		}
		assert.InDelta(t, ref.Mean(), float64(m.ExecutionLatencyMean())/1e3, ref.Mean()*1e-9+1e-3, "n=%d", n)
		assert.InDelta(t, ref.Mean()+7, float64(m.TotalLatencyMean())/1e3, ref.Mean()*1e-3+1, "n=%d", n)
		assert.Equal(t, time.Duration(ref.Max())*time.Microsecond, l.Execution.Max())
	}
}

func TestLatencyWindowClosedBucketsOnly(t *testing.T) {
	m, mc := newTestMetrics(t, Config{})
	recordLatency(m, 5*time.Millisecond, 6*time.Millisecond)
	assert.Zero(t, m.ExecutionLatencyPercentile(50), "the bucket in progress is not counted")

	mc.Advance(10 * time.Second) // the first 10s bucket closes
	assert.Equal(t, 5*time.Millisecond+4*time.Microsecond-time.Microsecond, m.ExecutionLatencyPercentile(50),
		"the highest value equivalent to 5000µs: 5000..5003")
	assert.Equal(t, 5*time.Millisecond, m.ExecutionLatencyPercentile(0))
	assert.Equal(t, 6*time.Millisecond+3*time.Microsecond, m.TotalLatencyPercentile(99.5))
	assert.Equal(t, 5*time.Millisecond+2*time.Microsecond, m.ExecutionLatencyMean())
	assert.Equal(t, 6*time.Millisecond+2*time.Microsecond, m.TotalLatencyMean())

	recordLatency(m, 50*time.Millisecond, 50*time.Millisecond)
	mc.Advance(50 * time.Second)
	assert.Equal(t, int64(2), m.Latencies().Execution.Count())
	mc.Advance(10 * time.Second)
	assert.Equal(t, int64(1), m.Latencies().Execution.Count(), "the first bucket aged out")
	assert.Equal(t, 49984*time.Microsecond, m.ExecutionLatencyPercentile(0), "50000µs is kept to 32µs")
	mc.Advance(10 * time.Second)
	assert.Equal(t, Latencies{}, m.Latencies())
	assert.Zero(t, m.ExecutionLatencyMean())
}

// RollingCommandLatencyDistributionStreamTest: short-circuits, rejections
// and cache hits are not latency-tracked; neither are unknown latencies.
func TestLatencyRecordsOnlyExecutionsThatRan(t *testing.T) {
	m, mc := newTestMetrics(t, Config{})
	for _, e := range []EventType{ShortCircuited, PoolRejected, SemaphoreRejected, ResponseFromCache} {
		c := Completion{ExecutionLatency: -1, TotalLatency: time.Millisecond}
		c.Events.Add(e, 1)
		m.MarkCompletion(&c)
	}
	c := Completion{Executed: true, ExecutionLatency: -1, TotalLatency: 3 * time.Millisecond}
	c.Events.Add(Success, 1)
	m.MarkCompletion(&c)
	mc.Advance(10 * time.Second)
	l := m.Latencies()
	assert.Equal(t, int64(0), l.Execution.Count())
	assert.Equal(t, int64(1), l.Total.Count())
	assert.Equal(t, 3*time.Millisecond+time.Microsecond, l.Total.Percentile(50))
}

func TestLatencyPercentileDisabled(t *testing.T) {
	m, mc := newTestMetrics(t, Config{PercentileDisabled: true})
	recordLatency(m, time.Millisecond, time.Millisecond)
	mc.Advance(time.Minute)
	assert.Zero(t, m.ExecutionLatencyPercentile(99))
	assert.Zero(t, m.TotalLatencyMean())
	assert.Equal(t, int64(1), m.CumulativeCount(Success), "events are still counted")
}

func TestLatencyPercentileRejectsImpossiblePercentiles(t *testing.T) {
	m, _ := newTestMetrics(t, Config{})
	for _, p := range []float64{-1, 100.5, math.NaN()} {
		assert.Panics(t, func() { m.ExecutionLatencyPercentile(p) }, "%v", p)
		assert.Panics(t, func() { m.TotalLatencyPercentile(p) }, "%v", p)
		assert.Panics(t, func() { Distribution{}.Percentile(p) }, "%v", p)
	}
}

func TestLatencyLongerThanAnHourIsAnHour(t *testing.T) {
	m, mc := newTestMetrics(t, Config{})
	recordLatency(m, 3*time.Hour, 3*time.Hour)
	mc.Advance(10 * time.Second)
	got := m.ExecutionLatencyPercentile(100)
	assert.InDelta(t, float64(time.Hour), float64(got), float64(time.Hour)/1000)
}

// A recycled bucket is cleared but keeps its chunks: a busy key stops
// allocating.
func TestLatencyBucketsAreReused(t *testing.T) {
	m, mc := newTestMetrics(t, Config{})
	for range 20 {
		recordLatency(m, 7*time.Millisecond, 7*time.Millisecond)
		mc.Advance(10 * time.Second)
	}
	assert.Equal(t, int64(6), m.Latencies().Execution.Count())
	allocs := testing.AllocsPerRun(100, func() {
		recordLatency(m, 7*time.Millisecond, 7*time.Millisecond)
		mc.Advance(10 * time.Second)
	})
	assert.Zero(t, allocs)
	assert.Equal(t, int64(6), m.Latencies().Execution.Count())
}

func TestLatenciesAreComputedOncePerBucket(t *testing.T) {
	m, mc := newTestMetrics(t, Config{})
	recordLatency(m, time.Millisecond, time.Millisecond)
	mc.Advance(10 * time.Second)
	a := m.Latencies()
	mc.Advance(9 * time.Second)
	b := m.Latencies()
	require.NotEmpty(t, a.Execution.bins)
	assert.Same(t, &a.Execution.bins[0], &b.Execution.bins[0], "served from the cache")
	mc.Advance(time.Second)
	c := m.Latencies()
	assert.NotSame(t, &a.Execution.bins[0], &c.Execution.bins[0], "recomputed in the next bucket")
	assert.Equal(t, a, c)
}

func TestHistogramKeepsBothLatenciesInOneWord(t *testing.T) {
	var h histogram
	h.record(3*time.Millisecond, 3*time.Millisecond) // one word, both halves
	h.record(time.Millisecond, 2*time.Millisecond)   // two words
	h.record(-1, 5*time.Millisecond)                 // total only
	h.record(7*time.Millisecond, -1)                 // execution only
	hs := []*histogram{&h}
	exec, total := merge(hs, execHalf), merge(hs, totalHalf)
	assert.Equal(t, int64(3), exec.Count())
	assert.Equal(t, int64(3), total.Count())
	assert.Equal(t, int64(1), exec.CountAtOrBelow(time.Millisecond))
	assert.Equal(t, int64(2), exec.CountAtOrBelow(3*time.Millisecond))
	assert.Equal(t, int64(0), total.CountAtOrBelow(time.Millisecond))
	assert.Equal(t, int64(2), total.CountAtOrBelow(3*time.Millisecond))
	assert.Equal(t, int64(3), total.CountAtOrBelow(5*time.Millisecond))
	h.clear()
	assert.Zero(t, merge(hs, execHalf).Count()+merge(hs, totalHalf).Count())
}

// A histogram count is per bucket and stripe, and a bucket may be as long
// as MaxWindow (PercentileBuckets 1): a latency seen 2^32 times in one
// bucket on one processor must neither wrap the execution count to 0 nor
// carry into the total count that shares its word.
func TestHistogramCountsBeyond32BitsAreNotCorrupted(t *testing.T) {
	const lat = 3 * time.Microsecond
	var h histogram
	i := histIndex(int64(lat / histUnit))
	// 2^32-1 executions of lat counted in the execution half only (a
	// collapser's batch sizes, or thread-pool executions whose total
	// latency differs), then one more with equal latencies.
	for range 1 << 16 {
		h.add(i, (1<<16-1)<<execHalf)
	}
	h.add(i, (1<<16-1)<<execHalf)
	h.record(lat, lat)

	exec, total := merge([]*histogram{&h}, execHalf), merge([]*histogram{&h}, totalHalf)
	if got, want := exec.Count(), int64(1)<<32; got != want { // 2^16*(2^16-1) + (2^16-1) + 1
		t.Errorf("execution count = %d, want %d", got, want)
	}
	if got := total.Count(); got != 1 {
		t.Errorf("total count = %d, want 1", got)
	}
	if got := exec.Percentile(50); got != lat {
		t.Errorf("execution p50 = %v, want %v", got, lat)
	}

	// A recycled slot starts from zero, overflow included.
	h.clear()
	h.record(lat, lat)
	exec = merge([]*histogram{&h}, execHalf)
	if got := exec.Count(); got != 1 {
		t.Errorf("execution count after clear = %d, want 1", got)
	}
}
