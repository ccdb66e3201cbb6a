package metricsstream

import (
	"fmt"
	"math"
	"sort"
	"time"
)

// Distribution is an immutable snapshot of latencies: the merged
// histogram of the closed buckets of a percentile window, as Hystrix's
// CachedValuesHistogram. Values keep 3 significant digits (HdrHistogram's
// precision, at microsecond resolution). The zero value is an empty
// distribution whose percentiles and mean are 0. It is safe for
// concurrent use.
type Distribution struct {
	bins  []distBin // the non-empty indexes, in increasing order
	count int64
	mean  float64 // microseconds
}

// distBin is one non-empty histogram index and the count of it and of
// every index below.
type distBin struct {
	index      int32
	cumulative int64
}

// Count returns how many latencies the distribution holds.
func (d Distribution) Count() int64 { return d.count }

// Mean returns the mean latency, computed as HdrHistogram computes it
// (each value taken as the middle of its bucket); 0 when empty.
func (d Distribution) Mean() time.Duration {
	return time.Duration(math.Round(d.mean * float64(histUnit)))
}

// Percentile returns the latency at percentile p, as HdrHistogram's
// getValueAtPercentile: the highest value equivalent to the value whose
// rank is p% of the count rounded to the nearest (at least the first),
// and the lowest equivalent value for p == 0. It returns 0 when the
// distribution is empty and panics if p is not within [0, 100].
func (d Distribution) Percentile(p float64) time.Duration {
	checkPercentile(p)
	if d.count == 0 {
		return 0
	}
	rank := int64(p/100*float64(d.count) + 0.5)
	rank = min(max(rank, 1), d.count)
	i := sort.Search(len(d.bins), func(i int) bool { return d.bins[i].cumulative >= rank })
	index := int(d.bins[i].index)
	if p == 0 {
		return time.Duration(histLowest(index)) * histUnit
	}
	return time.Duration(histHighestEquivalent(index)) * histUnit
}

// Max returns the highest latency (to 3 significant digits), 0 when empty.
func (d Distribution) Max() time.Duration { return d.Percentile(100) }

func checkPercentile(p float64) {
	if !(p >= 0 && p <= 100) {
		panic(fmt.Sprintf("metricsstream: percentile %v is not within [0, 100]", p))
	}
}

// distributionBuilder merges histograms into a Distribution, one chunk
// index at a time, in increasing order of index.
type distributionBuilder struct {
	d   Distribution
	sum float64 // of count × median value
}

// addChunk adds the merged counts of chunk ci.
func (b *distributionBuilder) addChunk(ci int, counts *[histChunkLen]uint64) {
	for j, n := range counts {
		if n == 0 {
			continue
		}
		index := ci<<histChunkBits + j
		b.d.count += int64(n)
		b.sum += float64(n) * float64(histMedian(index))
		b.d.bins = append(b.d.bins, distBin{index: int32(index), cumulative: b.d.count})
	}
}

func (b *distributionBuilder) distribution() Distribution {
	if b.d.count > 0 {
		b.d.mean = b.sum / float64(b.d.count)
	}
	return b.d
}
