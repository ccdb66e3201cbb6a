package command

import (
	"context"
	"time"

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
	x      *observableExecution[In, Out]
	cfg    *Config
	policy observable.RetryPolicy
	rounds int           // attempts begun
	will   bool          // the last attempt's failure is retried
	wait   time.Duration // after this wait
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
	if ai.retry {
		k.retrying.Add(1)
	}
	a.x.c.subscribe(a.x.ctx, subCtx, a.x.in, a.x.rec, nil, streamAttemptObserver[Out]{k, ai, o}, ai)
}

// deferFallback is asked by an attempt that failed before it emitted: true
// makes it end with its *Error and no fallback, since a retry follows.
func (a *streamAttempts[In, Out]) deferFallback(ctx context.Context, _ *attemptInfo, failure FailureType, cause error) bool {
	if !retryOn(a.cfg).Has(failure) {
		return false
	}
	a.wait, a.will = a.policy.Next(ctx, a.x.c.k.registry.clock.Now(), a.rounds, cause)
	return a.will
}

// Next tells the retry operator what the last attempt's fallback stage
// decided; an attempt that did not ask (it emitted, was cancelled, or
// its failure is not retried) is not retried.
func (a *streamAttempts[In, Out]) Next(context.Context, time.Time, int, error) (time.Duration, bool) {
	will := a.will
	a.will = false
	return a.wait, will
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

func (o streamAttemptObserver[Out]) ended() {
	if o.ai.retry {
		o.k.retrying.Add(-1)
	}
}
