package command

import (
	"context"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rxhystrix/rxhystrix/internal/clock"
	"github.com/rxhystrix/rxhystrix/internal/ctxend"
)

// Why a pool caller wakes.
type wakeReason uint8

const (
	wakeDone   wakeReason = iota // run returned in time
	wakeTimeUp                   // the timeout passed first
	wakeLeft                     // the caller's context ended first (until's answer only)
)

// callWait is what a pool caller waits on: one channel, to which its
// worker sends wakeDone when run returned in time, its timeout timer
// wakeTimeUp and the end of its context wakeLeft, and the timer. It is
// made with its poolCall and kept across the call's uses, and so is the
// timer, which a caller whose run returned in time leaves armed: a later
// caller whose deadline is no earlier leaves it alone; when it fires, it
// times out the caller then waiting if its deadline has passed, and else
// re-arms itself at that deadline. An armed timer keeps its callWait
// reachable until it fires, at most one timeout after the call's last
// use; the callWait holds nothing of the call, so that the call and its
// command can go before.
type callWait struct {
	clock     clock.Clock
	wake      chan wakeReason // buffered 2: the worker, and the timer or leave, send at most once per wait
	mu        sync.Mutex      // held to arm the timer and when it fires
	timer     clock.Timer     // an AfterFunc, made by the first arm
	armedFor  atomic.Int64    // when the timer fires (unix ns); 0 if not armed
	waitUntil atomic.Int64    // the waiting caller's deadline (unix ns); 0 if none
	leaveFunc func()          // leave, made once: a context holds its address
	leftTold  atomic.Bool     // leave has run for the current wait
}

func newCallWait(c clock.Clock) *callWait {
	w := &callWait{clock: c, wake: make(chan wakeReason, 2)}
	w.leaveFunc = w.leave
	return w
}

// until waits for the run to be done, for the clock to reach d (Unix
// nanoseconds; math.MaxInt64, which it never reaches, arms no timer) or
// for ctx to end (nil: never), and says which came first. A caller that
// left or timed out and later takes the worker's wakeDone does so in
// abandon's callDone case.
//
// The caller blocks on one channel, to which the worker sends, and either
// the timer or the end of ctx, each at most once per wait: it parks and
// is woken on its own processor, as a receive from the worker alone
// would, where a select on the worker and a timer channel, or a yield,
// costs a trip through the scheduler's shared queues. A context of
// package observable (a Future's, when Get takes a Queue over) tells its
// end to leave through its one slot for that (ctxend), where asking for
// its Done channel would watch it (two allocations) and need a select:
// Queue(...).Get was 2.0× Execute that way, and is 1.5× this way, with
// one caller (bench/peers rxhystrix-pool-queue, -observe, -hedge). Any
// other context that can end is waited on through its Done channel,
// which costs less than context.AfterFunc (rxhystrix-pool-request).
//
// And it touches the timer only when the timer would fire after deadline
// or not at all: with one timeout, the deadlines of a call's successive
// uses only grow, so the timer is armed about once per timeout, not once
// per run, and adds nothing to the runtime's timer heaps on the way.
func (w *callWait) until(d int64, ctx context.Context) wakeReason {
	// Publishing the deadline before reading armedFor pairs with the
	// timer's clearing armedFor before it reads waitUntil: either the
	// caller sees the timer unarmed and arms it, or the timer sees the
	// deadline.
	w.waitUntil.Store(d)
	if a := w.armedFor.Load(); d != math.MaxInt64 && (a == 0 || a > d) && w.arm(d) {
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
	var left <-chan struct{}
	n, notified := ctx.(ctxend.Notifier)
	if notified {
		w.leftTold.Store(false)
		notified = n.NotifyEnd(&w.leaveFunc)
	}
	if !notified && ctx != nil {
		left = ctx.Done()
	}
	var r wakeReason
	if left == nil {
		r = <-w.wake // from the worker, the timer or leave
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
	if r == wakeDone && !w.waitUntil.CompareAndSwap(d, 0) {
		<-w.wake // the timer timed the caller out, or ctx ended, as the run returned
	}
	if notified && !n.StopNotify(&w.leaveFunc) {
		// leave runs, or has run: it must be done with this wait before
		// the next one publishes its deadline.
		for !w.leftTold.Load() {
			runtime.Gosched()
		}
	}
	return r
}

// leave is the end of the waiting caller's context: it wakes the caller
// with wakeLeft unless the worker or the timer woke it first.
func (w *callWait) leave() {
	if d := w.waitUntil.Load(); d != 0 && w.waitUntil.CompareAndSwap(d, 0) {
		w.wake <- wakeLeft
	}
	w.leftTold.Store(true)
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
// stays unarmed if no caller waits or the caller waits without one.
func (w *callWait) timeUp() {
	c := w.clock
	w.mu.Lock()
	w.armedFor.Store(0)
	d := w.waitUntil.Load()
	late := d != 0 && clock.UnixNano(c) >= d
	// A caller without a deadline (math.MaxInt64) leaves the timer
	// unarmed: it would never fire.
	if d != 0 && d != math.MaxInt64 && !late {
		w.armedFor.Store(d)
		late = clock.ResetAt(c, w.timer, time.Unix(0, d))
	}
	w.mu.Unlock()
	if late && w.waitUntil.CompareAndSwap(d, 0) {
		w.wake <- wakeTimeUp
	}
}
