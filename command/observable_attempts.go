package command

import (
	"context"

	"github.com/rxhystrix/rxhystrix/observable"
)

// An ObservableCommand whose key retries or hedges (Config.Retry,
// Config.Hedge) makes each subscription's attempts with observable's
// operators, as a Command makes a call's (attempts.go):
//
//	RetryWith{round{HedgeStreamOn{one execution}}}
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
	policy observable.RetryPolicy // what retry points to, when the key retries
}

// produceAttempts runs the attempts of one subscription under cfg.
func (x *observableExecution[In, Out]) produceAttempts(subCtx context.Context, o observable.Observer[Out], cfg *Config) {
	k := x.c.k
	a := &streamAttempts[In, Out]{x: x, attemptRounds: attemptRounds{k: k, cfg: cfg}}
	round := observable.Create(a.attempt)
	if cfg.Hedge.MaxHedges > 0 {
		round = observable.HedgeStreamOn(round, *k.hedgePolicy(cfg), k.registry.clock)
	}
	attempts := observable.Defer(func() observable.Observable[Out] {
		a.newRound()
		return round
	})
	if cfg.Retry.MaxAttempts > 1 {
		a.policy = retryPolicy(k, cfg)
		a.retry = &a.policy
		// The place in the budget of a retry granted and never begun goes
		// back when the subscription ends, however it ends.
		attempts = attempts.RetryWith(a, k.registry.clock).Finally(a.giveBackGrant)
	}
	attempts.Subscribe(subCtx, o)
}

// attempt is one execution of the attempts, for the subscription subCtx
// of the retry or hedge operator.
func (a *streamAttempts[In, Out]) attempt(subCtx context.Context, o observable.Observer[Out]) {
	ai := &attemptInfo{a: a, ctx: subCtx}
	ai.hedge, ai.retry, ai.budgeted = a.next()
	a.x.c.subscribe(a.x.ctx, subCtx, a.x.in, a.x.rec, nil, streamAttemptObserver[Out]{a.k, ai, o}, ai)
}

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
