package metricsstream

import (
	"math/bits"
	"runtime"
	"unsafe"
)

// Counters are striped: each bucket keeps a copy of its counters per
// stripe, recorders add to the copy of their stripe, and readers sum the
// copies. Two processors adding to the same cache line make it bounce
// between them at several times the cost of the add; with stripes,
// recorders that run at once seldom share a line.
//
// A recorder's stripe comes from the address of its goroutine's stack: it
// costs a few instructions, stays the same for a goroutine (until its stack
// moves, which only changes the stripe it uses from then on), and spreads
// goroutines over the stripes. Which stripe a count lands in never
// matters for correctness.

// stripeCount is the number of stripes: four per processor (rounded up to
// a power of two), so that recorders running at once seldom share one, and
// at most 32, which bounds what the counters of a busy key cost.
var stripeCount = min(1<<bits.Len(uint(4*runtime.GOMAXPROCS(0)-1)), 32)

// stripeShift turns a 64-bit hash into a stripe number.
var stripeShift = 64 - bits.TrailingZeros(uint(stripeCount))

// stripeOf returns the stripe of the calling goroutine.
func stripeOf() int {
	var onStack byte
	// Goroutine stacks are at least 2 KiB apart; Fibonacci hashing spreads
	// neighbouring stacks over the stripes.
	a := uint64(uintptr(unsafe.Pointer(&onStack))) >> 11
	return int(a * 0x9E3779B97F4A7C15 >> stripeShift)
}
