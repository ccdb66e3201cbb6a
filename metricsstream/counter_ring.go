package metricsstream

import (
	"math"
	"math/bits"
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
// each, so that one add records two events) and then maxes (whole words
// that only grow). Each stripe (see stripe) has its own ring of slots,
// allocated when its first recorder comes.
//
// A sum may outgrow its 32 bits (an emission count may be up to
// math.MaxInt32 per execution), and is still never recorded wrong: the
// add that wraps a half around sees it (see addWords), and spill counts
// the wrap in the slot's carries, one count per sum of the 2^32s it holds
// beyond its half, which readers and folds add back. A ring allocates the
// carries of a stripe on the stripe's first wrap: until a sum needs more
// than 32 bits they cost a nil pointer per ring, and recording a
// comparison or two per word.
//
// Recording is a load of the slot's generation in the recorder's stripe
// and adds into it; the first recorder of a stripe in a new bucket clears
// the slot it recycles (once per bucket and stripe). Nothing runs in the
// background: buckets close because time passes.
//
// A ring that keeps totals folds a slot's sums into them when the slot is
// recycled, so the running totals cost recording nothing.
//
// Readers use only closed buckets. They check a slot's generation before
// and after reading it, so a slot recycled under them (possible only for a
// reader delayed by a whole ring) is noticed.
type counterRing struct {
	window
	sums     int // packed counters
	sumWords int // the words that hold them: (sums+1)/2
	words    int // per bucket: the sum words, then the maxes
	slots    int // per stripe: ringLen
	stripes  []atomic.Pointer[counterStripe]
	newest   atomic.Int64 // the newest bucket a slot was claimed for

	// Running totals: nil for a ring that keeps none.
	totals       []atomic.Int64 // per sum counter, of the slots recycled so far
	foldsStarted atomic.Int64
	foldsDone    atomic.Int64

	carries atomic.Pointer[ringCarries] // nil until a sum first wraps
}

// ringCarries holds the carries of a ring (see counterRing) per stripe:
// nil for a stripe none of whose sums has wrapped, else per slot one count
// per sum, slot i at [i*sums, (i+1)*sums). A count is a multiple of 2^32
// that the sum holds beyond its 32 bits.
type ringCarries []atomic.Pointer[[]atomic.Int64]

// counterStripe is the ring of one stripe.
type counterStripe struct {
	gens  slotGens
	words []atomic.Int64 // slot i at [i*words, (i+1)*words)
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
	r.slots = r.ringLen()
	r.stripes = make([]atomic.Pointer[counterStripe], stripeCount)
	r.newest.Store(genEmpty)
	if keepTotals {
		r.totals = make([]atomic.Int64, sums)
	}
	return r
}

// sumWord returns the word and bit shift of packed counter j.
func sumWord(j int) (word int, shift uint) { return j / 2, uint(j%2) * 32 }

// sumOf returns packed counter j of a bucket's words, with its carries
// (nil when none).
func sumOf(words, carries []atomic.Int64, j int) int64 {
	w, shift := sumWord(j)
	v := int64(uint32(uint64(words[w].Load()) >> shift))
	if carries != nil {
		v += carries[j].Load() << 32
	}
	return v
}

// carriesOf returns the carries of slot i of stripe s, or nil if no sum
// of the stripe has wrapped.
func (r *counterRing) carriesOf(s, i int) []atomic.Int64 {
	rc := r.carries.Load()
	if rc == nil {
		return nil
	}
	c := (*rc)[s].Load()
	if c == nil {
		return nil
	}
	return (*c)[i*r.sums : (i+1)*r.sums]
}

// newCarries is carriesOf for the first wrap: it allocates the carries of
// stripe s if they are missing.
func (r *counterRing) newCarries(s, i int) []atomic.Int64 {
	rc := r.carries.Load()
	if rc == nil {
		t := make(ringCarries, len(r.stripes))
		r.carries.CompareAndSwap(nil, &t)
		rc = r.carries.Load()
	}
	if (*rc)[s].Load() == nil {
		c := make([]atomic.Int64, r.slots*r.sums)
		(*rc)[s].CompareAndSwap(nil, &c)
	}
	return r.carriesOf(s, i)
}

// counters returns how many values readSlot reports: the sums, then the
// maxes.
func (r *counterRing) counters() int { return r.sums + r.words - r.sumWords }

// bucketFor is bucketAt for recorders: it does not divide when t falls in
// the newest bucket.
func (r *counterRing) bucketFor(t time.Time) int64 {
	return r.window.bucketAtHint(t, r.newest.Load())
}

// bucketForSince is bucketFor for the time since after the time the
// ring's owner measures from (see window.bucketSince).
func (r *counterRing) bucketForSince(since time.Duration) int64 {
	return r.bucketSince(since, r.newest.Load())
}

// add adds to bucket n, in stripe s, the pending adds (see addTo) of the
// words whose bits are set in words (see nonZero).
//
// A recorder can be later than the ring keeps: it read the clock, then
// was descheduled while the clock moved on by a whole ring (a manual
// clock that other goroutines advance can move seconds in a millisecond).
// Its bucket has left the ring, and so every rolling value read from now
// on: its sums go straight into the running totals, if the ring keeps
// them, since its bucket closed long ago. (Hystrix puts an event in the
// bucket in progress when the event reaches the stream, whatever its
// time. Here an event counts in the bucket of its time while the ring
// holds it, and after that in the totals only.)
func (r *counterRing) add(n int64, s stripe, adds []uint64, words uint32) {
	if b := r.bucket(n, s); b != nil {
		if wrapped := addWords(b, adds, words); wrapped != 0 {
			r.spill(s.index, b, wrapped)
		}
	} else if r.totals != nil {
		r.addTotals(adds, words)
	}
}

// addTotals adds to the running totals the pending adds (see addTo) of
// the words whose bits are set in words, as a fold does: readers of the
// totals retry meanwhile.
func (r *counterRing) addTotals(adds []uint64, words uint32) {
	r.foldsStarted.Add(1)
	defer r.foldsDone.Add(1)
	for ; words != 0; words &= words - 1 {
		w := bits.TrailingZeros32(words)
		for j := 2 * w; j < min(2*w+2, r.sums); j++ {
			_, shift := sumWord(j)
			if v := int64(uint32(adds[w] >> shift)); v != 0 {
				r.totals[j].Add(v)
			}
		}
	}
}

// addWords adds to the words b of a bucket the pending adds (see addTo)
// of the words whose bits are set in words. It returns the sums that
// wrapped around past 32 bits, bit j for packed counter j: the caller
// hands them to spill, which the bucket needs to be right.
//
// A half wrapped if it is now below what was added to it: the low half
// then carried 1 into the high half, and the high half (with that carry)
// carried out of the word. Each add sees its own wraps, whatever adds
// run at once, since it compares with the value it made.
func addWords(b []atomic.Int64, adds []uint64, words uint32) (wrapped uint32) {
	for ; words != 0; words &= words - 1 {
		w := bits.TrailingZeros32(words)
		a := adds[w]
		v := uint64(b[w].Add(int64(a)))
		if wr := wrapsOf(v, a); wr != 0 {
			wrapped |= wr << (2 * w)
		}
	}
	return wrapped
}

// wrapsOf returns which halves of a word wrapped when adding a made it v:
// bit 0 the low half, bit 1 the high half.
func wrapsOf(v, a uint64) (wrapped uint32) {
	if uint32(v) < uint32(a) {
		wrapped |= 1
	}
	if v < a {
		wrapped |= 2
	}
	return wrapped
}

// spill finishes adds into b, the words of a slot of stripe s, that
// wrapped the sums set in wrapped (see addWords): it counts each wrap in
// the slot's carries and takes back the carry a low half put into its
// high half. Taking it back borrows out of the word when the high half
// is 0 by then (that carry, or another add, wrapped it): the borrow undoes
// a wrap the high half counted, so its carry loses one. Until spill is
// done a reader of the bucket may see a sum off by 2^32 and its neighbour
// by 1; readers read closed buckets, which only a recorder late at the
// close still adds to.
func (r *counterRing) spill(s int, b []atomic.Int64, wrapped uint32) {
	c := r.newCarries(s, r.slotOf(s, b))
	for ; wrapped != 0; wrapped &= wrapped - 1 {
		j := bits.TrailingZeros32(wrapped)
		if j >= r.sums {
			continue // the high half of the last word, no counter: nothing to count
		}
		c[j].Add(1)
		if j%2 == 1 {
			continue
		}
		if v := uint64(b[j/2].Add(-1 << 32)); v>>32 == math.MaxUint32 && j+1 < r.sums {
			c[j+1].Add(-1)
		}
	}
}

// slotOf returns the slot of stripe s whose words are b.
func (r *counterRing) slotOf(s int, b []atomic.Int64) int {
	st := r.stripes[s].Load()
	for i := range r.slots {
		if &st.words[i*r.words] == &b[0] {
			return i
		}
	}
	panic("metricsstream: words of no slot")
}

// nonZero returns the set of the words of adds that are not zero, for add.
func nonZero(adds []uint64) (words uint32) {
	for w, v := range adds {
		if v != 0 {
			words |= 1 << w
		}
	}
	return words
}

// raise raises max m (0 is the first max) of bucket n, in stripe s, to v.
func (r *counterRing) raise(n int64, s stripe, m int, v int64) {
	if b := r.bucket(n, s); b != nil {
		s.raiseWord(&b[r.sumWords+m], v)
	}
}

// bucket returns the words of bucket n in stripe s, recycling the slot if
// it holds an older bucket. It returns nil if the slot holds a newer
// bucket already: the caller is so late that bucket n has left the ring.
func (r *counterRing) bucket(n int64, s stripe) []atomic.Int64 {
	st := r.stripe(s.index)
	i := int(n) & (r.slots - 1)
	if st.gens[i].Load() != n && !r.recycle(st, i, n, s) {
		return nil
	}
	return st.words[i*r.words : (i+1)*r.words]
}

// recycle makes slot i of st, stripe s, hold bucket n: if it holds an
// older bucket, it folds the slot's sums and their carries into the
// totals, clears them and publishes n. It reports false if the slot holds
// a newer bucket.
func (r *counterRing) recycle(st *counterStripe, i int, n int64, s stripe) bool {
	if r.totals != nil {
		r.foldsStarted.Add(1) // readers of totals retry until foldsDone catches up
		defer r.foldsDone.Add(1)
	}
	found, old := st.gens.claim(i, n, s.shared)
	if found != slotClaimed {
		return found == slotHeld
	}
	var folded [maxRingCounters + 1]int64 // the sums, two per word
	w := st.words[i*r.words : (i+1)*r.words]
	for j := range w {
		v := uint64(w[j].Swap(0))
		if j < r.sumWords {
			folded[2*j] += int64(uint32(v))
			folded[2*j+1] += int64(v >> 32)
		}
	}
	// Only the claimer swaps the carries, as the words: a wrap that an
	// add spills meanwhile counts either here or in bucket n, once.
	c := r.carriesOf(s.index, i)
	for j := range c {
		folded[j] += c[j].Swap(0) << 32
	}
	if r.totals != nil && old >= 0 {
		for j := range r.totals {
			if folded[j] != 0 {
				r.totals[j].Add(folded[j])
			}
		}
	}
	st.gens.publish(i, n, &r.newest)
	return true
}

// stripe returns stripe s, allocating it on first use.
func (r *counterRing) stripe(s int) *counterStripe {
	if st := r.stripes[s].Load(); st != nil {
		return st
	}
	st := &counterStripe{gens: newSlotGens(r.slots), words: make([]atomic.Int64, r.slots*r.words)}
	r.stripes[s].CompareAndSwap(nil, st)
	return r.stripes[s].Load()
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

// emptyFrom reports whether bucket n and every later bucket are empty:
// no stripe holds a count in a slot of bucket n or later. It reads every
// slot, not only those of the buckets up to newest, because a recorder
// may count in a slot it found already claimed before the claimer raised
// newest.
func (r *counterRing) emptyFrom(n int64) bool {
	n = max(n, 0)
	for s := range r.stripes {
		st := r.stripes[s].Load()
		if st == nil {
			continue
		}
		for i := range st.gens {
			if st.gens[i].Load() < n {
				continue
			}
			w := st.words[i*r.words : (i+1)*r.words]
			for j := range w {
				if w[j].Load() != 0 {
					return false
				}
			}
			c := r.carriesOf(s, i)
			for j := range c {
				if c[j].Load() != 0 {
					return false
				}
			}
		}
	}
	return true
}

// readSlot sets dst (of length counters) to bucket n of slot i, summed or
// maxed over the stripes that hold it, and reports whether none of them
// recycled it meanwhile.
func (r *counterRing) readSlot(i int, n int64, dst []int64) bool {
	clear(dst)
	for s := range r.stripes {
		st := r.stripes[s].Load()
		if st == nil || st.gens[i].Load() != n {
			continue
		}
		r.accumulate(st.words[i*r.words:(i+1)*r.words], r.carriesOf(s, i), dst)
		if st.gens[i].Load() != n {
			return false
		}
	}
	return true
}

// accumulate adds the sums of bucket words w, with their carries (nil
// when none), into dst and raises its maxes.
func (r *counterRing) accumulate(w, carries []atomic.Int64, dst []int64) {
	for j := range r.sums {
		dst[j] += sumOf(w, carries, j)
	}
	for m := range r.words - r.sumWords {
		dst[r.sums+m] = max(dst[r.sums+m], w[r.sumWords+m].Load())
	}
}

// sumsInto adds into dst[j] sum counter j of the closed buckets of the
// rolling value at bucket now.
func (r *counterRing) sumsInto(now int64, dst []int64) {
	var buf [maxRingCounters]int64
	vals := buf[:r.counters()]
	for n := max(now-int64(r.size), 0); n < now; n++ {
		if r.readSlot(int(n)&(r.slots-1), n, vals) {
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
		if r.readSlot(int(n)&(r.slots-1), n, vals) {
			v = max(v, vals[r.sums+m])
		}
	}
	return v
}

// totalsInto sets dst[j] to the running total of sum counter j up to the
// last closed bucket at bucket now: the totals folded from recycled slots
// plus the closed buckets still in the rings.
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
		for s := range r.stripes {
			st := r.stripes[s].Load()
			if st == nil {
				continue
			}
			for i := range st.gens {
				n := st.gens[i].Load()
				if n < 0 || n >= now {
					continue
				}
				clear(vals)
				r.accumulate(st.words[i*r.words:(i+1)*r.words], r.carriesOf(s, i), vals)
				for j := range dst {
					dst[j] += vals[j]
				}
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
