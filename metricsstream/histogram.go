package metricsstream

import (
	"math/bits"
	"sync"
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
// that has seen one latency holds 832 bytes of histogram, where a single
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
// latency window and per stripe, which 32 bits hold for the default
// windows but not for a bucket of a day or more (PercentileWindow may be
// MaxWindow in one bucket): a half that reaches 2^31 moves 2^31 of its
// count into the histogram's overflow (see histogram.spill), so that it
// never wraps into its neighbour.
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
	over   atomic.Pointer[histOverflow] // nil until a count reaches 2^31
}

// histOverflow holds what spill moved out of a histogram's count words:
// per half (execHalf, totalHalf) and index, a multiple of 2^31.
type histOverflow struct {
	mu     sync.Mutex
	counts [2]map[int]uint64
}

// halfBits has the top bit of each half of a count word: set, the half
// holds 2^31 or more, and add spills it.
const halfBits = 1<<(execHalf+31) | 1<<(totalHalf+31)

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
	w := &loadOrNew(&g[ci&(histGroupLen-1)])[i&(histChunkLen-1)]
	if w.Add(v)&halfBits != 0 {
		h.spill(w, i)
	}
}

// spill moves 2^31 out of each half of w, the count word of index i, that
// holds that much, into the overflow. It runs once per 2^31 counts of an
// index, so that a half never wraps: 2^31 adds would have to run between
// the one that reached 2^31 and its spill.
func (h *histogram) spill(w *atomic.Uint64, i int) {
	o := loadOrNew(&h.over)
	o.mu.Lock()
	defer o.mu.Unlock()
	for k, half := range [2]uint{execHalf, totalHalf} {
		for {
			old := w.Load()
			if old>>half&(1<<31) == 0 {
				break // spilled by another add meanwhile
			}
			if w.CompareAndSwap(old, old-1<<31<<half) {
				if o.counts[k] == nil {
					o.counts[k] = make(map[int]uint64)
				}
				o.counts[k][i] += 1 << 31
				break
			}
		}
	}
}

// overflowInto adds to counts, the merged counts of chunk ci, the
// overflow of its indexes in half (execHalf or totalHalf).
func (h *histogram) overflowInto(ci int, half uint, counts *[histChunkLen]uint64) {
	o := h.over.Load()
	if o == nil {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	for i, n := range o.counts[half/totalHalf] {
		if i>>histChunkBits == ci {
			counts[i&(histChunkLen-1)] += n
		}
	}
}

// clear zeroes every count, keeping the chunks for reuse.
func (h *histogram) clear() {
	if o := h.over.Load(); o != nil {
		o.mu.Lock()
		o.counts = [2]map[int]uint64{}
		o.mu.Unlock()
	}
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
