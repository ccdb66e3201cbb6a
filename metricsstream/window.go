package metricsstream

import (
	"math/bits"
	"time"
)

// window cuts time into buckets of a fixed width, numbered from 0 at the
// epoch. A rolling value at time t is made of the buckets
// [bucketAt(t)-size, bucketAt(t)-1]: the last size closed buckets; the
// bucket in progress is never part of it, as in Hystrix's
// BucketedRollingCounterStream, so rolling values change only at bucket
// boundaries.
type window struct {
	epoch time.Time
	width time.Duration
	size  int // closed buckets in a rolling value

	// offset is how long after the time its owner measures from (see
	// bucketSince) the epoch lies.
	offset time.Duration
}

// bucketAt returns the number of the bucket that holds t. Times before the
// epoch fall in bucket 0.
func (w *window) bucketAt(t time.Time) int64 {
	d := t.Sub(w.epoch)
	if d <= 0 {
		return 0
	}
	return int64(d / w.width)
}

// bucketAtHint is bucketAt for a caller that knows a recent bucket: when t
// falls in bucket hint, which is the common case for a recorder, it
// answers with a multiplication instead of a division.
func (w *window) bucketAtHint(t time.Time, hint int64) int64 {
	return w.bucketSince(t.Sub(w.epoch)+w.offset, hint)
}

// bucketSince is bucketAtHint for the time d after the time the window's
// owner measures from, which lies offset before the epoch: an owner with
// several windows reads the clock and subtracts once for all of them.
func (w *window) bucketSince(d time.Duration, hint int64) int64 {
	d -= w.offset
	if lo := time.Duration(hint) * w.width; hint >= 0 && d >= lo && d-lo < w.width {
		return hint
	}
	if d <= 0 {
		return 0
	}
	return int64(d / w.width)
}

// nextBoundary returns the first bucket boundary after t: when the bucket
// holding t closes.
func (w *window) nextBoundary(t time.Time) time.Time {
	return w.epoch.Add(time.Duration(w.bucketAt(t)+1) * w.width)
}

// ringLen is how many buckets a ring keeps for this window: a power of two
// (so that a bucket's slot is a mask, not a division) of at least the
// closed buckets of a rolling value, the one in progress, and one more for
// a recorder whose end time lies in the next bucket already (a clock read
// on another core a moment later). Claiming the slot of bucket n recycles
// bucket n-ringLen, which is outside every rolling value read at bucket
// n-1 or later.
func (w *window) ringLen() int { return 1 << bits.Len(uint(w.size+1)) }
