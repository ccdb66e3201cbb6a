// Package proc tells a goroutine which processor (the runtime's P) it runs
// on, so that hot counters can be kept per processor: recorders on
// different processors then write to different cache lines, and readers
// sum the copies.
//
// The number is a hint. The goroutine may move to another processor as
// soon as ID returns; a counter kept per processor must stay correct (if
// slower) when two goroutines use the same copy.
package proc

import (
	"runtime"
	_ "unsafe" // for go:linkname
)

// The runtime exports these two to packages outside the standard library
// on purpose (go.dev/issue/67401): they pin the goroutine to its processor
// and return the processor's number, the way sync.Pool finds its
// per-processor cache. Pinning costs an increment; a sync.Pool round trip,
// the portable way to learn as much, costs about ten times more.

//go:linkname procPin runtime.procPin
func procPin() int

//go:linkname procUnpin runtime.procUnpin
func procUnpin()

// ID returns the number of the processor the calling goroutine runs on, in
// [0, runtime.GOMAXPROCS(0)) at the time of the call.
func ID() int {
	id := procPin()
	procUnpin()
	return id
}

// Slots returns the number of per-processor copies worth keeping, at most
// limit: GOMAXPROCS rounded up to a power of two, or the largest power of
// two within limit, so that ID()&(Slots-1) picks a copy. A later rise of
// GOMAXPROCS makes processors share copies, which costs speed, not
// correctness.
func Slots(limit int) int {
	n := 1
	for n < runtime.GOMAXPROCS(0) && n*2 <= limit {
		n <<= 1
	}
	return n
}

// Pin returns the number of the processor the calling goroutine runs on
// and keeps the goroutine there, unpreemptible, until Unpin: no other
// goroutine runs on that processor meanwhile, so state kept per processor
// may be updated with plain loads and stores. The code between Pin and
// Unpin must be short and must not block, sleep, yield or start
// goroutines.
func Pin() int { return procPin() }

// Unpin ends a Pin.
func Unpin() { procUnpin() }
