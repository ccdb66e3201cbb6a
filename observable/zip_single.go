package observable

import (
	"context"
	"sync"
)

// zipSingle is Zip2 of two Singles: a Single too. A subscription
// subscribes a, then b, each as soon as the one before has returned: two
// synchronous Singles run one after the other, a first, and an
// asynchronous one runs while the next is subscribed. The first error
// ends the other.
//
// Call keeps that order without a subscription where it can: when a is
// synchronous, it calls a, then b, on the caller's goroutine; when a is
// asynchronous, it subscribes a and calls b meanwhile, so that b's result
// is computed without a subscription's machinery. An asynchronous a that
// is [Joinable] is handed over instead, as [Observable.ToFuture] hands
// over its work: the starter subscribes it after its grace unless Call,
// once b has answered, takes it over first. So a b that answers within
// the grace is followed by a's Call, two calls and no subscription, and a
// slower b has a running beside it, started when the starter's grace is
// over (starter.go; bench/peers rxhystrix-pool-zip2).
type zipSingle[A, B, R any] struct {
	a Single[A]
	b Single[B]
	f func(A, B) R
}

// Async reports whether SubscribeSingle returns without waiting for the
// result: only if both Singles are asynchronous, since it subscribes each
// on the calling goroutine, and a synchronous one computes its result
// there. A zip that said so with only a asynchronous would have a caller
// that must not block (ToFuture, ReplayNowOn, a Future's Done) subscribe
// it on its own goroutine, and run b's work there.
func (z *zipSingle[A, B, R]) Async() bool { return z.a.Async() && z.b.Async() }

func (z *zipSingle[A, B, R]) Joinable() bool { return joinable(z.a) && joinable(z.b) }

func (z *zipSingle[A, B, R]) Call(ctx context.Context) (R, error) { return z.call(ctx, false) }

// Join is Call for a waiter (see [Joiner]): each Single of the pair that
// is called is joined.
func (z *zipSingle[A, B, R]) Join(ctx context.Context) (R, error) { return z.call(ctx, true) }

// call is Call, or Join if waiter is set.
func (z *zipSingle[A, B, R]) call(ctx context.Context, waiter bool) (R, error) {
	var zero R
	if z.a.Async() {
		return z.callWithA(ctx, waiter)
	}
	va, err := callFor(z.a, ctx, waiter)
	if err != nil {
		return zero, err
	}
	vb, err := callFor(z.b, ctx, waiter)
	if err != nil {
		discardFrom(z.a, va)
		return zero, err
	}
	return z.f(va, vb), nil
}

// callFor calls s for a waiter (join) if waiter is set, and with Call if
// not.
func callFor[T any](s Single[T], ctx context.Context, waiter bool) (T, error) {
	if waiter {
		return joinCall(s, ctx)
	}
	return s.Call(ctx)
}

// callWithA is Call of a zip whose a is asynchronous: a is handed over
// if it is joinable (callHandingOverA), subscribed otherwise, and b
// called on the caller's goroutine while a runs.
func (z *zipSingle[A, B, R]) callWithA(ctx context.Context, waiter bool) (R, error) {
	if joinable(z.a) {
		return z.callHandingOverA(ctx, waiter)
	}
	c := &collector[R]{first: true}
	c.init(ctx)
	if !c.live() {
		return c.result()
	}
	z.join(ctx, c, true, waiter)
	return c.wait()
}

// callHandingOverA is Call of a zip whose a is asynchronous and
// joinable: a is handed over, b called, and a then taken over unless the
// starter has started it. A b that failed has ended the join's scope: a,
// if nobody has started it yet, is started at once, to end as any
// subscription does whose subscriber left before it began. a taken over
// is called under ctx, as First calls a Single: with b answered, only
// ctx's end can end the join's scope meanwhile.
func (z *zipSingle[A, B, R]) callHandingOverA(ctx context.Context, waiter bool) (R, error) {
	ctx = orBackground(ctx)
	zc := &zipCall[A, B, R]{}
	c, j := &zc.result, &zc.join
	c.first = true
	c.init(ctx)
	if !c.live() {
		return c.result()
	}
	j.z, j.r = z, c
	j.init(ctx)
	zc.a.start(z.a, &j.scope, (*zipJoinA[A, B, R])(j))
	vb, err := callFor(z.b, &j.scope, waiter)
	(*zipJoinB[A, B, R])(j).OnResult(vb, err)
	if j.live() {
		zc.a.takeOverUnder(ctx)
	} else {
		zc.a.expedite()
	}
	return c.wait()
}

