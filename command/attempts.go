package command

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/rxhystrix/rxhystrix/observable"
)

// A Command whose key has retries or hedges on (Config.Retry,
// Config.Hedge) answers each call with several executions, composed by
// observable's operators on the cold Single of one execution:
//
//	RetrySingle{round{HedgeSingle{one execution}}}
//
// Every attempt is a full execution through the stages (stages.go), with
// its own Completion. What the operators cannot know is Hystrix's
// fallback: an attempt that fails must not run the fallback when another
// attempt may still answer (a retry follows, a hedge is in flight), or its
// fallback's value would end the race. So the fallback stage asks the
// attempt first (execution.deferFallback): the retry is decided there,
// with the policy's Next, and the retry operator is told the decision
// (attempts.Next).

// attemptInfo is what one execution knows of the attempts it belongs to.
type attemptInfo struct {
	a     fallbackDeferral
	hedge bool // the execution is a hedge: HEDGED
	retry bool // the execution retries a failed one: RETRIED
	// budgeted says the execution holds a place in the key's retry
	// budget, which it gives back when it ends.
	budgeted bool
	// collapsed is the collapser's batch the execution runs, or nil:
	// COLLAPSED.
	collapsed *collapsedBatch
	// ctx is the context the hedge operator gave the execution, which
	// the fallback stage asks whether the race does without it
	// (observable.FailingAttempt).
	ctx context.Context
	// start is when the hedge operator began the execution, on the
	// registry's clock; 0 if the execution reads the clock itself
	// (execution.begin).
	start int64
}

// fallbackDeferral decides, at an attempt's fallback stage, whether its
// fallback waits for the other attempts.
type fallbackDeferral interface {
	deferFallback(ctx context.Context, ai *attemptInfo, failure FailureType, cause error) bool
}

// attempts is one call of a Command with retries or hedges on, and every
// operator the call composes, in one allocation, which a hedged call that
// left nothing behind hands on to the next (callHedged; bench/peers
// rxhystrix-semaphore-hedge).
type attempts[In, Out any] struct {
	hedged observable.HedgeSingle[Out] // made ready for the next call by its Reset

	x *single[In, Out]
	attemptRounds

	own      single[In, Out] // x, copied: Execute keeps the caller's on its stack
	rnd      round[In, Out]
	firstOne attemptInfo // the first execution's; later ones make their own

	collapsed *collapsedBatch // a collapser's batch, which each execution serves
}

// attemptRounds is the rounds of one call's attempts, for either kind of
// command: the first execution and each retry begin a round, and the
// executions of a round beside its first are its hedges.
type attemptRounds struct {
	k             *keyState
	cfg           *Config
	retry         *observable.RetryPolicy // when the call retries
	rounds        int                     // rounds begun
	retryDecision                         // the last round's, for the retry operator (its Next)
	// started counts the current round's executions begun: the first is
	// the round's own, the others its hedges.
	started atomic.Int32
	// granted says a retry was granted, and so holds a place in the key's
	// retry budget, and has not begun: its execution takes the place over
	// when it begins (next), and the call gives it back if it never does
	// (giveBackGrant: its caller left during the backoff, say), whichever
	// comes first.
	granted atomic.Bool
	// replay is the first round's failure when that round was made
	// before the rounds were composed (madeFirst; for a subscription,
	// firstAttempt), told again in its place.
	replay error
}

// madeFirst notes that the first round was made before the rounds were
// composed, as a call that retries makes it, and failed with err, which
// its fallback stage decided to retry (first): the rounds begin with err
// told again (replayed), and take over the retry it was granted.
func (r *attemptRounds) madeFirst(err error, first retryDecision) {
	r.rounds, r.replay, r.retryDecision = 1, err, first
	r.grant()
}

// replayed returns, once, the failure madeFirst noted, and nil otherwise.
// It writes only when there is one: a hedged round's executions, which
// begin on goroutines of their own, all ask, and a hedged call never
// makes its first round before the rounds.
func (r *attemptRounds) replayed() error {
	err := r.replay
	if err != nil {
		r.replay = nil
	}
	return err
}

