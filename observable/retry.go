package observable

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rxhystrix/rxhystrix/internal/clock"
)

// RetryPolicy says when [Observable.Retry] subscribes again to a source
// that failed, and how long it waits first.
type RetryPolicy struct {
	// MaxAttempts is the number of subscriptions in all, the first
	// included; 0 means DefaultMaxAttempts, 1 never retries.
	MaxAttempts int
	// Backoff is the wait before each retry, unless the failure carries a
	// Pushback (see Next).
	Backoff Backoff
	// Retryable reports whether a subscription that failed with err may
	// be retried; nil retries every error. The end of the subscriber's
	// context is never retried.
	Retryable func(err error) bool
	// AttemptTime, if not nil, returns how long an attempt is expected to
	// take. A retry starts only if its wait and AttemptTime end before the
	// deadline of the subscriber's context: one that cannot finish in time
	// would only add load.
	AttemptTime func() time.Duration
	// Permit, if not nil, has the last word on each retry, once every
	// other condition holds: false ends the retries with the last error.
	// It is where a retry budget goes.
	Permit func() bool
	// Rand, if not nil, returns the jitter's random numbers, uniform in
	// [0, 1); nil uses math/rand/v2.
	Rand func() float64
}

// DefaultMaxAttempts is the number of attempts of a RetryPolicy whose
// MaxAttempts is 0.
const DefaultMaxAttempts = 3

// Validate reports the first field of p that is out of range.
func (p RetryPolicy) Validate() error {
	if p.MaxAttempts < 0 {
		return invalidPolicy("RetryPolicy.MaxAttempts: %d is negative", p.MaxAttempts)
	}
	if err := p.Backoff.Validate(); err != nil {
		return fmt.Errorf("RetryPolicy.%w", err)
	}
	return nil
}

// Retrier decides, after each failed attempt, whether and when the next
// starts. [*RetryPolicy] is the Retrier of [Observable.Retry]; a package
// whose attempts decide for themselves (a command that must know before
// its fallback runs) brings its own to [RetrySingle] or
// [Observable.RetryWith].
type Retrier interface {
	// Next returns the wait before the retry that follows attempt n
	// (n ≥ 1), which failed with err, for a subscriber whose context is
	// ctx, at now; false means no retry, and err is the result.
	Next(ctx context.Context, now time.Time, n int, err error) (time.Duration, bool)
}

// A RetryBounder is a Retrier whose attempts run under a context of their
// own besides the subscriber's, such as the context of the caller a
// command's attempts answer: the end of that context ends a wait between
// attempts as the end of the subscriber's does, and the retries end with
// its cause. Without it a wait would run its course for a caller who had
// left, and only the next attempt would find out.
type RetryBounder interface {
	Retrier
	// RetryBound returns the context that bounds the waits; nil, or one
	// that is never done, bounds nothing.
	RetryBound() context.Context
}

// retryBound returns the context of r that bounds its waits, or nil.
func retryBound(r Retrier) context.Context {
	if b, ok := r.(RetryBounder); ok {
		if ctx := b.RetryBound(); ctx != nil && ctx.Done() != nil {
			return ctx
		}
	}
	return nil
}

// Next decides the retry that follows attempt n (n ≥ 1), which failed
// with err, for a subscriber whose context is ctx, at now. It returns the
// wait before the retry, and false when there is no retry: the attempts
// are used up, err is not retryable, ctx has ended, err's source pushed
// back, the retry could not finish before ctx's deadline, or Permit
// refused it.
//
// An err that carries a [Pushback] (a server's Retry-After, say) has the
// word on the wait: the retry waits what it says, with no jitter, in
// place of the backoff's delay, as gRPC's retries honour a server's
// pushback. A pushback that says not to try again ends the retries, and
// so does one longer than Backoff.Max: the source will not be ready
// within the longest wait the policy allows.
func (p *RetryPolicy) Next(ctx context.Context, now time.Time, n int, err error) (time.Duration, bool) {
	attempts := p.MaxAttempts
	if attempts == 0 {
		attempts = DefaultMaxAttempts
	}
	if n >= attempts || ctx.Err() != nil || errors.Is(err, context.Canceled) {
		return 0, false
	}
	if p.Retryable != nil && !p.Retryable(err) {
		return 0, false
	}
	d, ok := p.wait(n, err)
	if !ok {
		return 0, false
	}
	if deadline, ok := ctx.Deadline(); ok {
		need := d
		if p.AttemptTime != nil {
			// Saturating: a sum past the longest Duration would wrap
			// around to a negative one, which fits before any deadline.
			if a := p.AttemptTime(); a > 0 && need > math.MaxInt64-a {
				need = math.MaxInt64
			} else {
				need += a
			}
		}
		if !now.Add(need).Before(deadline) {
			return 0, false
		}
	}
	if p.Permit != nil && !p.Permit() {
		return 0, false
	}
	return d, true
}

