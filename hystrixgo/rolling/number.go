package rolling

import (
	"sync"
	"time"
)

// numberWindow is how many seconds of buckets a Number sums.
const numberWindow = 10

// Number is a value counted in one-second buckets, as hystrix-go's
// rolling.Number: Sum, Max and Avg read the buckets of the seconds from
// now-10 to now, both included, except those that a write has dropped: a
// write at second s drops the buckets of s-10 and before. So a Number
// written this second reads 10 buckets, and one not written yet this
// second reads 11. A Number is safe for concurrent use.
type Number struct {
	mu  sync.Mutex
	now func() time.Time
	// buckets[s%len] holds the second s, valid when secs matches.
	buckets [numberWindow + 1]float64
	secs    [numberWindow + 1]int64
	// written is the latest second a write was made in: the buckets of
	// written-10 and before are dropped.
	written int64
}

// NewNumber returns an empty Number on the real clock.
func NewNumber() *Number { return &Number{now: time.Now} }

// bucket returns the bucket of the current second, emptied if it last
// held an older one.
func (r *Number) bucket() *float64 {
	s := r.now().Unix()
	i := int(uint64(s) % uint64(len(r.buckets)))
	if r.secs[i] != s {
		r.secs[i], r.buckets[i] = s, 0
	}
	r.written = max(r.written, s)
	return &r.buckets[i]
}

// Increment adds i to the current second's bucket.
func (r *Number) Increment(i float64) {
	if i == 0 {
		return
	}
	r.mu.Lock()
	*r.bucket() += i
	r.mu.Unlock()
}

// UpdateMax raises the current second's bucket to n if n is larger.
func (r *Number) UpdateMax(n float64) {
	r.mu.Lock()
	if b := r.bucket(); n > *b {
		*b = n
	}
	r.mu.Unlock()
}

// each calls f with every bucket of the window up to now (see Number).
func (r *Number) each(now time.Time, f func(v float64)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	from := max(now.Unix()-numberWindow, r.written-numberWindow+1)
	for i, s := range r.secs {
		if s >= from && s <= now.Unix() && r.buckets[i] != 0 {
			f(r.buckets[i])
		}
	}
}

// Sum returns the sum of the buckets of the window up to now.
func (r *Number) Sum(now time.Time) float64 {
	var sum float64
	r.each(now, func(v float64) { sum += v })
	return sum
}

// Max returns the largest bucket of the window up to now.
func (r *Number) Max(now time.Time) float64 {
	var m float64
	r.each(now, func(v float64) { m = max(m, v) })
	return m
}

// Avg returns Sum(now) / 10, the mean per second over the window.
func (r *Number) Avg(now time.Time) float64 { return r.Sum(now) / numberWindow }
