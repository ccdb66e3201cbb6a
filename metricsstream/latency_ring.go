package metricsstream

import (
	"runtime"
	"sync/atomic"
	"time"
)

// latencySlot is one bucket of the latency window: a histogram of the
// execution latencies and one of the total latencies, each allocated when
// the first latency arrives.
type latencySlot struct {
	execution, total atomic.Pointer[histogram]
}

// latencyRing is the ring of latency buckets of a percentile window, with
// the same lock-free claiming as counterRing. A recycled slot keeps its
// histograms and their chunks, zeroed, so a busy key stops allocating once
// its latencies have been seen.
type latencyRing struct {
	window
	gens   []atomic.Int64
	slots  []latencySlot
	newest atomic.Int64 // the newest bucket a slot was claimed for
}

func newLatencyRing(epoch time.Time, width time.Duration, size int) *latencyRing {
	r := &latencyRing{window: window{epoch: epoch, width: width, size: size}}
	r.gens = make([]atomic.Int64, r.ringLen())
	r.slots = make([]latencySlot, r.ringLen())
	for i := range r.gens {
		r.gens[i].Store(genEmpty)
	}
	r.newest.Store(genEmpty)
	return r
}

// record counts the latencies of an execution that ended at end; a
// negative latency is not counted.
func (r *latencyRing) record(end time.Time, execution, total time.Duration) {
	s := r.slot(r.bucketAtHint(end, r.newest.Load()))
	if s == nil {
		return
	}
	if execution >= 0 {
		loadOrNew(&s.execution).record(execution)
	}
	if total >= 0 {
		loadOrNew(&s.total).record(total)
	}
}

// slot returns the slot of bucket n, as counterRing.bucket.
func (r *latencyRing) slot(n int64) *latencySlot {
	i := int(n) & (len(r.gens) - 1)
	gen := &r.gens[i]
	for {
		g := gen.Load()
		switch {
		case g == n:
			return &r.slots[i]
		case g == genClaiming:
			runtime.Gosched()
		case g > n:
			return nil
		case gen.CompareAndSwap(g, genClaiming):
			s := &r.slots[i]
			if h := s.execution.Load(); h != nil {
				h.clear()
			}
			if h := s.total.Load(); h != nil {
				h.clear()
			}
			gen.Store(n)
			storeMax(&r.newest, n)
			return s
		}
	}
}

// distributions merges the closed buckets of the window at bucket now.
func (r *latencyRing) distributions(now int64) (execution, total Distribution) {
	// A slot recycled while it is read (only possible for a reader
	// delayed by a whole bucket) makes the merge start over.
	for range 3 {
		var exec, tot []*histogram
		var gens []int64
		for n := max(now-int64(r.size), 0); n < now; n++ {
			i := int(n) & (len(r.gens) - 1)
			if r.gens[i].Load() != n {
				continue
			}
			gens = append(gens, n)
			if h := r.slots[i].execution.Load(); h != nil {
				exec = append(exec, h)
			}
			if h := r.slots[i].total.Load(); h != nil {
				tot = append(tot, h)
			}
		}
		execution, total = merge(exec), merge(tot)
		if r.unchanged(gens) {
			break
		}
	}
	return execution, total
}

// unchanged reports whether the slots of buckets gens still hold them.
func (r *latencyRing) unchanged(gens []int64) bool {
	for _, n := range gens {
		if r.gens[int(n)&(len(r.gens)-1)].Load() != n {
			return false
		}
	}
	return true
}

// merge returns the distribution of the sum of hs.
func merge(hs []*histogram) Distribution {
	var b distributionBuilder
	if len(hs) == 0 {
		return b.distribution()
	}
	var counts [histChunkLen]uint64
	for ci := range histChunks {
		seen := false
		for _, h := range hs {
			c := h.chunks[ci].Load()
			if c == nil {
				continue
			}
			if !seen {
				counts = [histChunkLen]uint64{}
				seen = true
			}
			for j := range c {
				counts[j] += uint64(c[j].Load())
			}
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
