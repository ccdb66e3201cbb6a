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

// maxRingCounters bounds the counters per bucket of a counterRing, so that
// readers copy a bucket into an array on the stack.
const maxRingCounters = 24

// counterRing is a lock-free ring of buckets, each a fixed number of
// atomic int64 counters. Recording is an atomic load of the slot's
// generation and atomic adds; the first recorder of a new bucket clears
// the slot it recycles (a compare-and-swap, once per bucket). Nothing
// runs in the background: buckets close because time passes.
//
// Readers take only the closed buckets of a rolling value. They check a
// slot's generation before and after copying it, so a slot recycled under
// them (possible only for a reader delayed by a whole bucket) is skipped.
type counterRing struct {
	window
	perBucket int
	gens      []atomic.Int64 // the bucket each slot holds
	counts    []atomic.Int64 // slot i holds counts[i*perBucket : (i+1)*perBucket]
	newest    atomic.Int64   // the newest bucket a slot was claimed for
}

func newCounterRing(epoch time.Time, width time.Duration, size, perBucket int) *counterRing {
	if perBucket > maxRingCounters {
		panic("metricsstream: too many counters per bucket")
	}
	r := &counterRing{window: window{epoch: epoch, width: width, size: size}, perBucket: perBucket}
	n := r.ringLen()
	r.gens = make([]atomic.Int64, n)
	r.counts = make([]atomic.Int64, n*perBucket)
	for i := range r.gens {
		r.gens[i].Store(genEmpty)
	}
	r.newest.Store(genEmpty)
	return r
}

// bucket returns the counters of bucket n, claiming and clearing the slot
// if it holds an older bucket. It returns nil if the slot already holds a
// newer bucket: the caller is so late that bucket n has left the ring.
func (r *counterRing) bucket(n int64) []atomic.Int64 {
	i := int(n % int64(len(r.gens)))
	gen := &r.gens[i]
	for {
		g := gen.Load()
		switch {
		case g == n:
			return r.counts[i*r.perBucket : (i+1)*r.perBucket]
		case g == genClaiming:
			runtime.Gosched() // another recorder is clearing it: a few stores
		case g > n:
			return nil
		case gen.CompareAndSwap(g, genClaiming):
			c := r.counts[i*r.perBucket : (i+1)*r.perBucket]
			for j := range c {
				c[j].Store(0)
			}
			gen.Store(n)
			storeMax(&r.newest, n)
			return c
		}
	}
}

// bucketAtTime returns the counters of the bucket holding t (see bucket).
func (r *counterRing) bucketAtTime(t time.Time) []atomic.Int64 { return r.bucket(r.bucketAt(t)) }

// read calls f with a copy of each closed bucket of the rolling value at
// bucket now, oldest first. Buckets nobody recorded into are skipped.
func (r *counterRing) read(now int64, f func(counts []int64)) {
	var buf [maxRingCounters]int64
	vals := buf[:r.perBucket]
	for n := max(now-int64(r.size), 0); n < now; n++ {
		if r.copyBucket(n, vals) {
			f(vals)
		}
	}
}

// copyBucket copies bucket n into dst if a slot holds it, and reports
// whether it did.
func (r *counterRing) copyBucket(n int64, dst []int64) bool {
	i := int(n % int64(len(r.gens)))
	if r.gens[i].Load() != n {
		return false
	}
	src := r.counts[i*r.perBucket : (i+1)*r.perBucket]
	for j := range dst {
		dst[j] = src[j].Load()
	}
	return r.gens[i].Load() == n
}

// inProgress adds into dst the counters of the buckets not yet closed at
// bucket now: now itself and the one after it (see window.ringLen).
func (r *counterRing) inProgress(now int64, dst []int64) {
	var buf [maxRingCounters]int64
	vals := buf[:r.perBucket]
	for n := now; n <= now+1; n++ {
		if r.copyBucket(n, vals) {
			for j, v := range vals {
				dst[j] += v
			}
		}
	}
}

// sum returns the sum of counter j over the closed buckets at bucket now.
func (r *counterRing) sum(now int64, j int) int64 {
	var s int64
	r.read(now, func(c []int64) { s += c[j] })
	return s
}

// maxOf returns the maximum of counter j over the closed buckets at bucket
// now.
func (r *counterRing) maxOf(now int64, j int) int64 {
	var m int64
	r.read(now, func(c []int64) { m = max(m, c[j]) })
	return m
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
