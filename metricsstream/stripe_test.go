package metricsstream

import (
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPinStripeIsInRange(t *testing.T) {
	assert.Zero(t, exclusiveStripes&(exclusiveStripes-1), "a power of two")
	assert.Equal(t, exclusiveStripes+sharedStripes, stripeCount)
	for range 100 {
		s := pinStripe()
		s.unpin()
		if s.shared {
			assert.True(t, s.index >= exclusiveStripes && s.index < stripeCount, "%+v", s)
		} else {
			assert.True(t, s.index >= 0 && s.index < exclusiveStripes, "%+v", s)
		}
	}
}

// Recorders in a shared stripe add atomically: none of their counts is
// lost, whatever the interleaving, and the bucket they recycle together is
// cleared once.
func TestSharedStripeCountsEveryAdd(t *testing.T) {
	r := newCounterRing(t0, time.Second, 10, 2, 1, true)
	shared := stripe{index: exclusiveStripes, shared: true}
	const goroutines, adds = 8, 2000
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range adds {
				n := int64(i / 500) // four buckets, recycled by whoever comes first
				r.add(n, shared, []uint64{1 | 2<<32}, 1)
				r.raise(n, shared, 0, int64(g))
			}
		})
	}
	wg.Wait()
	var totals [2]int64
	r.totalsInto(100, totals[:])
	assert.Equal(t, [2]int64{goroutines * adds, 2 * goroutines * adds}, totals)
	assert.Equal(t, int64(goroutines-1), r.maxOf(4, 0))
}

// With more processors than exclusive stripes, recorders on the extra
// processors share stripes and those on the first own theirs: together
// they count every execution exactly.
func TestMoreProcessorsThanExclusiveStripesCountExactly(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(exclusiveStripes + 3))
	m, mc := newTestMetrics(t, Config{})
	const goroutines, each = 12, 3000
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			for range each {
				c := successCompletion(m.MarkStart(), time.Time{}, time.Millisecond)
				m.MarkCompletion(&c)
			}
		})
	}
	wg.Wait()
	require.Zero(t, m.ConcurrentExecutions())
	mc.Advance(time.Second) // close the bucket
	totals := m.CumulativeCounts()
	assert.Equal(t, int64(goroutines*each), totals[Success])
	assert.Equal(t, int64(goroutines*each), totals[Emit])
}
