package command

import (
	"context"
	"errors"

	"github.com/rxhystrix/rxhystrix/metricsstream"
	"github.com/rxhystrix/rxhystrix/observable"
)

// First of an ObservableCommand's ToObservable, fused.
//
// Hystrix's toObservable().toBlocking().first() of an observable command
// takes the first value and unsubscribes (take(1)): the execution records
// EMIT, then CANCELLED, as the unsubscription comes before the
// Observable's completion. What that subscription does, from the breaker
// to the Completion, is what Command.call does for run, with the first
// value of the user's Observable in the place of run's: so First runs the
// execution through call on its own goroutine (observable.FirstProducer),
// which spares the subscription, its watches and its timer (bench/peers
// rxhystrix-*-observable-command). Only a semaphore-isolated execution
// with a timeout keeps the subscription: there a timer answers the
// subscriber at the timeout while the Observable has not emitted, which
// the caller, waiting for the first value, could not do. An execution
// whose key retries makes its first attempt through call, as Command.Call
// does, and the retries only for a failure its fallback stage retries
// (firstRetrying). One whose key hedges makes its attempts as a Command's
// call does (attempts.go), each of them a call for the first value: a
// hedged stream's race is won by the first attempt that emits or
// completes, and so is this one, an attempt whose Observable completed
// without a value winning with ErrEmpty (completedEmpty). A passing
// hedged First took 3.2 µs and 32 allocations through the stream's
// operators, and takes 0.4 µs and 3 this way (command
// BenchmarkObservableCommand/hedge/First).

// observableExecution is the Producer of an ObservableCommand's
// ToObservable: one execution per subscription, whose end rec, when not
// nil, sees.
type observableExecution[In, Out any] struct {
	c   *ObservableCommand[In, Out]
	ctx context.Context // the context ToObservable was given
	in  In
	rec executionRecorder
}

// Produce runs one execution for a subscriber.
func (x *observableExecution[In, Out]) Produce(subCtx context.Context, o observable.Observer[Out]) {
	if cfg := x.c.k.config.Load(); makesAttempts(cfg, x.ctx) {
		x.produceAttempts(subCtx, o, cfg)
		return
	}
	x.c.subscribe(x.ctx, subCtx, x.in, x.rec, nil, o, nil)
}

// Discard hands v, a value of this execution's that the subscription had
// ended for (observable.FromProducer) or that an operator dropped, to the
// command's WithDiscard function, if it has one (observable.Discarder).
func (x *observableExecution[In, Out]) Discard(v Out) { x.c.drop(v, nil) }

// ProduceFirst runs one execution for First, which leaves at the first
// value.
func (x *observableExecution[In, Out]) ProduceFirst(subCtx context.Context) (Out, error) {
	cfg := x.c.k.config.Load()
	attempts := makesAttempts(cfg, x.ctx)
	switch {
	case cfg.Isolation == SemaphoreIsolation && cfg.Timeout > 0:
		return observable.FromProducer[Out](subscribedExecution[In, Out]{x}).First(subCtx)
	case attempts && cfg.Hedge.MaxHedges > 0:
		// The attempts of a Command's call, each a call for the first value.
		s := single[In, Out]{c: &x.c.core, ctx: x.ctx, in: x.in, rec: x.rec}
		return s.call(subCtx, false)
	case attempts:
		return x.firstRetrying(subCtx, cfg)
	}
	ctx, stop := joinContexts(subCtx, x.ctx)
	v, err := x.c.call(ctx, x.in, nil, x.rec, nil)
	stop()
	return v, err
}

// firstRetrying is ProduceFirst when cfg retries and does not hedge: the
// first attempt is made through call, as single.callRetrying makes a
// Command's, and a failure its fallback stage retries makes the retries,
// whose first round tells that failure again (bench/peers
// rxhystrix-semaphore-observable-command-retry).
func (x *observableExecution[In, Out]) firstRetrying(subCtx context.Context, cfg *Config) (Out, error) {
	var first retryDecision
	v, err := x.c.callFirst(subCtx, x.ctx, x.in, x.rec, &first)
	if !first.will {
		return v, err
	}
	a := x.newAttempts(cfg)
	a.madeFirst(err, first)
	v, err = observable.FromProducer[Out](subscribedRounds[In, Out]{a}).First(subCtx)
	a.giveBackUnreplayed() // First left before it subscribed the rounds
	return v, err
}

// completedEmpty reports whether err is the answer of First's execution
// of an ObservableCommand whose Observable, or fallback's, completed
// without a value (see core.conclude): in a hedge's race of First's
// executions, that answer wins, as a completion wins a hedged stream's
// race.
func completedEmpty(err error) bool { return err == observable.ErrEmpty }

// errCompleted is what firstOf returns for an Observable that completed
// without a value: unlike observable.ErrEmpty, which the user's
// Observable may fail with, it is never an Observable's error.
var errCompleted = errors.New("command: the Observable completed without a value")

// firstOf returns the first value of src, subscribed with ctx, and leaves
// src then: src's error if it failed first, errCompleted if it completed
// first, ctx's error if ctx ended first. A panic while src is subscribed is
// its error. A synchronous Single hands its result over directly.
//
// src is left as Take(1) leaves it: its context ends at the first value,
// so a source that emits on the subscribing goroutine and then waits for
// its context returns, where an Unsubscribe could only come once
// Subscribe had returned.
func firstOf[Out any](ctx context.Context, src observable.Observable[Out]) (Out, error) {
	if one, ok := src.AsSingle(); ok && !one.Async() {
		return callSingle(one, ctx)
	}
	var zero Out
	values, err := recoverSubscribe(src, nil).Take(1).ToSlice(ctx)
	switch {
	case err != nil:
		return zero, err
	case len(values) == 0:
		return zero, errCompleted
	}
	return values[0], nil
}

// tookFirst concludes the execution whose Observable (run's, or the
// fallback's with FALLBACK_EMIT) gave First v: the value is recorded, and
// the execution is CANCELLED, as First leaves it before its end.
func tookFirst[Out any](e *execution, v Out, event metricsstream.EventType, now int64) (Out, error) {
	e.mark(event)
	e.cancelled(now)
	return v, nil
}

// subscribedExecution is x as a Producer that First subscribes: a
// Discarder, so that a value First does not take goes to the command's
// WithDiscard function, and not a FirstProducer, which would bring First
// back to ProduceFirst. One pointer, it is an interface value without an
// allocation of its own.
type subscribedExecution[In, Out any] struct{ x *observableExecution[In, Out] }

func (s subscribedExecution[In, Out]) Produce(ctx context.Context, o observable.Observer[Out]) {
	s.x.Produce(ctx, o)
}

func (s subscribedExecution[In, Out]) Discard(v Out) { s.x.Discard(v) }

// subscribedRounds is the rounds of a's attempts as a Producer that First
// subscribes, as subscribedExecution.
type subscribedRounds[In, Out any] struct{ a *streamAttempts[In, Out] }

func (s subscribedRounds[In, Out]) Produce(ctx context.Context, o observable.Observer[Out]) {
	s.a.subscribeRounds(ctx, o)
}

func (s subscribedRounds[In, Out]) Discard(v Out) { s.a.Discard(v) }
