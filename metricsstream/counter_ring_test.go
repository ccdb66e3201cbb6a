package metricsstream

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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

// A sum wraps past 32 bits into its carries, once, whatever adds come
// between an add and its spill. Word 0: its low half wraps and carries
// into a full high half, which wraps out of the word; another add then
// moves the high half from 0 to 1 before the first takes its carry back.
// Word 1: a low half wraps into a high half that is no counter. Every
// counter then ends at 2^32, every word at 0: the bucket is not empty.
// A fold takes the carries into the totals and clears them.
func TestCounterRingCountsBeyond32BitsPerBucketWhateverAddsInterleave(t *testing.T) {
	r := newCounterRing(t0, time.Second, 10, 3, 1, true)
	s := stripe{index: 0}
	b := r.bucket(0, s)
	assert.Zero(t, addWords(b, []uint64{math.MaxUint64, math.MaxUint32}, 0b11))
	wrapped := addWords(b, []uint64{1, 1}, 0b11)
	assert.Equal(t, uint32(0b0111), wrapped, "both halves of word 0, the low half of word 1")
	assert.Zero(t, addWords(b, []uint64{1 << 32}, 1))
	r.spill(s.index, b, wrapped)
	assert.Equal(t, int64(0), b[0].Load(), "a carry is taken back")
	assert.Equal(t, int64(0), b[1].Load(), "a carry is taken back")
	assert.False(t, r.emptyFrom(0))

	vals := make([]int64, r.counters())
	require.True(t, r.readSlot(0, 0, vals))
	want := []int64{math.MaxUint32 + 1, math.MaxUint32 + 1, math.MaxUint32 + 1}
	assert.Equal(t, append(want, 0), vals)

	newer := int64(r.slots) // reuses the slot of bucket 0
	r.bucket(newer, s)
	require.True(t, r.readSlot(0, newer, vals))
	assert.Equal(t, []int64{0, 0, 0, 0}, vals, "the carries leave the slot")
	assert.True(t, r.emptyFrom(newer))
	totals := make([]int64, 3)
	r.totalsInto(newer+1, totals)
	assert.Equal(t, want, totals, "the carries are folded once")
}

// An add that takes the low half of a word past 32 bits while its high
// half is full wraps the word; taking the low half's carry back then
// borrows from the word again, so that the high half has not wrapped.
func TestCounterRingCountsBeyond32BitsPerBucketWithAFullHighHalf(t *testing.T) {
	r := newCounterRing(t0, time.Second, 10, 2, 0, false)
	s := stripe{index: 0}
	b := r.bucket(0, s)
	adds := []uint64{math.MaxUint32 << 32}
	addWords(b, adds, 1)
	adds[0] = math.MaxUint32
	addWords(b, adds, 1)
	adds[0] = 2
	r.add(0, s, adds, 1)
	vals := make([]int64, r.counters())
	require.True(t, r.readSlot(0, 0, vals))
	assert.Equal(t, []int64{math.MaxUint32 + 2, math.MaxUint32}, vals)
}
