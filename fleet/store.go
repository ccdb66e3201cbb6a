package fleet

import (
	"context"
	"time"
)

// counts are the health counts of one bucket: executions that count for
// health, errors and slow calls among them.
type counts struct{ total, errors, slow int64 }

func (c counts) add(o counts) counts {
	return counts{c.total + o.total, c.errors + o.errors, c.slow + o.slow}
}

// bucketWrite is one of this instance's closed buckets, by its fleet
// index (see bucketIndex).
type bucketWrite struct {
	index  int64
	counts counts
	expiry time.Duration // how long the bucket lives from now, at least
	// again says that the store held this instance's counts of the
	// bucket after its latest successful exchange: a write that finds
	// none means the store lost them since (see reading.lost).
	again bool
}

// exchange is one round with the store: this instance's new buckets go
// in, the other instances' buckets of the window come out.
type exchange struct {
	key      string        // the command key
	instance string        // who writes; its own buckets are not read back
	interval time.Duration // the bucket width, part of a bucket's name
	from     int64         // the first bucket read
	buckets  int           // how many are read: from, from+1, ...
	writes   []bucketWrite // each within the buckets read
	// marked says that this instance's latest exchange succeeded, so
	// the store holds its mark, which every exchange writes, traffic or
	// not: an exchange that finds none means the store lost it since
	// (see reading.lost), even for an instance that writes no bucket.
	marked bool
}

// markExpiry is how long an instance's mark lives from an exchange: a
// few intervals, so that it outlives the next exchange and expires soon
// after the instance stops.
func (x *exchange) markExpiry() time.Duration {
	return time.Duration(x.buckets+1) * x.interval
}

// reading is what an exchange brings back.
type reading struct {
	// others holds, for each bucket read, the sum of the other
	// instances' counts in it.
	others []counts
	// instances is how many other instances wrote to those buckets.
	instances int
	// corrupt is how many of the other instances' values in those
	// buckets the store skipped: not three counts, or more errors or
	// slow calls than executions.
	corrupt int
	// storeTime is the store's clock during the exchange.
	storeTime time.Time
	// lost says that a write marked again found no counts of this
	// instance in its bucket, or that an exchange marked found no mark
	// of this instance: the store lost buckets (restarted empty, failed
	// over to a replica behind, evicted them) since this instance's
	// latest successful exchange.
	lost bool
}

// store is where the instances of a fleet meet: Redis (redisStore), or a
// map in the tests.
type store interface {
	exchange(ctx context.Context, x exchange) (reading, error)
}
