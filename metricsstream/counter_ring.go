package metricsstream

import (
	"runtime"
	"sync/atomic"
	"time"
)

// Slot generations: the bucket number a slot holds, or one of these.
const (
	genClaiming int64 = -1 // a recorder is clearing the slot for a new bucket
	genEmpty    int64 = -2 // the slot has never held a bucket
)

// maxRingCounters bounds the counters (sums and maxes) per bucket of a
// counterRing, so that readers work on arrays on the stack.
const maxRingCounters = 24

// counterRing is a lock-free ring of time buckets of counters. A bucket
// holds sums (non-negative counters packed two to a 64-bit word, 32 bits
// each, so that one atomic add records two events) and then maxes (whole
// words that only grow). Each bucket has a copy of its words per stripe
// (see stripeOf), allocated when a recorder of that stripe first comes.
//
// Recording is a load of the slot's generation and atomic adds into the
// recorder's stripe; the first recorder of a new bucket clears the slot it
// recycles (a compare-and-swap, once per bucket). Nothing runs in the
// background: buckets close because time passes.
//
// A ring that keeps totals folds a slot's sums into them when the slot is
// recycled, so the running totals cost recording nothing.
//
// Readers use only closed buckets. They check a slot's generation before
// and after reading it, so a slot recycled under them (possible only for a
// reader delayed by a whole bucket) is left out.
type counterRing struct {
	window
	sums     int // packed counters
	sumWords int // the words that hold them: (sums+1)/2
	words    int // per bucket: the sum words, then the maxes
	gens     []atomic.Int64
	stripes  []atomic.Pointer[[]atomic.Int64] // stripe s holds slot i at [i*words, (i+1)*words)
	newest   atomic.Int64                     // the newest bucket a slot was claimed for

	// Running totals: nil for a ring that keeps none.
	totals       []atomic.Int64 // per sum counter, of the slots recycled so far
	foldsStarted atomic.Int64
	foldsDone    atomic.Int64
}

// newCounterRing returns an empty ring of sums packed counters and maxes
// max words per bucket; keepTotals makes it keep running totals of the
// sums.
func newCounterRing(epoch time.Time, width time.Duration, size, sums, maxes int, keepTotals bool) *counterRing {
	r := &counterRing{window: window{epoch: epoch, width: width, size: size}, sums: sums}
	r.sumWords = (sums + 1) / 2
	r.words = r.sumWords + maxes
	if sums+maxes > maxRingCounters {
		panic("metricsstream: too many counters per bucket")
	}
	r.gens = make([]atomic.Int64, r.ringLen())
	for i := range r.gens {
		r.gens[i].Store(genEmpty)
	}
	r.stripes = make([]atomic.Pointer[[]atomic.Int64], stripeCount)
	r.newest.Store(genEmpty)
	if keepTotals {
		r.totals = make([]atomic.Int64, sums)
	}
	return r
}

// sumWord returns the word and bit shift of packed counter j.
func sumWord(j int) (word int, shift uint) { return j / 2, uint(j%2) * 32 }

// sumOf returns packed counter j of a bucket's words.
func sumOf(words []atomic.Int64, j int) int64 {
	w, shift := sumWord(j)
	return int64(uint32(uint64(words[w].Load()) >> shift))
}

// counters returns how many values readSlot reports: the sums, then the
// maxes.
func (r *counterRing) counters() int { return r.sums + r.words - r.sumWords }

// bucketFor is bucketAt for recorders: it does not divide when t falls in
// the newest bucket.
func (r *counterRing) bucketFor(t time.Time) int64 {
	return r.window.bucketAtHint(t, r.newest.Load())
}

// bucket returns the words of bucket n in the given stripe, claiming and
// clearing the slot if it holds an older bucket. It returns nil if the slot
// already holds a newer bucket: the caller is so late that bucket n has
// left the ring.
func (r *counterRing) bucket(n int64, stripe int) []atomic.Int64 {
	i := int(n) & (len(r.gens) - 1)
	gen := &r.gens[i]
	for {
		g := gen.Load()
		switch {
		case g == n:
			return r.stripeWords(stripe)[i*r.words : (i+1)*r.words]
		case g == genClaiming:
			runtime.Gosched() // another recorder is clearing it: a few stores
		case g > n:
			return nil
		default:
			if r.claim(i, g, n) {
				return r.stripeWords(stripe)[i*r.words : (i+1)*r.words]
			}
		}
	}
}

// add adds to bucket n, in the given stripe, one pending add per word (see
// addTo). A bucket that has left the ring gets nothing.
func (r *counterRing) add(n int64, stripe int, adds []uint64) {
	b := r.bucket(n, stripe)
	if b == nil {
		return
	}
	for w, v := range adds {
		if v != 0 {
			b[w].Add(int64(v))
		}
	}
}

