package metricsstream

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// bucketAtHint agrees with bucketAt for a window whose epoch is its
// owner's, and for one whose epoch lies an offset after its owner's.
func TestBucketAtHintAgreesWithBucketAt(t *testing.T) {
	for _, offset := range []time.Duration{0, 250 * time.Millisecond} {
		w := window{epoch: t0, width: 700 * time.Millisecond, size: 10, offset: offset}
		rng := rand.New(rand.NewPCG(3, 4))
		for range 10000 {
			at := t0.Add(time.Duration(rng.Int64N(int64(time.Minute))) - time.Second)
			want := w.bucketAt(at)
			for _, hint := range []int64{want, want - 1, want + 1, 0, genEmpty, genClaiming, 1 << 40} {
				assert.Equal(t, want, w.bucketAtHint(at, hint), "offset=%v t=%v hint=%d", offset, at.Sub(t0), hint)
			}
		}
	}
	w := window{epoch: t0, width: 700 * time.Millisecond, size: 10}
	// Exactly on the boundaries.
	for n := range int64(5) {
		at := t0.Add(time.Duration(n) * w.width)
		assert.Equal(t, n, w.bucketAtHint(at, n))
		assert.Equal(t, n, w.bucketAtHint(at, n-1))
		assert.Equal(t, max(n-1, 0), w.bucketAtHint(at.Add(-1), n), "times before the epoch are in bucket 0")
	}
}

func TestRingLenIsAPowerOfTwoWithRoomToSpare(t *testing.T) {
	for size := 1; size < 100; size++ {
		n := (&window{size: size}).ringLen()
		assert.Zero(t, n&(n-1), "size %d: %d", size, n)
		assert.GreaterOrEqual(t, n, size+2, "size %d", size)
	}
}

// Running totals are folded from recycled slots: they must survive many
// trips around the ring, idle stretches included.
func TestCumulativeCountsAcrossManyRecycledBuckets(t *testing.T) {
	m, mc := newTestMetrics(t, Config{})
	want := int64(0)
	for i := range 50 {
		recordN(m, i%4, Success)
		want += int64(i % 4)
		mc.Advance(time.Second)
		assert.Equal(t, want, m.CumulativeCount(Success), "after bucket %d", i)
	}
	mc.Advance(time.Hour)
	record(m, Success) // recycles a slot that has held bucket 49 for an hour
	assert.Equal(t, want, m.CumulativeCount(Success))
	mc.Advance(time.Second)
	assert.Equal(t, want+1, m.CumulativeCount(Success))
	assert.Equal(t, int64(1), m.RollingCount(Success))
}

// Two counters share a word: a large count must not spill into its
// neighbour.
func TestPackedCountersStayApart(t *testing.T) {
	m, mc := newTestMetrics(t, Config{})
	var c Completion
	c.Events.Add(Emit, 1<<30)
	c.Events.Add(Success, 1)
	m.MarkCompletion(&c)
	m.MarkCompletion(&c)
	mc.Advance(time.Second)
	assert.Equal(t, int64(1<<31), m.RollingCount(Emit))
	assert.Equal(t, int64(2), m.RollingCount(Success))
	mc.Advance(20 * time.Second)
	assert.Equal(t, int64(1<<31), m.CumulativeCount(Emit))
	assert.Equal(t, int64(2), m.CumulativeCount(Success))
}