// newRound begins a round: the first execution, or a retry.
func (r *attemptRounds) newRound() {
	r.rounds++
	r.started.Store(0)
}

// next counts an execution of the current round, and says whether it is a
// hedge or a retry, and whether it holds a place in the retry budget: a
// hedge was granted one as it started, and a retry takes over the one it
// was granted, unless the call gave it back already.
func (r *attemptRounds) next() (hedge, retry, budgeted bool) {
	n := r.started.Add(1)
	hedge, retry = n > 1, n == 1 && r.rounds > 1
	return hedge, retry, hedge || (retry && r.granted.Swap(false))
}

// grant notes that a retry was granted a place in the retry budget.
func (r *attemptRounds) grant() { r.granted.Store(true) }

// giveBackGrant gives back the place in the retry budget of a retry that
// was granted and never began, once the call or subscription has ended.
func (r *attemptRounds) giveBackGrant() {
	if r.granted.Swap(false) {
		r.k.retrying.Add(-1)
	}
}

// deferFallback is asked by an attempt that failed with a failure its
// fallback would answer: true makes it end with its *Error and no
// fallback, since another attempt may still answer.
//
// Whether another attempt may still answer is the hedge operator's to
// say, under its lock: a hedge it has started may not have begun yet, and
// one it would start on the error may be refused by the budget.
func (r *attemptRounds) deferFallback(ctx context.Context, ai *attemptInfo, failure FailureType, cause error) bool {
	if r.cfg.Hedge.MaxHedges > 0 && observable.FailingAttempt(ai.ctx, cause) {
		return true
	}
	if r.cfg.Retry.MaxAttempts > 1 && retryOn(r.cfg).Has(failure) && r.decide(ctx, r.k, r.retry, r.rounds, cause) {
		r.grant()
		return true
	}
	return false
}

// resilient returns the Single of x with the retries and hedges of cfg.
// It keeps a copy of x, so that x, which Execute keeps on its stack, stays
// there (bench/peers rxhystrix-semaphore: 0 allocs/op).
func (x *single[In, Out]) resilient(cfg *Config) observable.Single[Out] {
	return new(attempts[In, Out]).compose(x, cfg)
}

// compose makes the zero a the attempts of x under cfg, and returns their
// Single.
func (a *attempts[In, Out]) compose(x *single[In, Out], cfg *Config) observable.Single[Out] {
	k := x.c.k
	a.own, a.k, a.cfg = *x, k, cfg
	a.x = &a.own
	var s observable.Single[Out] = attemptExecution[In, Out]{a}
	if cfg.Hedge.MaxHedges > 0 {
		// Field by field: a composite literal would build the whole
		// HedgeSingle, its idle race included, and copy it in, about 60 ns
		// of a passing hedged call's 600 (bench/peers
		// rxhystrix-semaphore-hedge, in the profile of that row).
		h := &a.hedged
		h.Attempt, h.Policy, h.Clock = s, k.hedgePolicy(cfg), k.registry.clock
		h.Discard = x.c.discard // a loser's value; spares are the core's, and keep it
		if x.c.construct != nil {
			h.Wins = completedEmpty // the attempts are First's (observable_first.go)
		}
		s = h
	}
	a.rnd = round[In, Out]{a, s}
	s = &a.rnd
	if cfg.Retry.MaxAttempts > 1 {
		r := &retries[Out]{rounds: &a.attemptRounds, caller: &a.own.ctx}
		r.single = observable.RetrySingle[Out]{Attempt: s, Retrier: a, Clock: k.registry.clock}
		a.retry = k.retryPolicy(cfg)
		s = r
	}
	return s
}

// callHedged is Call of x when cfg hedges and does not retry. Its attempts
// come from the Command's spares and go back to them once the call has
// left nothing behind that could reach them: no hedge started, and the
// wait for one called off in time (observable.HedgeSingle.Reset); the
// executions keep nothing of them once they have returned, in either
// isolation. So a passing hedged call allocates only its first attempt's
// context, 64 bytes where it allocated 512 with its attempts (bench/peers
// rxhystrix-semaphore-hedge). A spare keeps its last call's context and
// input until its next call, or until the pool drops it at a collection.
func (x *single[In, Out]) callHedged(subCtx context.Context, cfg *Config) (Out, error) {
	var s observable.Single[Out]
	a, _ := x.c.spareAttempts.Get().(*attempts[In, Out])
	if a != nil {
		s = a.again(x, cfg)
	} else {
		a = new(attempts[In, Out])
		s = a.compose(x, cfg)
	}
	v, err := s.Call(subCtx)
	if a.hedged.Reset() {
		x.c.spareAttempts.Put(a)
	}
	return v, err
}

