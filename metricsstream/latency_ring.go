package metricsstream

import (
	"sync/atomic"
	"time"
)

// latencySlot is one bucket of the latency window in one stripe: its
// histograms, allocated when the first latency arrives.
type latencySlot struct {
	histograms atomic.Pointer[histogram]
}

// latencyStripe is the ring of one stripe (see stripe).
type latencyStripe struct {
	gens  slotGens
	slots []latencySlot
}

// latencyRing is the ring of latency buckets of a percentile window, per
// stripe, with the same recycling as counterRing. A recycled slot keeps
// its histograms and their chunks, zeroed, so a busy key stops allocating
// once its latencies have been seen.
type latencyRing struct {
	window
	slots   int // per stripe: ringLen
	stripes []atomic.Pointer[latencyStripe]
	newest  atomic.Int64 // the newest bucket a slot was claimed for
}

func newLatencyRing(epoch time.Time, width time.Duration, size int) *latencyRing {
	r := &latencyRing{window: window{epoch: epoch, width: width, size: size}}
	r.slots = r.ringLen()
	r.stripes = make([]atomic.Pointer[latencyStripe], stripeCount)
	r.newest.Store(genEmpty)
	return r
}

// bucketForSince returns the bucket of the time since after the time the
// ring's owner measures from (see window.bucketSince), without dividing
// when it falls in the newest bucket.
func (r *latencyRing) bucketForSince(since time.Duration) int64 {
	return r.bucketSince(since, r.newest.Load())
}

// record counts, in stripe s, the latencies of an execution that ended in
// bucket n; a negative latency is not counted.
func (r *latencyRing) record(n int64, s stripe, execution, total time.Duration) {
	slot := r.slot(n, s)
	if slot == nil {
		return
	}
	loadOrNew(&slot.histograms).record(execution, total)
}

// slot returns the slot of bucket n in stripe s, as counterRing.bucket:
// a slot recycled for n keeps its histograms, cleared.
func (r *latencyRing) slot(n int64, s stripe) *latencySlot {
	st := r.stripe(s.index)
	i := int(n) & (r.slots - 1)
	slot := &st.slots[i]
	if st.gens[i].Load() == n {
		return slot
	}
	switch found, _ := st.gens.claim(i, n, s.shared); found {
	case slotLate:
		return nil
	case slotClaimed:
		if h := slot.histograms.Load(); h != nil {
			h.clear()
		}
		st.gens.publish(i, n, &r.newest)
	}
	return slot
}

// stripe returns stripe s, allocating it on first use.
func (r *latencyRing) stripe(s int) *latencyStripe {
	if st := r.stripes[s].Load(); st != nil {
		return st
	}
	st := &latencyStripe{gens: newSlotGens(r.slots), slots: make([]latencySlot, r.slots)}
	r.stripes[s].CompareAndSwap(nil, st)
	return r.stripes[s].Load()
}

// heldSlot is a slot a reader found holding a bucket.
type heldSlot struct {
	gen *atomic.Int64
	n   int64
}

// histogramsOf appends the histograms of bucket n, in every stripe that
// holds it, to hs, and the slots they are in to held.
func (r *latencyRing) histogramsOf(n int64, hs []*histogram, held []heldSlot) ([]*histogram, []heldSlot) {
	i := int(n) & (r.slots - 1)
	for s := range r.stripes {
		st := r.stripes[s].Load()
		if st == nil || st.gens[i].Load() != n {
			continue
		}
		held = append(held, heldSlot{&st.gens[i], n})
		if h := st.slots[i].histograms.Load(); h != nil {
			hs = append(hs, h)
		}
	}
	return hs, held
}

// distributions merges the closed buckets of the window at bucket now.
func (r *latencyRing) distributions(now int64) (execution, total Distribution) {
	// A slot recycled while it is read (only possible for a reader
	// delayed by a whole ring) makes the merge start over.
	for range 3 {
		var hs []*histogram
		var held []heldSlot
		for n := max(now-int64(r.size), 0); n < now; n++ {
			hs, held = r.histogramsOf(n, hs, held)
		}
		execution, total = merge(hs, execHalf), merge(hs, totalHalf)
		if unchanged(held) {
			break
		}
	}
	return execution, total
}

// unchanged reports whether the slots still hold the buckets they held.
func unchanged(held []heldSlot) bool {
	for _, h := range held {
		if h.gen.Load() != h.n {
			return false
		}
	}
	return true
}

// merge returns the distribution of the sum of the counts of hs in half
// (execHalf or totalHalf) of their count words.
func merge(hs []*histogram, half uint) Distribution {
	var b distributionBuilder
	if len(hs) == 0 {
		return b.distribution()
	}
	var counts [histChunkLen]uint64
	for ci := range histChunks {
		seen := false
		for _, h := range hs {
			c := h.chunk(ci)
			if c == nil {
				continue
			}
			if !seen {
				counts = [histChunkLen]uint64{}
				seen = true
			}
			for j := range c {
				counts[j] += uint64(uint32(c[j].Load() >> half))
			}
			h.overflowInto(ci, half, &counts)
		}
		if seen {
			b.addChunk(ci, &counts)
		}
	}
	return b.distribution()
}

// loadOrNew returns *p, installing a new value first if it is nil.
func loadOrNew[T any](p *atomic.Pointer[T]) *T {
	if v := p.Load(); v != nil {
		return v
	}
	p.CompareAndSwap(nil, new(T))
	return p.Load()
}
