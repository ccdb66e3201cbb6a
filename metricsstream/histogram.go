package metricsstream

import (
	"math/bits"
	"sync/atomic"
	"time"
)

// The histogram has the layout of an HdrHistogram with 3 significant
// digits, a lowest discernible value of 1 and a highest trackable value of
// one hour, counting microseconds: values below 2048µs are exact, larger
// ones are kept within 1/1024 of their value (0.1%). The counts live in
// chunks that are allocated on first use, found through a directory of
// two levels also allocated on first use: a histogram costs its top level
// (23 pointers), one group of 16 chunk pointers per region of 1,024
// values that occurred, and one chunk per 64 neighbouring values. A key
// that has seen one latency holds 824 bytes of histogram, where a single
// directory of 184 pointers to chunks of 128 held 2,496 (bench/memory:
// the bytes per key of rxhystrix-hystrixgo, which every name of the
// drop-in pays).
const (
	histUnit          = time.Microsecond
	histHighest       = int64(time.Hour / histUnit) // longer latencies are recorded as one hour
	histSubHalfMag    = 10                          // log2 of the sub-buckets in half a bucket
	histSubHalfCount  = 1 << histSubHalfMag         // 1024
	histSubBucketMask = 2*histSubHalfCount - 1      // 2047
	histBucketCount   = 22                          // buckets needed to reach histHighest
	histCountsLen     = (histBucketCount + 1) * histSubHalfCount

	histChunkBits = 6
	histChunkLen  = 1 << histChunkBits // counts per chunk
	histChunks    = histCountsLen / histChunkLen
	histGroupBits = 4
	histGroupLen  = 1 << histGroupBits // chunks per group
	histGroups    = (histChunks + histGroupLen - 1) / histGroupLen
)

// histChunk holds, for histChunkLen neighbouring indexes, two counts in a
// word: of execution latencies in the low half (execHalf) and of total
// latencies in the high half (totalHalf). A count is per bucket of a
// latency window and per stripe, so 32 bits are plenty.
type histChunk [histChunkLen]atomic.Uint64

// The halves of a count word.
const (
	execHalf  = 0
	totalHalf = 32
)

// histogram is a lock-free pair of latency histograms, of execution and of
// total latencies, whose counts share their chunks: an execution whose two
// latencies are equivalent (as they are for most semaphore-isolated
// executions, which start running at once) is recorded with one index
// computation and one atomic add, and two histograms cost one chunk
// directory. Recording is at most two atomic adds, plus the first time a
// region of values occurs, the compare-and-swap that installs its chunk.
type histogram struct {
	groups [histGroups]atomic.Pointer[histGroup]
}

// histGroup is the second level of a histogram's directory.
type histGroup [histGroupLen]atomic.Pointer[histChunk]

// chunk returns chunk ci, or nil if no count of it occurred.
func (h *histogram) chunk(ci int) *histChunk {
	g := h.groups[ci>>histGroupBits].Load()
	if g == nil {
		return nil
	}
	return g[ci&(histGroupLen-1)].Load()
}

// record counts an execution latency and a total latency, each clamped to
// [0, one hour]; a negative one is not counted.
func (h *histogram) record(execution, total time.Duration) {
	ie, it := -1, -1
	if execution >= 0 {
		ie = histIndex(int64(execution / histUnit))
	}
	if total >= 0 {
		it = histIndex(int64(total / histUnit))
	}
	if ie == it {
		if ie >= 0 {
			h.add(ie, 1<<execHalf|1<<totalHalf)
		}
		return
	}
	if ie >= 0 {
		h.add(ie, 1<<execHalf)
	}
	if it >= 0 {
		h.add(it, 1<<totalHalf)
	}
}

// add adds v to the count word of index i.
func (h *histogram) add(i int, v uint64) {
	ci := i >> histChunkBits
	g := loadOrNew(&h.groups[ci>>histGroupBits])
	loadOrNew(&g[ci&(histGroupLen-1)])[i&(histChunkLen-1)].Add(v)
}

// clear zeroes every count, keeping the chunks for reuse.
func (h *histogram) clear() {
	for ci := range histChunks {
		if c := h.chunk(ci); c != nil {
			for j := range c {
				c[j].Store(0)
			}
		}
	}
}

// histIndex returns the counts index of v, as HdrHistogram's
// countsIndexFor.
func histIndex(v int64) int {
	v = min(max(v, 0), histHighest)
	bucket := 64 - bits.LeadingZeros64(uint64(v)|histSubBucketMask) - (histSubHalfMag + 1)
	sub := int(v >> bucket)
	return (bucket+1)<<histSubHalfMag + sub - histSubHalfCount
}

// histBucketAndSub returns the bucket and sub-bucket of counts index i,
// as HdrHistogram's valueFromFlatIndex.
func histBucketAndSub(i int) (bucket, sub int) {
	bucket = i>>histSubHalfMag - 1
	sub = i&(histSubHalfCount-1) + histSubHalfCount
	if bucket < 0 {
		sub -= histSubHalfCount
		bucket = 0
	}
	return bucket, sub
}

// histLowest returns the lowest value counted at index i.
func histLowest(i int) int64 {
	bucket, sub := histBucketAndSub(i)
	return int64(sub) << bucket
}

// histWidth returns how many values index i counts.
func histWidth(i int) int64 {
	bucket, _ := histBucketAndSub(i)
	return 1 << bucket
}

// histHighestEquivalent returns the highest value counted at index i.
func histHighestEquivalent(i int) int64 { return histLowest(i) + histWidth(i) - 1 }

// histMedian returns the middle value of index i, which HdrHistogram uses
// for means.
func histMedian(i int) int64 { return histLowest(i) + histWidth(i)>>1 }
