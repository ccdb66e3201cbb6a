package metricsstream

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// The sums of an add whose bucket has left the ring go into the totals of
// a ring that keeps them, every counter of the bucket, and nowhere in a
// ring that keeps none.
func TestCounterRingCountsAddsLaterThanTheRingInTotals(t *testing.T) {
	for _, keepTotals := range []bool{true, false} {
		r := newCounterRing(t0, time.Second, 10, 3, 1, keepTotals)
		s := stripe{index: 0}
		var adds [2]uint64
		addTo(adds[:], 0, 1)
		addTo(adds[:], 1, 2)
		addTo(adds[:], 2, 5) // the low half of a word whose high half is no counter
		newer := int64(r.slots)
		r.add(newer, s, adds[:], nonZero(adds[:]))
		r.add(0, s, adds[:], nonZero(adds[:])) // the slot of bucket 0 holds newer
		assert.Equal(t, int64(1), r.sum(newer+1, 0), "only the newer bucket is in the window")
		if keepTotals {
			var totals [3]int64
			r.totalsInto(newer+1, totals[:])
			assert.Equal(t, [3]int64{2, 4, 10}, totals)
		}
	}
}

// A ring holds at most maxRingCounters counters a bucket, sums and maxes
// together, and a ring that holds that many folds every sum into its
// totals.
func TestCounterRingHoldsAtMostMaxRingCounters(t *testing.T) {
	assert.PanicsWithValue(t, "metricsstream: too many counters per bucket",
		func() { newCounterRing(t0, time.Second, 10, maxRingCounters, 1, true) })
	assert.PanicsWithValue(t, "metricsstream: too many counters per bucket",
		func() { newCounterRing(t0, time.Second, 10, maxRingCounters+1, 0, true) })

	const sums = maxRingCounters - 1 // odd: the last word's high half is no counter
	r := newCounterRing(t0, time.Second, 10, sums, 1, true)
	s := stripe{index: 0}
	adds := make([]uint64, (sums+1)/2)
	for j := range sums {
		addTo(adds, j, int64(j+1))
	}
	r.add(0, s, adds, nonZero(adds))
	r.add(int64(r.slots), s, adds, nonZero(adds)) // bucket 0 leaves for the totals
	totals := make([]int64, sums)
	r.totalsInto(int64(r.slots)+1, totals)
	for j := range sums {
		assert.Equal(t, int64(2*(j+1)), totals[j], "counter %d", j)
	}
}
