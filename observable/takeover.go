package observable

import (
	"context"
	"sync/atomic"

	"github.com/rxhystrix/rxhystrix/internal/proc"
)

// unstarted is the subscription to a synchronous Single that ToFuture or
// ReplayNow hand to a goroutine of their own so as not to block their
// caller, until that goroutine starts it. A waiter that could do nothing
// but wait for the result ([Future.Get] and [Observable.First] of
// ReplayNow, with a context that cannot end) takes it over, if the Single
// is [Joinable], and calls the Single on its own goroutine instead, as a
// Java ForkJoinTask's join runs a task no worker has taken: the goroutine
// then finds it taken and ends at once. The work runs once, on whichever goroutine takes it first, and a
// caller who never waits still has it done without blocking.
//
// The hand-off would otherwise run the work on a goroutine whose stack is
// new, and often too small for it, while the waiter parks: taking it over
// is what brings Queue(...).Get and Observe(...).First of a command down
// to its Execute plus one go statement (bench/peers
// rxhystrix-semaphore-queue, rxhystrix-semaphore-observe).
type unstarted[T any] struct {
	s     Single[T] // nil when nothing was handed over
	join  bool      // s is Joinable: a waiter may take it over
	ctx   context.Context
	r     SingleObserver[T]
	taken atomic.Bool
}

// start hands the subscription of s, with ctx, delivering to r, to a new
// goroutine.
func (u *unstarted[T]) start(s Single[T], ctx context.Context, r SingleObserver[T]) {
	u.s, u.join, u.ctx, u.r = s, joinable(s), ctx, r
	go u.run()
}

// run is the goroutine start handed the subscription to: it subscribes,
// unless a waiter took the work over.
func (u *unstarted[T]) run() {
	if u.taken.CompareAndSwap(false, true) {
		u.s.SubscribeSingle(u.ctx, u.r)
	}
}

// takeOver calls the Single on the calling goroutine and hands its result
// to r, if it was handed over, is joinable and no goroutine has started
// it; it reports whether it did. Like any Call, the work then ends, with
// ctx's error, at the latest when the code it runs on this goroutine
// returns.
func (u *unstarted[T]) takeOver() bool {
	if !u.join || !u.taken.CompareAndSwap(false, true) {
		return false
	}
	u.r.OnResult(u.s.Call(u.ctx))
	// The goroutine left behind waits for a processor to find the work
	// taken and end. A waiter that takes over call after call, never
	// blocking, would keep its processor while thousands of them pile up;
	// a yield once in 16 takes-over keeps the pile short (bench/peers
	// rxhystrix-semaphore-queue, in an A/B of three rounds against no
	// yield: 1.35 → 0.71 µs with one caller, 3.9 → 0.84 µs with 75; a
	// yield after every take-over gave 0.96 and 0.73 µs).
	proc.YieldSometimes(takeOverYieldEvery)
	return true
}

// takeOverYieldEvery is how many take-overs, on average, a waiter makes
// between two yields (see takeOver).
const takeOverYieldEvery = 16

// cannotEnd reports whether a wait under ctx can only end with the result.
func cannotEnd(ctx context.Context) bool { return ctx == nil || ctx.Done() == nil }
