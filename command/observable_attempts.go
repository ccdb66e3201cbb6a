package command

import (
	"context"
	"sync/atomic"

	"github.com/rxhystrix/rxhystrix/observable"
)

// An ObservableCommand whose key retries or hedges (Config.Retry,
// Config.Hedge) makes each subscription's attempts with observable's
// operators, as a Command makes a call's (attempts.go):
//
//	RetryWith{round{HedgeStreamOn{one execution}}}
//
// A subscription that retries and does not hedge makes its first attempt
// before it composes them (produceAttempts). First of one that hedges
// makes a Command's attempts instead (observable_first.go).
//
// Every attempt is a full execution of the user's Observable with its own
// Completion. The fallback stage of an attempt that failed asks the
// attempts whether another may still answer (attemptRounds.deferFallback),
// so that neither a retried failure nor one a hedge may still answer for
// runs the fallback.
//
// An attempt that has emitted a value is never retried: its retry would
// emit that value again. Its fallback follows what it emitted, as
// Hystrix's does for an observable command that fails part way. Hedges
// race for the first value, as gRPC's hedged streaming calls race for the
// first response: the first attempt that emits or completes is the
// stream, and every other one is cancelled (CANCELLED).

// streamAttempts is one subscription's attempts of an ObservableCommand
// whose key retries or hedges.
type streamAttempts[In, Out any] struct {
	x *observableExecution[In, Out]
	attemptRounds
	// hedging counts the hedges granted a place in the retry budget
	// whose execution has not begun: a hedge's execution takes a place
	// over when it begins (Produce), and the subscription's end gives
	// back the places no execution took. A hedge the race started may
	// never begin: the race ended before its goroutine subscribed it,
	// and a subscription to an ended race's attempt produces nothing.
	hedging atomic.Int64
}

// giveBackUnreplayed gives back the place in the retry budget of the
// retry granted to a first round made before the rounds (madeFirst), when
// the rounds were never subscribed, their subscriber having left before:
// their end (giveBack) would have given it back, and nothing else does.
// The first round tells its failure again on the subscribing goroutine
// (replayed), so a replay still there once the subscription has returned
// was never told.
func (a *streamAttempts[In, Out]) giveBackUnreplayed() {
	if a.replay != nil {
		a.replay = nil
		a.giveBack()
	}
}

// permitHedge is the hedge policy's Permit: a place in the key's retry
// budget for a hedge, held until its execution takes it over.
func (a *streamAttempts[In, Out]) permitHedge() bool {
	if !a.k.budgetPermits() {
		return false
	}
	a.hedging.Add(1)
	return true
}

// takeHedgePlace takes over the place of a hedge granted one, if the
// subscription has not given it back already.
func (a *streamAttempts[In, Out]) takeHedgePlace() bool {
	for {
		n := a.hedging.Load()
		if n <= 0 {
			return false
		}
		if a.hedging.CompareAndSwap(n, n-1) {
			return true
		}
	}
}

// giveBack gives back, once the subscription has ended, the places of a
// retry granted and never begun and of hedges that never began.
func (a *streamAttempts[In, Out]) giveBack() {
	a.giveBackGrant()
	if n := a.hedging.Swap(0); n > 0 {
		a.k.retrying.Add(-n)
	}
}

// produceAttempts runs the attempts of one subscription under cfg. A
// subscription that retries and does not hedge makes its first attempt
// before anything of the retries is built, as Command.Call does, and only
// a failure the fallback stage retries makes the rest (firstAttempt): a
// subscription whose first attempt answers costs its execution and the
// attempts' bookkeeping (bench/peers rxhystrix-semaphore-observable-command-retry;
// command BenchmarkObservableCommand/retry/ToSlice: 2.5 → 1.5 µs, 23 → 13
// allocations).
func (x *observableExecution[In, Out]) produceAttempts(subCtx context.Context, o observable.Observer[Out], cfg *Config) {
	a := x.newAttempts(cfg)
	if cfg.Hedge.MaxHedges > 0 {
		a.subscribeRounds(subCtx, o)
		return
	}
	a.newRound()
	a.Produce(subCtx, firstAttempt[In, Out]{a, subCtx, o})
}

// newAttempts returns the attempts of one subscription under cfg, before
// their first round.
func (x *observableExecution[In, Out]) newAttempts(cfg *Config) *streamAttempts[In, Out] {
	k := x.c.k
	a := &streamAttempts[In, Out]{x: x, attemptRounds: attemptRounds{k: k, cfg: cfg}}
	if cfg.Retry.MaxAttempts > 1 {
		a.retry = k.retryPolicy(cfg)
	}
	return a
}

