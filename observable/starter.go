package observable

import (
	"runtime"
	"sync/atomic"
	"time"

	"github.com/rxhystrix/rxhystrix/internal/proc"
	"github.com/rxhystrix/rxhystrix/internal/startgrace"
)

// Work that ToFuture or ReplayNow hand over (see unstarted) is not given
// a goroutine at once. It waits in a list of its processor's for a
// grace (startgrace.Get), in which a waiter may take it over; then the
// starter gives a goroutine to what nobody took. A waiter that cannot
// take the work over, and needs it running, starts it at once
// (unstarted.expedite).
//
// A go statement per Future cost more than the execution it started
// (bench/peers rxhystrix-semaphore-queue: Execute 140 ns, the go
// statement and the goroutine that found its work taken about 400 ns),
// and most of those goroutines found nothing to do; a push onto a list
// of the caller's processor costs one uncontended compare-and-swap, and
// one starter goroutine serves every Future handed over during its
// grace.
//
// The starter pauses by yielding rather than with a timer, because a
// timer shorter than a millisecond fires about a millisecond late on an
// idle machine (the runtime's poller waits in whole milliseconds): work
// nobody waits for starts within microseconds, as a go statement's
// would. Yielding keeps a processor busy, though, so the starter yields
// only while it holds work to start: while everything handed over is
// taken over, as when each Queue is followed by its Get, it sleeps
// idleGrace between rounds, and work that comes meanwhile may wait
// that long unless a waiter takes it. A take-over starts the work
// pushed on its processor after its own first (startNewer): a caller
// that queued several executions and then waits for the first has the
// others running meanwhile.

// The grace itself, and why it is what it is, live in internal/startgrace,
// so that the tests of the packages built on this one can hold starts too.

// idleGrace is how long the starter sleeps after a round that found
// nothing to start while work kept coming.
const idleGrace = time.Millisecond

func init() {
	starts.shards = make([]startShard, proc.Slots(64))
}

// pendingStart is handed-over work, linked into its processor's list.
type pendingStart struct {
	next  *pendingStart // set before the push, and not changed after
	shard int32         // the list it is in
	work  interface {
		startIfUntaken()
		taken() bool
	}
}

// startShard is one processor's list of pending starts, a stack pushed
// by compare-and-swap and emptied whole by the starter, on a cache line
// of its own.
type startShard struct {
	head atomic.Pointer[pendingStart]
	_    [56]byte
}

var starts struct {
	shards  []startShard
	running atomic.Bool // a starter goroutine is on duty
	// pushed is set by a push, and cleared by the starter at each round:
	// a starter that finds it clear after a round with nothing to start
	// leaves (work taken over leaves its list, so an empty list does not
	// mean that nothing is coming).
	pushed atomic.Bool
}

// deferStart puts p in its processor's list and makes sure a starter is
// on duty.
func deferStart(p *pendingStart) {
	i := proc.ID() & (len(starts.shards) - 1)
	p.shard = int32(i)
	sh := &starts.shards[i]
	for {
		head := sh.head.Load()
		p.next = head
		if sh.head.CompareAndSwap(head, p) {
			break
		}
	}
	if !starts.pushed.Load() {
		starts.pushed.Store(true)
	}
	if !starts.running.Load() && starts.running.CompareAndSwap(false, true) {
		go runStarter()
	}
}

// withdrawStart takes p out of its list if it is still at its head, as
// it is when a take-over follows its push on the same processor, so that
// the starter has nothing to visit (bench/peers rxhystrix-semaphore-queue
// with 75 callers, where the starter's visits took processor time from
// the callers), and reports whether it did. It is the only removal but
// the starter's: p.next is still what it was pushed with while p is at
// the head.
func withdrawStart(p *pendingStart) bool {
	return starts.shards[p.shard].head.CompareAndSwap(p, p.next)
}

// startNewer starts the work pushed onto p's list after p, down to p or
// to the end of the list if the starter has taken p already.
func startNewer(p *pendingStart) {
	for q := starts.shards[p.shard].head.Load(); q != nil && q != p; q = q.next {
		q.work.startIfUntaken()
	}
}

// runStarter gives the pending starts their grace and starts what nobody
// took over meanwhile, round after round, until a round finds nothing
// pushed and nothing pending. Each start waits at least the grace and at
// most about twice that, or idleGrace after a round that had nothing to
// start.
func runStarter() {
	var taken [64]*pendingStart
	for {
		starts.pushed.Store(false)
		lists := taken[:takePendingStarts(taken[:])]
		if anyUntaken(lists) {
			pause()
			for _, p := range lists {
				for ; p != nil; p = p.next {
					p.work.startIfUntaken()
				}
			}
		} else {
			time.Sleep(idleGrace)
		}
		clear(lists)
		if starts.pushed.Load() || anyPendingStart() {
			continue
		}
		// A push that found the starter on duty is pending now, and
		// seen below; one after Store starts a starter of its own.
		starts.running.Store(false)
		if !anyPendingStart() || !starts.running.CompareAndSwap(false, true) {
			return
		}
	}
}

// anyUntaken reports whether any start in lists is still to be made.
func anyUntaken(lists []*pendingStart) bool {
	for _, p := range lists {
		for ; p != nil; p = p.next {
			if !p.work.taken() {
				return true
			}
		}
	}
	return false
}

// takePendingStarts empties every processor's list into lists, and
// returns how many of lists it filled.
func takePendingStarts(lists []*pendingStart) int {
	n := 0
	for i := range starts.shards {
		if p := starts.shards[i].head.Swap(nil); p != nil {
			lists[n] = p
			n++
		}
	}
	return n
}

func anyPendingStart() bool {
	for i := range starts.shards {
		if starts.shards[i].head.Load() != nil {
			return true
		}
	}
	return false
}

// pause lets the grace pass, yielding the processor meanwhile.
func pause() {
	for t := time.Now(); time.Since(t) < startgrace.Get(); {
		runtime.Gosched()
	}
}
