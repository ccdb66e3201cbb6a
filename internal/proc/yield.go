package proc

import (
	"math/rand/v2"
	"runtime"
)

// YieldSometimes yields the processor once in every calls on average.
//
// It is for a goroutine that has just started another one and goes on
// without blocking, or blocks only to be woken by it: a caller that hands
// runs to new goroutines (a pool's workers, the goroutine a Future starts)
// would otherwise keep its processor for a whole time slice while those
// goroutines pile up behind it. Yielding after every such call costs more
// than the call's hand-off; once in a few keeps the pile short. The
// callers say which benchmark rows fix their every.
func YieldSometimes(every uint32) {
	if rand.Uint32()%every == 0 {
		runtime.Gosched()
	}
}