// wait returns the wait before the retry that follows attempt n, which
// failed with err: the source's, if err carries a [Pushback], and the
// backoff's otherwise. false means the source said not to retry, or to
// wait longer than Backoff.Max allows.
func (p *RetryPolicy) wait(n int, err error) (time.Duration, bool) {
	if d, ok := pushbackOf(err); ok {
		return d, d >= 0 && d <= p.Backoff.withDefaults().Max
	}
	u := 0.0
	if p.Backoff.Jitter != NoJitter {
		if p.Rand != nil {
			u = p.Rand()
		} else {
			u = rand.Float64()
		}
	}
	return p.Backoff.Delay(n, u), true
}

// Retry returns an Observable that subscribes to o again when it fails,
// as p says: it is [Observable.RetryOn] on the real clock.
func (o Observable[T]) Retry(p RetryPolicy) Observable[T] { return o.RetryOn(p, clock.Real) }

// RetryOn returns an Observable that subscribes to o again when o fails,
// after the wait p says, measured on c, until o completes or p allows no
// more retries; then it fails with o's last error. o must be cold for a
// retry to mean anything: each subscription is a new attempt. Values an
// attempt emitted before failing have been passed on (Rx's retry); a
// retry starts on the goroutine of the failure, or on the timer's after a
// wait; but a retry asked for before the subscription to the failed
// attempt returned starts when it returns, on its goroutine, so that
// attempts that fail at once are made in a loop rather than each on the
// stack of the last. Each attempt's context ends with the attempt.
// Unsubscribing during a wait ends it at once; so does the end of the
// bound of a Retrier that is a [RetryBounder] (RetryWith), and the
// retries fail with the bound's cause.
//
// Retry of a Single ([FromSingle]) is a Single, so First of it waits the
// backoffs and makes each attempt on the calling goroutine, with nothing
// allocated for a first attempt that succeeds.
//
// c is rxhystrix's own clock, so that its packages can test on a manual
// clock; code outside this module uses Retry. It panics if p is not
// valid or c is nil.
func (o Observable[T]) RetryOn(p RetryPolicy, c clock.Clock) Observable[T] {
	if err := p.Validate(); err != nil {
		panic("observable: Retry: " + err.Error())
	}
	if c == nil {
		panic("observable: RetryOn with nil c")
	}
	return o.RetryWith(&p, c)
}

// RetryWith is [Observable.RetryOn] with the decisions of r, for a package
// whose attempts decide for themselves whether a retry follows (a
// command, which must know before its fallback runs). It panics if r or c
// is nil, a nil *RetryPolicy among them.
func (o Observable[T]) RetryWith(r Retrier, c clock.Clock) Observable[T] {
	if p, policy := r.(*RetryPolicy); r == nil || c == nil || policy && p == nil {
		panic("observable: RetryWith with nil r or c")
	}
	if one, ok := o.AsSingle(); ok {
		return FromSingle[T](&RetrySingle[T]{Attempt: one, Retrier: r, Clock: c})
	}
	return Observable[T]{src: sourceFunc[T](func(s *scope, down Observer[T]) {
		ro := &retryObserver[T]{o: o, r: r, c: c, s: s, down: down}
		ro.attempt()
	})}
}

