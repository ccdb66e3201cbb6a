package command

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/rxhystrix/rxhystrix/internal/clock"
)

// Why a pool caller wakes.
type wakeReason uint8

const (
	wakeDone   wakeReason = iota // run returned in time
	wakeTimeUp                   // the timeout passed first
	wakeLeft                     // the caller's context ended first (until's answer only)
)

// callWait is what a pool caller waits on: one channel, to which its
// worker sends wakeDone when run returned in time and its timeout timer
// wakeTimeUp, and the timer. It is made with its poolCall and kept across
// the call's uses, and so is the timer, which a caller whose run returned
// in time leaves armed: a later caller whose deadline is no earlier
// leaves it alone; when it fires, it times out the caller then waiting if
// its deadline has passed, and else re-arms itself at that deadline. An
// armed timer keeps its callWait reachable until it fires, at most one
// timeout after the call's last use; the callWait holds nothing of the
// call, so that the call and its command can go before.
type callWait struct {
	clock     clock.Clock
	wake      chan wakeReason // buffered 2: the worker and the timer send at most once per wait
	mu        sync.Mutex      // held to arm the timer and when it fires
	timer     clock.Timer     // an AfterFunc, made by the first arm
	armedFor  atomic.Int64    // when the timer fires (unix ns); 0 if not armed
	waitUntil atomic.Int64    // the waiting caller's deadline (unix ns); 0 if none
}

func newCallWait(c clock.Clock) *callWait {
	return &callWait{clock: c, wake: make(chan wakeReason, 2)}
}

// until waits for the run to be done, for the clock to reach d (Unix
// nanoseconds) or for left to be closed (nil: never), and says which came
// first. A caller that left or timed out and later takes the worker's
// wakeDone does so in abandon's callDone case.
//
// The caller blocks on one channel, to which the worker and the timer
// each send at most once per wait: it parks and is woken on its own
// processor, as a receive from the worker alone would, where a select on
// the worker and a timer channel, or a yield, costs a trip through the
// scheduler's shared queues. And it touches the timer only when the timer
// would fire after deadline or not at all: with one timeout, the deadlines
// of a call's successive uses only grow, so the timer is armed about once
// per timeout, not once per run, and adds nothing to the runtime's timer
// heaps on the way.
func (w *callWait) until(d int64, left <-chan struct{}) wakeReason {
	// Publishing the deadline before reading armedFor pairs with the
	// timer's clearing armedFor before it reads waitUntil: either the
	// caller sees the timer unarmed and arms it, or the timer sees the
	// deadline.
	w.waitUntil.Store(d)
	if a := w.armedFor.Load(); (a == 0 || a > d) && w.arm(d) {
		// The deadline has passed already; a manual clock fires a timer set
		// to a time it reads only when it next moves.
		if w.waitUntil.CompareAndSwap(d, 0) {
			select {
			case <-w.wake:
				return wakeDone
			default:
				return wakeTimeUp
			}
		}
	}
	var r wakeReason
	if left == nil {
		r = <-w.wake
	} else {
		select {
		case r = <-w.wake:
		case <-left:
			if w.waitUntil.CompareAndSwap(d, 0) {
				return wakeLeft // the timer sends nothing now
			}
			// The timer timed the caller out meanwhile: its wakeTimeUp
			// comes, after the worker's wakeDone if that came first.
			if r = <-w.wake; r == wakeDone {
				<-w.wake
			}
			return r
		}
	}
	if r == wakeTimeUp {
		return wakeTimeUp
	}
	if !w.waitUntil.CompareAndSwap(d, 0) {
		<-w.wake // the timer timed the caller out as the run returned
	}
	return wakeDone
}

// arm sets the timer to fire at d (unix ns) unless it is set to fire no
// later, and reports whether the clock reads d already.
func (w *callWait) arm(d int64) (reached bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	c := w.clock
	if w.timer == nil {
		w.timer = c.AfterFunc(time.Hour, w.timeUp)
	}
	if a := w.armedFor.Load(); a != 0 && a <= d {
		return false
	}
	w.armedFor.Store(d)
	return clock.ResetAt(c, w.timer, time.Unix(0, d))
}

// timeUp is the caller's timer firing: it times out the waiting caller if
// its deadline has passed, re-arms itself at that deadline if not, and
// stays unarmed if no caller waits.
func (w *callWait) timeUp() {
	c := w.clock
	w.mu.Lock()
	w.armedFor.Store(0)
	d := w.waitUntil.Load()
	late := d != 0 && clock.UnixNano(c) >= d
	if d != 0 && !late {
		w.armedFor.Store(d)
		late = clock.ResetAt(c, w.timer, time.Unix(0, d))
	}
	w.mu.Unlock()
	if late && w.waitUntil.CompareAndSwap(d, 0) {
		w.wake <- wakeTimeUp
	}
}
