package observable

import (
	"context"
	"sync/atomic"
)

// unstarted is the subscription to a Single that ToFuture or ReplayNowOn
// hand over, so as not to block their caller or so that a waiter may
// take it over (handsOver), until somebody starts it. A waiter that could
// do nothing but wait for the result ([Future.Get] and [Observable.First]
// of ReplayNowOn, with a context that cannot end) takes it over, if the
// Single is [Joinable], and calls the Single on its own goroutine, as a
// Java ForkJoinTask's join runs a task no worker has taken. A caller that
// blocks for the result and cannot take it over, or ends the work,
// starts it at once (expedite); other work, a subscriber's included, is
// started by the starter after its grace (starter.go), unless taken over
// first. The work runs once, started by whoever comes first, and a
// caller who never waits still has it done without blocking.
//
// The hand-off would otherwise run the work on a goroutine whose stack is
// new, and often too small for it, while the waiter parks: taking it over
// is what brings Queue(...).Get and Observe(...).First of a command down
// to about its Execute (bench/peers rxhystrix-semaphore-queue,
// rxhystrix-semaphore-observe).
type unstarted[T any] struct {
	s       Single[T] // nil when nothing was handed over
	join    bool      // s is Joinable: a waiter may take it over
	ctx     context.Context
	r       SingleObserver[T]
	claimed atomic.Bool  // somebody has started it, or taken it over
	pending pendingStart // in its processor's list of starts, if join
}

// handsOver reports whether ToFuture and ReplayNowOn(NewGoroutine) hand
// the subscription to s over, rather than subscribing on the caller's
// goroutine: s must not block the caller (it is synchronous), or a waiter
// may take it over (it is joinable). An asynchronous Single that is
// joinable is handed over too: a Get that takes it over calls it, which
// for a command in a worker pool is Execute's hand-off to the worker
// rather than a subscription's (bench/peers rxhystrix-pool-queue).
func handsOver[T any](s Single[T]) bool { return !s.Async() || joinable(s) }

// subscribeOn subscribes r to s, with ctx, on sch, for ToFutureOn and
// ReplayNowOn: with NewGoroutine, handed over through u if handsOver
// says so, and on the calling goroutine if s is asynchronous and not
// joinable; with Immediate, on the calling goroutine; with any other
// scheduler, on the goroutine it gives, r having its error if it refuses.
func subscribeOn[T any](s Single[T], sch Scheduler, ctx context.Context, r SingleObserver[T], u *unstarted[T]) {
	switch {
	case sch == NewGoroutine && handsOver(s):
		u.start(s, ctx, r)
	case sch == Immediate || sch == NewGoroutine:
		s.SubscribeSingle(ctx, r)
	default:
		scheduledSingle[T]{s, sch}.SubscribeSingle(ctx, r)
	}
}

// start hands over the subscription of s, with ctx, delivering to r: to
// the starter if a waiter may take it over, and to a new goroutine if
// not.
func (u *unstarted[T]) start(s Single[T], ctx context.Context, r SingleObserver[T]) {
	u.s, u.join, u.ctx, u.r = s, joinable(s), ctx, r
	if !u.join {
		u.claimed.Store(true)
		go u.subscribe()
		return
	}
	u.pending.work = u
	deferStart(&u.pending)
}

// startIfUntaken starts the work on a goroutine of its own unless a
// waiter has taken it over, or it has been started already. An
// asynchronous Single's gets one too: subscribing may run a fallback (a
// full pool's rejection), which must not hold up the starter.
func (u *unstarted[T]) startIfUntaken() {
	if u.claimed.CompareAndSwap(false, true) {
		go u.subscribe()
	}
}

// expedite is startIfUntaken for a caller that blocks for the result, or
// ends the work, and cannot take it over: it does not wait for the
// starter's grace, and subscribes to an asynchronous Single itself.
func (u *unstarted[T]) expedite() {
	if u.s == nil || u.claimed.Load() || !u.claimed.CompareAndSwap(false, true) {
		return
	}
	withdrawStart(&u.pending)
	if u.s.Async() {
		u.subscribe()
		return
	}
	go u.subscribe()
}

// taken reports whether the work has been started or taken over.
func (u *unstarted[T]) taken() bool { return u.claimed.Load() }

func (u *unstarted[T]) subscribe() { u.s.SubscribeSingle(u.ctx, u.r) }

// takeOver calls the Single on the calling goroutine (its Join, if it is
// a [Joiner]) and hands its result to r, if it was handed over, is
// joinable and no goroutine has started it; it reports whether it did.
// Like any Call, the work then ends, with ctx's error, at the latest
// when the code it runs on this goroutine returns.
func (u *unstarted[T]) takeOver() bool { return u.takeOverUnder(u.ctx) }

// takeOverUnder is takeOver with the Single called under ctx rather than
// the context it was handed over with: one that ends whenever that one
// would while the work runs.
func (u *unstarted[T]) takeOverUnder(ctx context.Context) bool {
	if !u.join || !u.claimed.CompareAndSwap(false, true) {
		return false
	}
	if !withdrawStart(&u.pending) {
		startNewer(&u.pending)
	}
	u.r.OnResult(joinCall(u.s, ctx))
	return true
}

// cannotEnd reports whether a wait under ctx can only end with the result.
func cannotEnd(ctx context.Context) bool { return ctx == nil || ctx.Done() == nil }