// RetrySingle is Retry of a Single: Attempt again while Retrier allows,
// waiting on Clock. It is exported so that a package that makes its own
// Singles can retry one without making an Observable first; [Observable.RetryOn]
// builds one for any Single. When the subscriber's context ends during a
// wait, the result is the context's error; when the bound of a Retrier
// that is a [RetryBounder] does, the bound's cause.
type RetrySingle[T any] struct {
	Attempt Single[T]
	Retrier Retrier
	Clock   clock.Clock
}

// Call makes the attempts on the calling goroutine, waiting between them.
func (r *RetrySingle[T]) Call(ctx context.Context) (T, error) {
	v, err := r.Attempt.Call(ctx)
	for n := 1; err != nil; n++ {
		d, ok := r.Retrier.Next(ctx, r.Clock.Now(), n, err)
		if !ok {
			break
		}
		if werr := sleep(ctx, retryBound(r.Retrier), r.Clock, d); werr != nil {
			var zero T
			return zero, werr
		}
		v, err = r.Attempt.Call(ctx)
	}
	return v, err
}

// SubscribeSingle makes the attempts for a subscriber, each a
// subscription to Attempt, the waits on timers.
func (r *RetrySingle[T]) SubscribeSingle(ctx context.Context, obs SingleObserver[T]) {
	a := &retryAttempts[T]{r: r, ctx: ctx, down: obs}
	a.start()
}

// Async reports whether Attempt is asynchronous: SubscribeSingle makes the
// first attempt as Attempt's SubscribeSingle does, on the calling
// goroutine (a retry after a wait starts on the timer's).
func (r *RetrySingle[T]) Async() bool { return r.Attempt.Async() }

// sleep waits d on c, or until ctx ends (its error) or bound, if not
// nil, does (its cause).
func sleep(ctx, bound context.Context, c clock.Clock, d time.Duration) error {
	var boundDone <-chan struct{} // nil: never ready
	if bound != nil {
		if bound.Err() != nil {
			return context.Cause(bound)
		}
		boundDone = bound.Done()
	}
	if d <= 0 {
		return ctx.Err()
	}
	t := c.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
		return ctx.Err()
	case <-ctx.Done():
		return ctx.Err()
	case <-boundDone:
		return context.Cause(bound)
	}
}

// retryAttempts is one subscription to a RetrySingle.
type retryAttempts[T any] struct {
	r     *RetrySingle[T]
	ctx   context.Context
	down  SingleObserver[T]
	n     int
	turns attemptTurns
}

func (a *retryAttempts[T]) start() {
	if !a.turns.ask() {
		return
	}
	for {
		a.n++
		a.r.Attempt.SubscribeSingle(a.ctx, a)
		if a.turns.done() {
			return
		}
	}
}

// attemptTurns makes the attempts of a retry one after another in a loop,
// where an attempt that fails at once, with no wait before its retry,
// would otherwise start the retry from inside its own failure: a stack
// one level deeper per attempt, which a policy of a million attempts
// without backoff grows past the runtime's limit. The count is of the
// attempts asked for and not yet made, so that one asked for on another
// goroutine (a timer's, an asynchronous attempt's) while the loop runs is
// made by the loop, and never beside it.
type attemptTurns struct{ asked atomic.Int32 }

// ask asks for an attempt, and reports whether the caller is to make it
// and those asked for while it does: whether no loop is running.
func (t *attemptTurns) ask() bool { return t.asked.Add(1) == 1 }

// done reports, after an attempt was made, whether the loop ends: no
// attempt was asked for meanwhile.
func (t *attemptTurns) done() bool { return t.asked.Add(-1) == 0 }

func (a *retryAttempts[T]) OnResult(v T, err error) {
	if err == nil {
		a.down.OnResult(v, nil)
		return
	}
	d, ok := a.r.Retrier.Next(a.ctx, a.r.Clock.Now(), a.n, err)
	switch {
	case !ok:
		a.down.OnResult(v, err)
	case d <= 0:
		a.start()
	default:
		// The end of ctx, or of the Retrier's bound, ends the wait with
		// its cause, as Call's.
		w := &retryWait{}
		w.begin(a.r.Clock, d, a.ctx, retryBound(a.r.Retrier), a.start, func(ended context.Context) {
			var zero T
			a.down.OnResult(zero, context.Cause(ended))
		})
	}
}

