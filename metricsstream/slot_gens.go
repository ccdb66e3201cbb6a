package metricsstream

import (
	"runtime"
	"sync/atomic"
)

// slotGens holds the generation of each slot of one stripe's ring (see
// counterRing and latencyRing): the bucket the slot holds, genEmpty or
// genClaiming. A recorder that finds its slot holding an older bucket
// claims it, clears it and publishes its own bucket; readers check a
// slot's generation before and after reading it.
type slotGens []atomic.Int64

func newSlotGens(n int) slotGens {
	g := make(slotGens, n)
	for i := range g {
		g[i].Store(genEmpty)
	}
	return g
}

// What claim found.
const (
	slotHeld    = iota // the slot holds the bucket
	slotLate           // the slot holds a newer bucket: the caller is so late that its bucket has left the ring
	slotClaimed        // the caller claimed the slot from an older bucket, to clear it and publish
)

// claim makes a recorder's slot i ready for bucket n. In a shared stripe
// several recorders may race for the slot: one claims it with a
// compare-and-swap while the others wait the few stores it takes to clear
// it. A pinned recorder of an exclusive stripe never waits: nobody else
// writes there. For slotClaimed it returns the bucket the slot held.
func (g slotGens) claim(i int, n int64, shared bool) (found int, old int64) {
	gen := &g[i]
	for {
		o := gen.Load()
		switch {
		case o == n:
			return slotHeld, 0
		case o == genClaiming:
			runtime.Gosched() // only in a shared stripe, whose recorders are not pinned
		case o > n:
			return slotLate, 0
		case !shared:
			gen.Store(genClaiming)
			return slotClaimed, o
		case gen.CompareAndSwap(o, genClaiming):
			return slotClaimed, o
		}
	}
}

// publish ends a claim: slot i holds bucket n, and newest, the newest
// bucket a slot of the ring was claimed for, is at least n.
func (g slotGens) publish(i int, n int64, newest *atomic.Int64) {
	g[i].Store(n)
	storeMax(newest, n)
}
