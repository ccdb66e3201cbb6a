package command

// growStack makes the calling goroutine's stack large enough for an
// execution's conclusion while little is on it. The goroutines that run a
// subscription's execution (a pool worker; the goroutine Queue and
// Observe start under semaphore isolation) start with the runtime's
// smallest stack, which concluding the execution (its Completion into the
// striped buckets, the subscriber told) outgrows. Grown there, deep in the
// call, the runtime copies the stack and adjusts every frame on it; grown
// here, it adjusts a few. In A/Bs of alternating rounds, with one caller:
// bench/peers rxhystrix-pool-queue 4.4 µs to 3.8 µs, rxhystrix-pool-observe
// 4.6 µs to 4.1 µs, and a semaphore-isolated Queue(...).Get with a 1 s
// timeout 4.4 µs to 3.8 µs. A goroutine whose stack is large already pays
// the zeroing of the frame, some tens of nanoseconds.
//
//go:noinline
func growStack() {
	var frame [2048]byte
	keepFrame(&frame)
}

// keepFrame keeps growStack's frame from being optimised away: not
// inlined, it may read it.
//
//go:noinline
func keepFrame(*[2048]byte) {}