// claim moves slot i from bucket old to bucket n: it folds the slot's sums
// into the totals, clears it in every stripe and publishes n.
func (r *counterRing) claim(i int, old, n int64) bool {
	if r.totals != nil {
		r.foldsStarted.Add(1) // readers of totals retry until foldsDone catches up
		defer r.foldsDone.Add(1)
	}
	if !r.gens[i].CompareAndSwap(old, genClaiming) {
		return false
	}
	var folded [maxRingCounters + 1]int64 // the sums, two per word
	for s := range r.stripes {
		p := r.stripes[s].Load()
		if p == nil {
			continue
		}
		w := (*p)[i*r.words : (i+1)*r.words]
		for j := range w {
			v := uint64(w[j].Swap(0))
			if j < r.sumWords {
				folded[2*j] += int64(uint32(v))
				folded[2*j+1] += int64(v >> 32)
			}
		}
	}
	if r.totals != nil && old >= 0 {
		for j := range r.totals {
			if folded[j] != 0 {
				r.totals[j].Add(folded[j])
			}
		}
	}
	r.gens[i].Store(n)
	storeMax(&r.newest, n)
	return true
}

// lastActive returns the start of the newest bucket a recorder wrote to,
// or since if none did.
func (r *counterRing) lastActive(since time.Time) time.Time {
	n := r.newest.Load()
	if n < 0 {
		return since
	}
	return r.epoch.Add(time.Duration(n) * r.width)
}

// stripeWords returns the words of stripe s, allocating them on first use.
func (r *counterRing) stripeWords(s int) []atomic.Int64 {
	p := r.stripes[s].Load()
	if p == nil {
		w := make([]atomic.Int64, len(r.gens)*r.words)
		r.stripes[s].CompareAndSwap(nil, &w)
		p = r.stripes[s].Load()
	}
	return *p
}

// readSlot sets dst (of length counters) to slot i, summed or maxed over
// the stripes, and reports whether the slot held bucket n before and
// after.
func (r *counterRing) readSlot(i int, n int64, dst []int64) bool {
	if r.gens[i].Load() != n {
		return false
	}
	clear(dst)
	for s := range r.stripes {
		p := r.stripes[s].Load()
		if p == nil {
			continue
		}
		w := (*p)[i*r.words : (i+1)*r.words]
		for j := range r.sums {
			dst[j] += sumOf(w, j)
		}
		for m := range r.words - r.sumWords {
			dst[r.sums+m] = max(dst[r.sums+m], w[r.sumWords+m].Load())
		}
	}
	return r.gens[i].Load() == n
}

// sumsInto adds into dst[j] sum counter j of the closed buckets of the
// rolling value at bucket now.
func (r *counterRing) sumsInto(now int64, dst []int64) {
	var buf [maxRingCounters]int64
	vals := buf[:r.counters()]
	for n := max(now-int64(r.size), 0); n < now; n++ {
		if r.readSlot(int(n)&(len(r.gens)-1), n, vals) {
			for j := range dst {
				dst[j] += vals[j]
			}
		}
	}
}

// sum returns sum counter j over the closed buckets at bucket now.
func (r *counterRing) sum(now int64, j int) int64 {
	var buf [maxRingCounters]int64
	r.sumsInto(now, buf[:j+1])
	return buf[j]
}

// maxOf returns the largest value of max m (0 is the first max) over the
// closed buckets at bucket now.
func (r *counterRing) maxOf(now int64, m int) int64 {
	var buf [maxRingCounters]int64
	vals := buf[:r.counters()]
	var v int64
	for n := max(now-int64(r.size), 0); n < now; n++ {
		if r.readSlot(int(n)&(len(r.gens)-1), n, vals) {
			v = max(v, vals[r.sums+m])
		}
	}
	return v
}

// totalsInto sets dst[j] to the running total of sum counter j up to the
// last closed bucket at bucket now: the totals folded from recycled slots
// plus the closed buckets still in the ring.
func (r *counterRing) totalsInto(now int64, dst []int64) {
	var buf [maxRingCounters]int64
	vals := buf[:r.counters()]
	for {
		done := r.foldsDone.Load()
		started := r.foldsStarted.Load()
		if started != done {
			runtime.Gosched() // a recorder is folding a slot: a few adds
			continue
		}
		for j := range dst {
			dst[j] = r.totals[j].Load()
		}
		for i := range r.gens {
			n := r.gens[i].Load()
			if n < 0 || n >= now || !r.readSlot(i, n, vals) {
				continue
			}
			for j := range dst {
				dst[j] += vals[j]
			}
		}
		if r.foldsStarted.Load() == started {
			return
		}
	}
}

// storeMax raises a to v if v is larger.
func storeMax(a *atomic.Int64, v int64) {
	for {
		cur := a.Load()
		if v <= cur || a.CompareAndSwap(cur, v) {
			return
		}
	}
}

// addTo adds v to packed counter j of the pending adds of a bucket, one
// uint64 per word.
func addTo(adds []uint64, j int, v int64) {
	w, shift := sumWord(j)
	adds[w] += uint64(v) << shift
}
