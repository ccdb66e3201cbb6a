package command

// growStack makes the calling goroutine's stack large enough for an
// execution's conclusion while little is on it. The goroutines that run a
// subscription's execution (a pool worker; the goroutine Queue and
// Observe start under semaphore isolation) start with the runtime's
// smallest stack, which concluding the execution (its Completion into the
// striped buckets, the subscriber told) outgrows. Growing a stack copies
// it and adjusts every frame on it, looking up each frame's stack map, so
// the fewer frames the cheaper: a pool worker grows first thing, when its
// task is a subscription's (see workOnPool). In A/Bs of alternating
// rounds, with one caller: grown before run rather than deep in the
// conclusion, bench/peers rxhystrix-pool-queue 4.4 µs to 3.8 µs,
// rxhystrix-pool-observe 4.6 µs to 4.1 µs, and a semaphore-isolated
// Queue(...).Get with a 1 s timeout 4.4 µs to 3.8 µs; grown by the worker
// first thing rather than before run, four frames deeper,
// rxhystrix-pool-queue 3.5 µs to 2.9 µs and rxhystrix-pool-observe 3.6
// µs to 3.1 µs (no change with 75 callers). A goroutine whose stack is
// large already pays the zeroing of the frame, some tens of nanoseconds.
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
