package metricsstream

import (
	"math/bits"
	"runtime"
	"sync"
	"sync/atomic"
)

// Counters are striped: each bucket keeps a copy of its counters per
// stripe, recorders add to the copy of their stripe, and readers sum the
// copies. Two processors adding to the same cache line make it bounce
// between them at several times the cost of the add; with stripes,
// recorders that run at once on different processors use different lines.
//
// A recorder's stripe is the number of a token it takes from a sync.Pool
// and puts back at once. A sync.Pool keeps its values per processor, so a
// processor keeps using the same token, and so the same stripe, while
// tokens made for different processors have different numbers. (The
// address of the goroutine's stack is cheaper, but goroutines started
// together get stacks whose addresses hash alike, so they would share a
// stripe.) Which stripe a count lands in never matters for correctness.

// stripeCount is the number of stripes: four per processor (rounded up to
// a power of two), so that the tokens of processors seldom share a number
// even after the pool has dropped and remade some, and at most 32, which
// bounds what the counters of a busy key cost.
var stripeCount = min(1<<bits.Len(uint(4*runtime.GOMAXPROCS(0)-1)), 32)

// stripeToken is a stripe number held by one processor at a time.
type stripeToken struct{ n int }

var (
	nextStripe   atomic.Uint64
	stripeTokens = sync.Pool{New: func() any {
		return &stripeToken{n: int(nextStripe.Add(1)-1) & (stripeCount - 1)}
	}}
)

// stripeOf returns the stripe of the calling processor.
func stripeOf() int {
	t := stripeTokens.Get().(*stripeToken)
	n := t.n
	stripeTokens.Put(t)
	return n
}