// again makes the attempts of a hedged call that left nothing behind, as
// compose made them, the attempts of x under cfg, and returns their
// Single: it writes only what differs from one call to the next. A store
// of a pointer costs a write barrier while the collector marks, and
// clearing the attempts and composing them again was 8 % of a passing
// hedged call with 75 callers (bench/peers rxhystrix-semaphore-hedge, in
// the profile of that row).
func (a *attempts[In, Out]) again(x *single[In, Out], cfg *Config) observable.Single[Out] {
	a.own.ctx, a.own.in, a.own.rec = x.ctx, x.in, x.rec
	if a.cfg != cfg {
		a.cfg, a.hedged.Policy = cfg, x.c.k.hedgePolicy(cfg)
	}
	a.rounds, a.retryDecision = 0, retryDecision{} // begin writes the first attempt's info
	return &a.rnd
}

// retries is what a call that retries adds to its attempts: the retry
// operator, which gives back, once the call has its result, the budget's
// place taken for a retry that never began (see attemptRounds.granted).
//
// The retry operator waits out its backoffs under the subscriber's context
// and the caller's together (*caller, the context the call was made
// with), as each attempt runs under both: a caller that leaves during a
// backoff ends the call there, and no retry starts after it.
type retries[Out any] struct {
	single observable.RetrySingle[Out]
	rounds *attemptRounds
	caller *context.Context // the attempts' own single's
}

func (r *retries[Out]) Call(ctx context.Context) (Out, error) {
	ctx, stop := joinContexts(ctx, *r.caller)
	v, err := r.single.Call(ctx)
	stop()
	r.rounds.giveBackGrant()
	return v, err
}

func (r *retries[Out]) SubscribeSingle(ctx context.Context, obs observable.SingleObserver[Out]) {
	ctx, stop := joinContexts(ctx, *r.caller)
	r.single.SubscribeSingle(ctx, grantObserver[Out]{r.rounds, stoppingObserver[Out]{obs, stop}})
}

func (r *retries[Out]) Async() bool { return r.single.Async() }

// grantObserver gives back the budget's place of a retry that never
// began before it passes the call's result on.
type grantObserver[Out any] struct {
	rounds *attemptRounds
	stoppingObserver[Out]
}

func (o grantObserver[Out]) OnResult(v Out, err error) {
	o.rounds.giveBackGrant()
	o.stoppingObserver.OnResult(v, err)
}

// ofConfig is a value made from one Config of a key, such as its retry or
// hedge policy: kept while that Config is the key's.
type ofConfig[T any] struct {
	cfg *Config
	v   T
}

// madeFor returns the value p keeps for cfg, made by build and kept in p
// if p keeps none, or one of an earlier Config.
func madeFor[T any](p *atomic.Pointer[ofConfig[T]], cfg *Config, build func() T) *T {
	if c := p.Load(); c != nil && c.cfg == cfg {
		return &c.v
	}
	c := &ofConfig[T]{cfg, build()}
	p.Store(c)
	return &c.v
}

// hedgePolicy returns the hedge policy of cfg, the key's Config, made once
// per Config: its Delay is cfg's, on the key's live latency, and its
// Permit the key's. A call keeps the policy of the Config it began
// under, its delay included: hedging switched off by Configure (a Delay
// of 0) must not start an in-flight call's remaining hedges at once.
func (k *keyState) hedgePolicy(cfg *Config) *observable.HedgePolicy {
	return madeFor(&k.lastHedgePolicy, cfg, func() observable.HedgePolicy {
		return observable.HedgePolicy{
			MaxHedges: cfg.Hedge.MaxHedges,
			Delay:     func() time.Duration { return k.hedgeDelayOf(cfg) },
			OnError:   cfg.Hedge.OnError,
			Permit:    k.budgetPermits,
			Final:     isBadRequestOutcome, // no other execution makes the request good: it is the answer
		}
	})
}

