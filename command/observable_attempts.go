package command

import (
	"context"

	"github.com/rxhystrix/rxhystrix/observable"
)

// An ObservableCommand whose key retries (Config.Retry) makes each
// subscription's attempts with observable's RetryWith, every attempt a
// full execution of the user's Observable with its own Completion, as a
// Command's are (attempts.go). The fallback stage of an attempt that
// failed asks streamAttempts whether a retry follows, so that a retried
// failure runs no fallback.
//
// An attempt that has emitted a value is never retried: its retry would
// emit that value again. Its fallback follows what it emitted, as
// Hystrix's does for an observable command that fails part way.

// streamAttempts is one subscription's attempts of an ObservableCommand
// whose key retries.
type streamAttempts[In, Out any] struct {
	x             *observableExecution[In, Out]
	cfg           *Config
	policy        observable.RetryPolicy
	rounds        int // attempts begun
	retryDecision     // the last attempt's, for the retry operator (its Next)
}

// produceRetrying runs the attempts of one subscription under cfg.
func (x *observableExecution[In, Out]) produceRetrying(subCtx context.Context, o observable.Observer[Out], cfg *Config) {
	k := x.c.k
	a := &streamAttempts[In, Out]{x: x, cfg: cfg, policy: retryPolicy(k, cfg)}
	observable.Create(a.attempt).RetryWith(a, k.registry.clock).Subscribe(subCtx, o)
}

// attempt is one execution of the attempts, for the retry operator's
// subscription subCtx.
func (a *streamAttempts[In, Out]) attempt(subCtx context.Context, o observable.Observer[Out]) {
	a.rounds++
	ai := &attemptInfo{a: a, ctx: subCtx, retry: a.rounds > 1}
	k := a.x.c.k
	ai.began(k)
	a.x.c.subscribe(a.x.ctx, subCtx, a.x.in, a.x.rec, nil, streamAttemptObserver[Out]{k, ai, o}, ai)
}

// deferFallback is asked by an attempt that failed before it emitted: true
// makes it end with its *Error and no fallback, since a retry follows.
func (a *streamAttempts[In, Out]) deferFallback(ctx context.Context, _ *attemptInfo, failure FailureType, cause error) bool {
	return retryOn(a.cfg).Has(failure) && a.decide(ctx, a.x.c.k, &a.policy, a.rounds, cause)
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
