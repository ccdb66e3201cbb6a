package command

import (
	"context"

	"github.com/rxhystrix/rxhystrix/observable"
)

// single is one execution of a Command as an observable.Single: the
// source of ToObservable's Observable. First of that Observable is Call,
// on the calling goroutine, as Execute; any other subscription is
// SubscribeSingle. ctx is the context ToObservable was given; rec is
// Command.call's. A collapser's batch is one only when its key makes
// attempts, whose executions count its requests (Command.callBatch).
// First of a hedged ObservableCommand makes one for its attempts, whose
// executions are calls for the first value (observable_first.go).
type single[In, Out any] struct {
	c   *core[In, Out]
	ctx context.Context
	in  In
	rec executionRecorder
}

// Call executes the command on the calling goroutine, with subCtx and the
// caller's context both reaching run; with retries or hedges on, it makes
// the attempts they call for (see attempts.go).
func (x *single[In, Out]) Call(subCtx context.Context) (Out, error) { return x.call(subCtx, false) }

// Join is Call for a goroutine that only waits for the result, such as a
// Future's Get that takes Queue's execution over (observable.Joiner):
// under semaphore isolation with a timeout, run is handed to a goroutine
// of its own, and the caller has the fallback at the timeout while run
// still runs, as a subscriber has. A Config that has turned retries or
// hedges on since Joinable said yes makes them as Call does.
func (x *single[In, Out]) Join(subCtx context.Context) (Out, error) {
	if x.ctx.Err() != nil || subCtx.Err() != nil {
		// The subscriber left before the work it handed over began: the
		// execution is what SubscribeSingle makes of it, CANCELLED with
		// nothing taken (core.subscribe), whoever starts it.
		r := joinedResult[Out]{done: make(chan struct{})}
		x.SubscribeSingle(subCtx, &r)
		<-r.done
		return r.v, r.err
	}
	return x.call(subCtx, true)
}

// joinedResult is the result of a subscription Join waits for.
type joinedResult[Out any] struct {
	v    Out
	err  error
	done chan struct{}
}

func (r *joinedResult[Out]) OnResult(v Out, err error) {
	r.v, r.err = v, err
	close(r.done)
}

// call is Call, or Join if waiter is set.
func (x *single[In, Out]) call(subCtx context.Context, waiter bool) (Out, error) {
	if cfg := x.c.k.config.Load(); makesAttempts(cfg, x.ctx) {
		switch {
		case cfg.Retry.MaxAttempts <= 1:
			return x.callHedged(subCtx, cfg)
		case cfg.Hedge.MaxHedges > 0:
			return x.resilient(cfg).Call(subCtx)
		default:
			return x.callRetrying(subCtx, cfg)
		}
	}
	ctx, stop := joinContexts(subCtx, x.ctx)
	v, err := x.c.callAs(ctx, x.in, nil, x.rec, nil, nil, waiter)
	stop()
	return v, err
}

// SubscribeSingle executes the command for a subscriber, which may leave
// before the result.
func (x *single[In, Out]) SubscribeSingle(subCtx context.Context, r observable.SingleObserver[Out]) {
	if cfg := x.c.k.config.Load(); makesAttempts(cfg, x.ctx) {
		if cfg.Retry.MaxAttempts > 1 {
			x.resilient(cfg).SubscribeSingle(subCtx, r) // the retries join the caller's context
			return
		}
		// The hedges race under the subscriber's context and the caller's
		// together, as the retries wait: no hedge starts once the caller
		// has left.
		ctx, stop := joinContexts(subCtx, x.ctx)
		x.resilient(cfg).SubscribeSingle(ctx, stoppingObserver[Out]{r, stop})
		return
	}
	x.c.subscribe(x.ctx, subCtx, x.in, x.rec, r, nil, nil)
}

// Discard hands v, a value of this execution that an operator took and
// then dropped (Zip2's, when the other side failed), to the command's
// WithDiscard function, if it has one (observable.Discarder).
func (x *single[In, Out]) Discard(v Out) { x.c.drop(v, nil) }

// Async reports whether SubscribeSingle returns before the result: under
// pool isolation a worker runs run.
func (x *single[In, Out]) Async() bool {
	return x.c.k.config.Load().Isolation != SemaphoreIsolation
}

// Joinable reports whether a waiter that would only wait for the result
// of SubscribeSingle may have it from Join instead (observable.Joinable):
// under semaphore isolation with no timeout, nothing answers a
// subscription before run returns on the subscribing goroutine; with a
// timeout, Join hands run to a goroutine of its own and answers at the
// timeout; in a worker pool, Join hands run to a worker and answers at
// the timeout, as a subscription does. Retries and hedges keep their
// subscriptions.
func (x *single[In, Out]) Joinable() bool {
	return !makesAttempts(x.c.k.config.Load(), x.ctx)
}

// stoppingObserver lets go of joined contexts (joinContexts' stop)
// before it passes the result on.
type stoppingObserver[Out any] struct {
	down observable.SingleObserver[Out]
	stop func()
}

func (o stoppingObserver[Out]) OnResult(v Out, err error) {
	o.stop()
	o.down.OnResult(v, err)
}