// retryWait is one wait before a retry: its timer, the end of the
// subscription and the end of the Retrier's bound race, and the first to
// come goes on, once.
type retryWait struct {
	mu        sync.Mutex
	claimed   bool
	timer     clock.Timer
	stop      func() bool
	stopBound func() bool // nil without a bound
}

// begin arms the wait: after d on c, next runs; if ctx, or bound if it is
// not nil, ends first, left does, told which.
func (w *retryWait) begin(c clock.Clock, d time.Duration, ctx, bound context.Context, next func(), left func(ended context.Context)) {
	timer := c.AfterFunc(d, func() {
		if w.claim() {
			next()
		}
	})
	stop := context.AfterFunc(ctx, func() {
		if w.claim() {
			left(ctx)
		}
	})
	var stopBound func() bool
	if bound != nil {
		stopBound = context.AfterFunc(bound, func() {
			if w.claim() {
				left(bound)
			}
		})
	}
	w.mu.Lock()
	claimed := w.claimed
	w.timer, w.stop, w.stopBound = timer, stop, stopBound
	w.mu.Unlock()
	if claimed {
		// One of them came before this line: let go of the others.
		w.release()
	}
}

// release lets go of the timer and of the watches of the contexts.
func (w *retryWait) release() {
	w.timer.Stop()
	w.stop()
	if w.stopBound != nil {
		w.stopBound()
	}
}

// claim reports whether the caller is the first to end the wait; it lets
// go of the timer and the watches of the contexts if they are armed.
func (w *retryWait) claim() bool {
	w.mu.Lock()
	if w.claimed {
		w.mu.Unlock()
		return false
	}
	w.claimed = true
	armed := w.timer != nil
	w.mu.Unlock()
	if armed {
		w.release()
	}
	return true
}

// retryObserver is Retry of an Observable that is not a Single: it
// subscribes to o again after a failure, each attempt in a scope of its
// own below s (retryAttempt).
type retryObserver[T any] struct {
	o     Observable[T]
	r     Retrier
	c     clock.Clock
	s     *scope
	down  Observer[T]
	n     int
	turns attemptTurns
}

func (r *retryObserver[T]) attempt() {
	if !r.turns.ask() {
		return
	}
	for {
		r.n++
		a := &retryAttempt[T]{r: r}
		a.up.init(r.s)
		r.o.run(&a.up, a)
		if r.turns.done() {
			return
		}
	}
}

// retryAttempt observes one attempt of a retryObserver, which runs in a
// scope of its own: the attempt's end ends it, so that a failed attempt's
// context is done before the wait and the next attempt, not when the
// retries end.
type retryAttempt[T any] struct {
	up scope
	r  *retryObserver[T]
}

func (a *retryAttempt[T]) OnNext(v T) { a.r.down.OnNext(v) }

func (a *retryAttempt[T]) OnCompleted() {
	a.up.cancel(context.Canceled)
	a.r.down.OnCompleted()
}

func (a *retryAttempt[T]) OnError(err error) {
	a.up.cancel(context.Canceled)
	a.r.failed(err)
}

// failed decides, after an attempt failed with err, between the retry
// that follows, at once or after a wait, and the end of the retries.
func (r *retryObserver[T]) failed(err error) {
	d, ok := r.r.Next(r.s, r.c.Now(), r.n, err)
	switch {
	case !ok:
		r.down.OnError(err)
	case d <= 0:
		r.attempt()
	default:
		// The subscriber's leaving ends the wait with nothing told: the
		// subscription was cancelled, and the operators between here and
		// the subscriber (DoOnTerminate, DoOnError, OnErrorResumeNext)
		// would take the last error for the source's, as they would a
		// Single's answer after its end (singleToObserver). The end of
		// the Retrier's bound ends it with its cause, which the
		// subscriber is still there to get.
		w := &retryWait{}
		w.begin(r.c, d, r.s, retryBound(r.r), r.attempt, func(ended context.Context) {
			if ended != context.Context(r.s) {
				r.down.OnError(context.Cause(ended))
			}
		})
	}
}