// retryDecision is what the fallback stage of an attempt decided about
// the retry after it, which the retry operator is told (Next). The first
// attempt of a call that retries and does not hedge keeps its own on the
// caller's stack: Command.Call makes that attempt before anything of the
// retries is built, and only a failure the policy retries makes the rest
// (bench/peers rxhystrix-semaphore-retry).
type retryDecision struct {
	will bool          // the failure is retried
	wait time.Duration // after this wait
}

// decide records p's word on the retry after attempt n, which failed with
// cause under ctx, and reports whether a retry follows. p's Permit is the
// key's budgetPermits: a retry it grants holds a place in the budget.
func (d *retryDecision) decide(ctx context.Context, k *keyState, p *observable.RetryPolicy, n int, cause error) bool {
	d.wait, d.will = p.Next(ctx, k.registry.clock.Now(), n, cause)
	return d.will
}

// Next tells the retry operator what the last attempt's fallback stage
// decided; an attempt that did not decide (it was cancelled, or its
// failure is not retried) is not retried.
func (d *retryDecision) Next(context.Context, time.Time, int, error) (time.Duration, bool) {
	will := d.will
	d.will = false
	return d.wait, will
}

// decideFirstRetry is the fallback stage's question for the first attempt
// of a call that retries.
func (e *execution) decideFirstRetry(ctx context.Context, failure FailureType, cause error) bool {
	if !retryOn(e.cfg).Has(failure) {
		return false
	}
	return e.retry.decide(ctx, e.k, e.k.retryPolicy(e.cfg), 1, cause)
}

// retryOn is the set of failures cfg retries.
func retryOn(cfg *Config) FailureTypes {
	if cfg.Retry.On == 0 {
		return defaultRetryOn
	}
	return cfg.Retry.On
}

// retryPolicy returns the retry policy of cfg, the key's Config, made once
// per Config, as hedgePolicy is: its backoff, its deadline rule on the
// key's median latency, its budget. Its two functions were two
// allocations of every subscription of an ObservableCommand that retries
// (command BenchmarkObservableCommand/retry/ToSlice).
func (k *keyState) retryPolicy(cfg *Config) *observable.RetryPolicy {
	return madeFor(&k.lastRetryPolicy, cfg, func() observable.RetryPolicy {
		return observable.RetryPolicy{
			MaxAttempts: cfg.Retry.MaxAttempts,
			Backoff:     cfg.Retry.Backoff,
			AttemptTime: func() time.Duration { return k.metrics.ExecutionLatencyPercentile(50) },
			Permit:      k.budgetPermits,
		}
	})
}

// callRetrying is Call of x when cfg retries and does not hedge: the first
// attempt on the stack, the retries, if its failure is retried, through
// RetrySingle.
func (x *single[In, Out]) callRetrying(subCtx context.Context, cfg *Config) (Out, error) {
	var first retryDecision
	v, err := x.c.callFirst(subCtx, x.ctx, x.in, x.rec, &first)
	if !first.will {
		return v, err
	}
	r := x.resilient(cfg).(*retries[Out])
	a := r.single.Attempt.(*round[In, Out]).a
	a.madeFirst(err, first)
	return r.Call(subCtx)
}

// begin counts an execution of the current round, whose context is ctx,
// and says what it is.
func (a *attempts[In, Out]) begin(ctx context.Context) *attemptInfo {
	hedge, retry, budgeted := a.next()
	ai := &a.firstOne
	if hedge || retry {
		ai = &attemptInfo{a: a}
	} else if ai.a == nil {
		ai.a = a // once: the attempts of later calls are the same (again)
	}
	ai.start, _ = observable.AttemptStart(ctx)
	ai.ctx = ctx
	ai.collapsed = a.collapsed
	ai.hedge, ai.retry, ai.budgeted = hedge, retry, budgeted
	return ai
}