// zipCall is the state of callHandingOverA, in one allocation.
type zipCall[A, B, R any] struct {
	result collector[R]
	join   zipJoin[A, B, R]
	a      unstarted[A] // a, handed over
}

func (z *zipSingle[A, B, R]) SubscribeSingle(ctx context.Context, r SingleObserver[R]) {
	z.join(ctx, r, false, false)
}

// join subscribes a, then, unless the join has ended already, b, and
// tells r the pair: b is called on this goroutine with callB (for a
// waiter if waiter is set), subscribed otherwise.
func (z *zipSingle[A, B, R]) join(ctx context.Context, r SingleObserver[R], callB, waiter bool) {
	j := &zipJoin[A, B, R]{z: z, r: r}
	j.init(ctx)
	z.a.SubscribeSingle(&j.scope, (*zipJoinA[A, B, R])(j))
	switch {
	case !j.live():
		// a failed, or the subscriber left: then b, not asked, ends
		// the join with the scope's error, so that r is told even if a
		// answers with a value as the scope ends.
		err := j.leftErr()
		if err == nil {
			err = context.Canceled
		}
		var zero B
		(*zipJoinB[A, B, R])(j).OnResult(zero, err)
	case callB:
		vb, err := callFor(z.b, &j.scope, waiter)
		(*zipJoinB[A, B, R])(j).OnResult(vb, err)
	default:
		z.b.SubscribeSingle(&j.scope, (*zipJoinB[A, B, R])(j))
	}
}

// zipJoin waits for both results of a zipSingle's subscription; its scope
// is the context both Singles see, ended once the pair is complete or
// either failed.
type zipJoin[A, B, R any] struct {
	scope
	z *zipSingle[A, B, R]
	r SingleObserver[R]

	mu         sync.Mutex
	va         A
	vb         B
	hasA, hasB bool
	told       bool
}

// result records one side's result and, once the pair is complete or on
// the first error, tells r, once, and ends the join's scope. It reports
// whether the join took the result: not once r has been told. A pair
// completed once the subscriber has left is not made: r is told the
// scope's error. On an error the values that came are discarded (see
// [Discarder]); after told, nobody writes va or vb.
func (j *zipJoin[A, B, R]) result(set func(), err error) (taken bool) {
	j.mu.Lock()
	if j.told {
		j.mu.Unlock()
		return false
	}
	if err == nil {
		set()
	}
	done := err != nil || (j.hasA && j.hasB)
	j.told = done
	j.mu.Unlock()
	if !done {
		return true
	}
	var v R
	if err == nil {
		if err = j.leftErr(); err == nil {
			v = j.z.f(j.va, j.vb)
		}
	}
	j.r.OnResult(v, err)
	j.cancel(context.Canceled)
	if err != nil {
		if j.hasA {
			discardFrom(j.z.a, j.va)
		}
		if j.hasB {
			discardFrom(j.z.b, j.vb)
		}
	}
	return true
}

type (
	zipJoinA[A, B, R any] zipJoin[A, B, R]
	zipJoinB[A, B, R any] zipJoin[A, B, R]
)

func (a *zipJoinA[A, B, R]) OnResult(v A, err error) {
	j := (*zipJoin[A, B, R])(a)
	if !j.result(func() { j.va, j.hasA = v, true }, err) && err == nil {
		discardFrom(j.z.a, v)
	}
}

func (b *zipJoinB[A, B, R]) OnResult(v B, err error) {
	j := (*zipJoin[A, B, R])(b)
	if !j.result(func() { j.vb, j.hasB = v, true }, err) && err == nil {
		discardFrom(j.z.b, v)
	}
}
