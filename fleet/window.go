package fleet

import (
	"time"

	"github.com/rxhystrix/rxhystrix/metricsstream"
)

// Buckets are named by fleet index: the Unix time of their start divided
// by the health snapshot interval, rounded down. Every instance of the
// fleet names buckets so whatever its own bucket boundaries (which start
// when its metrics were made), so that one index means the same interval
// of wall-clock time on every instance whose clock is right.

// bucketIndex returns the fleet index of the bucket of width interval
// that holds t.
func bucketIndex(t time.Time, interval time.Duration) int64 {
	n := t.UnixNano()
	i := n / int64(interval)
	if n%int64(interval) < 0 {
		i--
	}
	return i
}

// view is what a source knows of health at one moment, and what it makes
// of it.
type view struct {
	local    []metricsstream.HealthBucket // this instance's closed buckets
	others   []counts                     // the other instances', per bucket from 'from'; nil without Redis
	from     int64                        // the fleet index of others[0]
	interval time.Duration                // the width of a bucket
	// resetAt is the time of the latest ResetStream: buckets, local or
	// others', that began before it do not count. The zero time counts
	// every bucket.
	resetAt time.Time
}

// counts reports whether a bucket that began at start counts: it began
// at the latest reset or later. One rule for this instance's buckets and
// the others', so that a reset on a bucket's boundary keeps or drops the
// bucket that begins there on every instance alike.
func (v *view) counts(start time.Time) bool { return !start.Before(v.resetAt) }

// localCounts returns the sum of this instance's buckets that count.
func (v *view) localCounts() counts {
	var c counts
	for _, b := range v.local {
		if v.counts(b.Start) {
			c = c.add(counts{b.Total, b.Errors, b.Slow})
		}
	}
	return c
}

// othersCounts returns the sum of the other instances' buckets that
// count.
func (v *view) othersCounts() counts {
	var c counts
	for i, o := range v.others {
		if v.counts(time.Unix(0, (v.from+int64(i))*int64(v.interval))) {
			c = c.add(o)
		}
	}
	return c
}

// health returns the snapshot the breaker is given: the fleet's sum, or
// this instance's own health when that trips the breaker and the fleet's
// does not, so that a fault only this instance sees (its own network,
// say) opens its breaker alone, as the local breaker would. Without a
// reading from Redis it is this instance's own health.
func (v *view) health(trips func(metricsstream.HealthCounts) bool) metricsstream.HealthCounts {
	lc := v.localCounts()
	local := metricsstream.HealthCountsOf(lc.total, lc.errors, lc.slow)
	if v.others == nil {
		return local
	}
	fc := lc.add(v.othersCounts())
	fleet := metricsstream.HealthCountsOf(fc.total, fc.errors, fc.slow)
	if !trips(fleet) && trips(local) {
		return local
	}
	return fleet
}