// subscribeRounds subscribes o, under subCtx, to the rounds of the
// attempts: the first, unless it has failed already (replay), and a retry
// after each failure the fallback stage retries.
func (a *streamAttempts[In, Out]) subscribeRounds(subCtx context.Context, o observable.Observer[Out]) {
	k, cfg := a.k, a.cfg
	round := observable.FromProducer[Out](a)
	if cfg.Hedge.MaxHedges > 0 {
		p := *k.hedgePolicy(cfg)
		p.Permit = a.permitHedge
		round = observable.HedgeStreamOn(round, p, k.registry.clock)
	}
	attempts := observable.Defer(func() observable.Observable[Out] {
		if a.replay == nil {
			a.newRound()
		}
		return round
	})
	if cfg.Retry.MaxAttempts > 1 {
		attempts = attempts.RetryWith(a, k.registry.clock)
	}
	if cfg.makesAttempts() {
		// The place in the budget of a retry granted and never begun, or
		// of a hedge, goes back when the subscription ends, however it
		// ends.
		attempts = attempts.Finally(a.giveBack)
	}
	attempts.Subscribe(subCtx, o)
	a.giveBackUnreplayed()
}

// RetryBound is the context the subscription's executions answer, the
// one the ObservableCommand's ToObservable was given: the retry operator
// waits out a backoff under it and the subscriber's together, as a
// Command's retries wait (retries), so that a caller who leaves during a
// backoff ends the subscription there, with its context's cause, and no
// retry starts after it.
func (a *streamAttempts[In, Out]) RetryBound() context.Context { return a.x.ctx }

// Discard hands v, a value of an attempt that nobody receives (the
// attempt lost a hedge's race, or emitted once its subscription had
// ended), to the command's WithDiscard function, if it has one.
func (a *streamAttempts[In, Out]) Discard(v Out) { a.x.c.drop(v, nil) }

// Produce makes one execution of the attempts, for the subscription
// subCtx of the retry or hedge operator; the first round's failure, if
// produceAttempts made that round, is told again instead.
func (a *streamAttempts[In, Out]) Produce(subCtx context.Context, o observable.Observer[Out]) {
	if err := a.replayed(); err != nil {
		o.OnError(err)
		return
	}
	ai := &attemptInfo{a: a, ctx: subCtx}
	ai.hedge, ai.retry, ai.budgeted = a.next()
	if ai.hedge {
		ai.budgeted = a.takeHedgePlace()
	}
	if err := ai.forNobody(a.k, a.x.ctx); err != nil {
		o.OnError(err)
		return
	}
	a.x.c.subscribe(a.x.ctx, subCtx, a.x.in, a.x.rec, nil, streamAttemptObserver[Out]{a.k, ai, o}, ai)
}

// firstAttempt passes the first attempt's events on to the subscriber,
// made before the retries: a failure its fallback stage retried (which
// granted the retry) makes them, their first round that failure again.
type firstAttempt[In, Out any] struct {
	a      *streamAttempts[In, Out]
	subCtx context.Context
	down   observable.Observer[Out]
}

func (f firstAttempt[In, Out]) OnNext(v Out) { f.down.OnNext(v) }

func (f firstAttempt[In, Out]) OnError(err error) {
	if f.a.will {
		f.a.replay = err
		f.a.subscribeRounds(f.subCtx, f.down)
		return
	}
	f.down.OnError(err)
}

func (f firstAttempt[In, Out]) OnCompleted() { f.down.OnCompleted() }

// streamAttemptObserver ends an attempt's count in the retry budget
// before passing its terminal event on; the subscription tells one in
// every case, the subscriber's leaving included.
type streamAttemptObserver[Out any] struct {
	k    *keyState
	ai   *attemptInfo
	down observable.Observer[Out]
}

func (o streamAttemptObserver[Out]) OnNext(v Out) { o.down.OnNext(v) }

func (o streamAttemptObserver[Out]) OnError(err error) {
	o.ended()
	o.down.OnError(err)
}

func (o streamAttemptObserver[Out]) OnCompleted() {
	o.ended()
	o.down.OnCompleted()
}

func (o streamAttemptObserver[Out]) ended() { o.ai.ended(o.k) }
