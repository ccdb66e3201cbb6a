package metricsstream

import (
	"runtime"
	"sync/atomic"

	"github.com/rxhystrix/rxhystrix/internal/proc"
)

// Counters and latency histograms are striped: each bucket keeps a copy of
// them per stripe, recorders write to the copy of their stripe, and
// readers sum the copies. Two processors adding to the same cache line
// make it bounce between them at several times the cost of the add; with
// stripes, recorders that run at once on different processors use
// different lines.
//
// The first exclusiveStripes processors (see package proc) each own a
// stripe. A recorder on one of them pins itself to its processor while it
// records (a few nanoseconds: it cannot be preempted meanwhile), so nobody
// else writes that stripe: its adds never contend, and it claims a slot
// for a new bucket with a store where a shared stripe needs a
// compare-and-swap. (The adds stay atomic, since readers on other
// processors load the words meanwhile; on amd64 an uncontended atomic add
// costs less than an atomic load and store.) Processors beyond those (on
// machines with more than eight, or after GOMAXPROCS grows) share the
// sharedStripes that follow.
//
// A stripe is allocated when its first recorder comes, so a key recorded
// from one processor costs one copy, and a key busy on every processor at
// most exclusiveStripes+sharedStripes copies. Which stripe a count lands in
// never matters for correctness.

// exclusiveStripes is the number of stripes owned by one processor each:
// GOMAXPROCS at start rounded up to a power of two, at most 8.
var exclusiveStripes = proc.Slots(8)

// sharedStripes is the number of stripes shared by the processors beyond
// the exclusive ones: 8 on a machine that has them at start, else 1, for
// processors added later.
var sharedStripes = func() int {
	if runtime.GOMAXPROCS(0) > exclusiveStripes {
		return 8
	}
	return 1
}()

// stripeCount is the number of stripes of every counter ring and latency
// ring.
var stripeCount = exclusiveStripes + sharedStripes

// stripe is where a recorder writes: its index, and whether other
// processors write there too.
type stripe struct {
	index  int
	shared bool
}

// pinStripe returns the stripe of the calling goroutine's processor; for
// an exclusive stripe it pins the goroutine there until unpin.
func pinStripe() stripe {
	id := proc.Pin()
	if id < exclusiveStripes {
		return stripe{index: id}
	}
	proc.Unpin()
	return stripe{index: exclusiveStripes + id%sharedStripes, shared: true}
}

// unpin ends the pin of pinStripe.
func (s stripe) unpin() {
	if !s.shared {
		proc.Unpin()
	}
}

// raiseWord raises w to v if v is larger.
func (s stripe) raiseWord(w *atomic.Int64, v int64) {
	if s.shared {
		storeMax(w, v)
	} else if v > w.Load() {
		w.Store(v)
	}
}