// ended is the end of an execution begun by begin.
func (a *attempts[In, Out]) ended(ai *attemptInfo) { ai.ended(a.k) }

// ended gives back the place in the retry budget (RetryBudget) of a retry
// or a hedge, which the budget took when it granted it.
func (ai *attemptInfo) ended(k *keyState) {
	if ai.budgeted {
		k.retrying.Add(-1)
	}
}

// forNobody returns the error of caller, the context the execution
// answers, if ai is a hedge the race started as that caller left (the
// first execution's failure, the caller's error, came before the race's
// context heard of it), and gives back its place: there is nobody to
// answer, and no execution is made, as for a call whose caller has left
// (callAs).
func (ai *attemptInfo) forNobody(k *keyState, caller context.Context) error {
	if !ai.hedge {
		return nil
	}
	err := caller.Err()
	if err != nil {
		ai.ended(k)
	}
	return err
}

// round is one round of a call: the first execution or a retry, hedged
// when s is a HedgeSingle of attemptExecutions, one attemptExecution
// otherwise.
type round[In, Out any] struct {
	a *attempts[In, Out]
	s observable.Single[Out]
}

func (r *round[In, Out]) Call(ctx context.Context) (Out, error) {
	if err := r.a.replayed(); err != nil {
		var zero Out
		return zero, err // the first round, made by callRetrying
	}
	r.a.newRound()
	return r.s.Call(ctx)
}

func (r *round[In, Out]) SubscribeSingle(ctx context.Context, obs observable.SingleObserver[Out]) {
	r.a.newRound()
	r.s.SubscribeSingle(ctx, obs)
}

func (r *round[In, Out]) Async() bool { return r.s.Async() }

// attemptExecution is one execution of a round.
type attemptExecution[In, Out any] struct{ a *attempts[In, Out] }

func (e attemptExecution[In, Out]) Call(subCtx context.Context) (Out, error) {
	x := e.a.x
	ai := e.a.begin(subCtx)
	ctx, stop := joinContexts(subCtx, x.ctx)
	v, err := x.c.call(ctx, x.in, nil, x.rec, ai)
	stop()
	e.a.ended(ai)
	return v, err
}

func (e attemptExecution[In, Out]) SubscribeSingle(subCtx context.Context, obs observable.SingleObserver[Out]) {
	x := e.a.x
	if x.c.construct != nil {
		// First's execution of an ObservableCommand (observable_first.go)
		// is a call: on the race's goroutine, or, in a worker pool, where
		// the race expects SubscribeSingle to return at once, on one of
		// its own, which waits for the worker.
		if e.Async() {
			go func() { obs.OnResult(e.Call(subCtx)) }()
			return
		}
		obs.OnResult(e.Call(subCtx))
		return
	}
	ai := e.a.begin(subCtx)
	if err := ai.forNobody(e.a.k, x.ctx); err != nil {
		var zero Out
		obs.OnResult(zero, err)
		return
	}
	x.c.subscribe(x.ctx, subCtx, x.in, x.rec, attemptObserver[In, Out]{e.a, ai, obs}, nil, ai)
}

func (e attemptExecution[In, Out]) Async() bool { return e.a.x.Async() }

// attemptObserver ends an attempt before passing its result on.
type attemptObserver[In, Out any] struct {
	a    *attempts[In, Out]
	ai   *attemptInfo
	down observable.SingleObserver[Out]
}

func (o attemptObserver[In, Out]) OnResult(v Out, err error) {
	o.a.ended(o.ai)
	o.down.OnResult(v, err)
}

// hedgeDelay is the key's hedge delay under its Config in force.
func (k *keyState) hedgeDelay() time.Duration { return k.hedgeDelayOf(k.config.Load()) }

// hedgeDelayOf is the hedge delay of cfg: the key's execution latency at
// cfg.Hedge.Percentile when set and known, cfg.Hedge.Delay otherwise.
func (k *keyState) hedgeDelayOf(cfg *Config) time.Duration {
	if p := cfg.Hedge.Percentile; p > 0 {
		if d := k.metrics.ExecutionLatencyPercentile(p); d > 0 {
			return d
		}
	}
	return cfg.Hedge.Delay
}
