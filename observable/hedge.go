package observable

import (
	"context"
	"errors"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rxhystrix/rxhystrix/internal/clock"
	"github.com/rxhystrix/rxhystrix/internal/timerlist"
)

// HedgePolicy says when [Observable.Hedge] starts another attempt beside
// one that has not answered yet.
//
// A failure that carries a [Pushback] (a server's Retry-After, or gRPC's
// grpc-retry-pushback-ms) has the word on the next hedge, as gRPC's
// hedging honours a server's pushback: the next hedge starts the wait it
// says after the failure, in place of its Delay or of OnError's at once,
// and a pushback that says not to try again starts no more hedges. The
// attempts running go on either way, and when none is left the failure
// is the result.
type HedgePolicy struct {
	// MaxHedges is the number of attempts that may start beside the
	// first; 0 means 1.
	MaxHedges int
	// Delay returns how long after an attempt starts, with no answer
	// yet, the next hedge starts. It is asked each time, so that it may
	// follow a changing latency (a percentile of recent attempts, say);
	// zero or less starts the hedge at once. It must not be nil.
	Delay func() time.Duration
	// OnError starts the next hedge at once when an attempt fails (not
	// when it ends with context.Canceled: it was cancelled). By default a
	// failure starts nothing: the other attempts, if any, go on, and when
	// none is left the failure is the result.
	OnError bool
	// Permit, if not nil, has the last word on each hedge: false starts
	// none (the attempts in flight go on). It is where a budget goes.
	Permit func() bool
	// Final, if not nil, reports whether an attempt's failure is the
	// answer, which no other attempt would make good: the race ends with
	// it and the other attempts are cancelled, as gRPC's hedging ends on
	// a status that is not among its non-fatal codes. A bad request is
	// such a failure (command.IsBadRequest).
	Final func(err error) bool
}

// final reports whether err, an attempt's failure, ends the race.
func (p *HedgePolicy) final(err error) bool { return p.Final != nil && p.Final(err) }

// Validate reports the first field of p that is out of range.
func (p HedgePolicy) Validate() error {
	if p.MaxHedges < 0 {
		return invalidPolicy("HedgePolicy.MaxHedges: %d is negative", p.MaxHedges)
	}
	if p.Delay == nil {
		return invalidPolicy("HedgePolicy.Delay: nil")
	}
	return nil
}

func (p *HedgePolicy) attempts() int {
	switch p.MaxHedges {
	case 0:
		return 2
	case math.MaxInt:
		return math.MaxInt // one more would wrap around to a negative count
	}
	return p.MaxHedges + 1
}

// Hedge returns an Observable that races attempts of o, as p says: it is
// [Observable.HedgeOn] on the real clock.
func (o Observable[T]) Hedge(p HedgePolicy) Observable[T] { return o.HedgeOn(p, clock.Real) }

// HedgeOn returns an Observable of one result that subscribes to o and,
// when no answer has come p.Delay() after an attempt started (measured on
// c), subscribes again beside it, up to p.MaxHedges times: the first
// attempt that succeeds wins, and every other one is cancelled (its
// context ends with context.Canceled). When every attempt has failed the
// result is the last failure. Each attempt's result is its last value
// (o must be cold, and is treated as a source of one result); attempts
// beside the first run on goroutines of their own unless o is an
// asynchronous [Single]. [HedgeStreamOn] hedges a stream
// instead, by its first value.
//
// First of it makes the first attempt on the calling goroutine, and
// returns once that attempt has returned: a caller whose attempt ignores
// the end of its context waits for it.
//
// c is rxhystrix's own clock, so that its packages can test on a manual
// clock; code outside this module uses Hedge. It panics if p is not valid
// or c is nil.
func (o Observable[T]) HedgeOn(p HedgePolicy, c clock.Clock) Observable[T] {
	if err := p.Validate(); err != nil {
		panic("observable: Hedge: " + err.Error())
	}
	if c == nil {
		panic("observable: HedgeOn with nil c")
	}
	one, ok := o.AsSingle()
	if !ok {
		one = lastOf[T]{o}
	}
	h := &HedgeSingle[T]{Attempt: one, Policy: &p, Clock: c}
	// A loser's value was taken from o's Single or Producer, and nobody
	// receives it: it goes back, as HedgeStreamOn's losers' do.
	if d := discarderOf(o); d != nil {
		h.Discard = d.Discard
	}
	return FromSingle[T](h)
}

// lastOf is an Observable as a Single of its last value.
type lastOf[T any] struct{ o Observable[T] }

func (l lastOf[T]) Call(ctx context.Context) (T, error) { return l.o.Last(ctx) }
func (l lastOf[T]) SubscribeSingle(ctx context.Context, r SingleObserver[T]) {
	v, err := l.o.Last(ctx)
	r.OnResult(v, err)
}
func (lastOf[T]) Async() bool { return false }

// HedgeSingle is Hedge of a Single: attempts of Attempt raced as Policy
// says, timed on Clock. It is exported so that a package that makes its
// own Singles can hedge one without making an Observable first;
// [Observable.HedgeOn] builds one for any Observable. A HedgeSingle may
// serve any number of calls and subscriptions at once, and must not be
// copied after its first use; one made for one call at a time may be
// made ready for the next with [HedgeSingle.Reset].
type HedgeSingle[T any] struct {
	Attempt Single[T]
	Policy  *HedgePolicy
	Clock   clock.Clock
	// Discard, when not nil, is handed each value an attempt answers
	// with a nil error that nobody receives: a loser's, once another
	// attempt has won, or one from an attempt that had told the race it
	// fails (FailingAttempt). What such a value holds open can so be
	// released. It is called on the attempt's goroutine, outside every
	// lock, and must not panic.
	Discard func(T)
	// Wins, when not nil, reports whether an attempt that answered with
	// err, not nil, ends the race with that answer, as a value would,
	// rather than leave it to the other attempts: a race of the first
	// values of streams ends on a stream that completed without one
	// (ErrEmpty), as [HedgeStreamOn]'s race does.
	Wins func(err error) bool

	// The first race's state, so that a HedgeSingle made for one call, as
	// a package that hedges its own Singles may make it, costs no
	// allocation of its own (bench/peers rxhystrix-semaphore-hedge).
	spareTaken atomic.Bool
	spare      hedgeRace[T]

	// keepsWinner leaves the winner's context live when the race ends:
	// a hedged stream's winner goes on (HedgeStreamOn), and ends its
	// context itself.
	keepsWinner bool
}

// Call makes the first attempt on the calling goroutine and returns the
// winner's result.
func (h *HedgeSingle[T]) Call(ctx context.Context) (T, error) {
	r := h.race(ctx, nil)
	defer r.abandonUnlessReturned()
	v, err := h.Attempt.Call(r.first)
	r.returned = true
	if r.ended(firstAttempt, v, err) {
		return r.v, r.err // no other goroutine writes them once done
	}
	r.mu.Lock()
	if !r.done {
		r.wait = make(chan struct{})
		wait := r.wait
		r.mu.Unlock()
		<-wait
	} else {
		r.mu.Unlock()
	}
	return r.v, r.err
}

// SubscribeSingle races the attempts for a subscriber.
func (h *HedgeSingle[T]) SubscribeSingle(ctx context.Context, obs SingleObserver[T]) {
	r := h.race(ctx, obs)
	defer r.abandonUnlessReturned()
	r.start(r.first, firstAttempt)
	r.returned = true
}

// Async reports whether Attempt is asynchronous: SubscribeSingle makes the
// first attempt on the calling goroutine, as Attempt's SubscribeSingle
// does.
func (h *HedgeSingle[T]) Async() bool { return h.Attempt.Async() }

// Reset makes h ready for another call, as if it had just been made, and
// reports true, when nothing but its owner can reach what h holds: the
// race of its first call or subscription has ended, started no attempt
// beside the first, and called off its wait for the next hedge before it
// came due. Otherwise it leaves h as it is, reports false, and h must not
// serve another call. It must not be called while a call or subscription
// of h may be under way. The first attempt's context, which its run may
// keep, is not part of h and is never reused.
//
// A package that makes a HedgeSingle for each call can so keep one for
// the next, rather than allocate it again (bench/peers
// rxhystrix-semaphore-hedge).
func (h *HedgeSingle[T]) Reset() bool {
	if !h.spareTaken.Load() {
		return true
	}
	// No lock: while fired is false no timer has told the race, nor will,
	// and started, which only a launch changes, and done, which a race
	// that ended has published to its owner, are final (see fired).
	r := &h.spare
	if r.fired.Load() || !r.done || r.started != 1 {
		return false
	}
	// Only what race does not write again: a race that ended with no
	// hedge left no hedges, its entry out of the timer list, and nextDue
	// zero. A store of a pointer costs a write barrier while the
	// collector marks, and zeroing the whole race was 6 % of a passing
	// hedged call with 75 callers (bench/peers rxhystrix-semaphore-hedge,
	// in the profile of that row).
	var zero T
	r.done, r.returned, r.v = false, false, zero
	if r.closed {
		r.closed = false
	}
	if r.err != nil {
		r.err = nil
	}
	if r.wait != nil {
		r.wait = nil
	}
	h.spareTaken.Store(false)
	return true
}

// race begins a race under ctx for down (nil for Call): the first attempt
// counted, and the next hedge waiting for its delay.
func (h *HedgeSingle[T]) race(ctx context.Context, down SingleObserver[T]) *hedgeRace[T] {
	var r *hedgeRace[T]
	if !h.spareTaken.Load() && h.spareTaken.CompareAndSwap(false, true) {
		r = &h.spare
	} else {
		r = new(hedgeRace[T])
	}
	if r.h != h || r.down != down { // a reused spare has them already
		r.h, r.down = h, down
	}
	if r.self == nil {
		r.self = r
	}
	r.parent, r.started, r.running = orBackground(ctx), 1, 1
	now := clock.UnixNano(h.Clock)
	r.first = r.newAttemptScope(now)
	// No lock yet: nobody else sees r until the timer list has it, and
	// the list's lock orders what r holds before its Expire.
	r.armLocked(now)
	return r
}

// attemptScope is the context of an attempt of a race: a scope that
// knows when the race began it, for [AttemptStart], and its race, for
// [FailingAttempt]. It is 64 bytes, a size class of its own.
type attemptScope struct {
	scope
	start int64        // Unix nanoseconds on the HedgeSingle's Clock
	race  *attemptRace // the race's self, which every attempt shares
}

// attemptRace is what an attempt's context asks of its race, whatever
// the race's type of result.
type attemptRace interface {
	failing(s *attemptScope, err error) bool
}

// newAttemptScope returns the context of an attempt begun at start.
func (r *hedgeRace[T]) newAttemptScope(start int64) *attemptScope {
	s := &attemptScope{start: start, race: &r.self}
	s.init(r.parent)
	return s
}

// AttemptStart reports when a [HedgeSingle] began the attempt whose
// context is ctx, in Unix nanoseconds on the HedgeSingle's Clock, and
// false for any other context. An Attempt that times itself on the same
// clock (a command's execution) may take it as its own start rather than
// read the clock a second time: the reading was about 6 % of a passing
// hedged call (bench/peers rxhystrix-semaphore-hedge, in the profile of
// that row).
func AttemptStart(ctx context.Context) (unixNano int64, ok bool) {
	if s, ok := ctx.(*attemptScope); ok {
		return s.start, true
	}
	return 0, false
}

// FailingAttempt is for an attempt of a [HedgeSingle] or of
// [HedgeStreamOn] that is about to fail with err, before it makes
// anything of its failure (runs a fallback of its own, say): called with
// the attempt's context, or a context made from it, it reports whether
// the race does without the attempt's answer. A [Pushback] in err's chain
// decides the next hedge, as the result of an attempt that fails does
// (see [HedgePolicy]).
//
// True: another attempt is running, or one starts now (HedgePolicy's
// OnError), or the race is over; the attempt's result no longer counts,
// and it should end with its failure as it is. False: the attempt's
// result, whatever it makes of its failure, is the race's, and no attempt
// starts after it. It is false for a context that is neither an
// attempt's nor made from one, and true for one kept past its attempt's
// end.
//
// Without it, an attempt that turns its failure into a value (a
// fallback) would end the race with that value while a hedge that had
// started could still answer.
func FailingAttempt(ctx context.Context, err error) bool {
	s := attemptOf(ctx)
	return s != nil && (*s.race).failing(s, err)
}

// LostAttempt reports whether ctx, the context of an attempt of a
// [HedgeSingle] or of [HedgeStreamOn] (or a context made from it), was
// ended by its race, because the race ended without it (another attempt
// answered, say), while the context the race runs under still lives:
// nobody left, and the attempt's end says nothing of what it ran. It is
// false for an attempt whose context lives, for one whose race's context
// ended, and for a context that is neither an attempt's nor made from one.
func LostAttempt(ctx context.Context) bool {
	s := attemptOf(ctx)
	if s == nil || !s.ended() {
		return false
	}
	if s.up != nil {
		return s.up.leftErr() == nil
	}
	return s.parent.Err() == nil
}

// attemptOf returns the scope of the attempt whose context ctx is, or is
// made from, and nil for any other context (nil too).
func attemptOf(ctx context.Context) *attemptScope {
	if s, ok := ctx.(*attemptScope); ok {
		return s
	}
	if ctx == nil {
		return nil
	}
	s, _ := ctx.Value(attemptKey{}).(*attemptScope)
	return s
}

// attemptKey is the key under which an attempt's context, and every
// context made from it, has the attempt's scope: a hedged stream's
// attempt sees its subscription's context (HedgeStreamOn).
type attemptKey struct{}

// Value returns s for attemptKey, and the parent's value of any other key.
func (s *attemptScope) Value(key any) any {
	if key == (attemptKey{}) {
		return s
	}
	return s.scope.Value(key)
}

// hedgeRace is one hedged result: the attempts started, the wait for the
// next hedge, and the result once it is known. The first attempt's
// context (first) is a scope, which, unlike a context of package context,
// costs nothing until somebody watches it; it is an allocation of its
// own, small, and the race's only one until a hedge starts, so that the
// race may be reused (HedgeSingle.Reset) while a run keeps its context
// (bench/peers rxhystrix-semaphore-hedge).
type hedgeRace[T any] struct {
	h      *HedgeSingle[T]
	parent context.Context
	down   SingleObserver[T] // nil for Call, which waits on wait
	first  *attemptScope     // the first attempt's context
	self   attemptRace       // r, for its attempts' contexts

	mu      sync.Mutex
	started int
	running int
	hedges  []hedgeAttempt  // the attempts beside the first
	next    timerlist.Entry // in one of the clock's lists while the next hedge waits
	nextDue int64           // when the next hedge is due (unix ns); 0 if none waits
	// fired says the timer list told the race, or may yet; set, under
	// mu, before anything the timer's Expire changes (see Reset).
	fired atomic.Bool
	// closed says no attempt starts any more: an attempt that is failing
	// takes the race's last word (FailingAttempt), or a failure's
	// pushback said not to try again.
	closed      bool
	firstFailed bool // the first attempt told the race it fails
	done        bool
	returned    bool // the first attempt returned on the caller's goroutine; read by it alone
	v           T
	err         error
	wait        chan struct{} // made by Call when it must wait
}

// hedgeAttempt is a hedge: its context, and whether it told the race it
// fails.
type hedgeAttempt struct {
	s      *attemptScope
	failed bool
}

// An attempt is named by its place in the race: firstAttempt, or i+1
// for hedges[i]; noAttempt names none.
const (
	noAttempt    = -1
	firstAttempt = 0
)

// launchNextLocked starts the next hedge now, if Permit agrees, and arms
// the wait for the one after it, from now: it reports whether it did,
// and the hedge's context and place, to start once r.mu is released.
func (r *hedgeRace[T]) launchNextLocked() (context.Context, int, bool) {
	if p := r.h.Policy.Permit; p != nil && !p() {
		return nil, noAttempt, false
	}
	r.disarmLocked() // a hedge started on an error: the wait restarts now
	now := clock.UnixNano(r.h.Clock)
	s := r.newAttemptScope(now)
	r.hedges = append(r.hedges, hedgeAttempt{s: s})
	r.started++
	r.running++
	r.armLocked(now)
	return s, len(r.hedges), true
}

// afterFailureLocked is what an attempt's failure err starts: the next
// hedge at once, as launchOnErrorLocked says, unless err carries a
// Pushback, which moves the next hedge to the wait it says from now, or
// starts no more (see HedgePolicy).
func (r *hedgeRace[T]) afterFailureLocked(err error) (context.Context, int, bool) {
	d, ok := pushbackOf(err)
	if !ok {
		return r.launchOnErrorLocked()
	}
	r.disarmLocked()
	switch {
	case d < 0:
		r.closed = true
	case !r.closed && r.parent.Err() == nil && r.started < r.h.Policy.attempts():
		r.armAtLocked(clock.UnixNanoAfter(clock.UnixNano(r.h.Clock), d))
	}
	return nil, noAttempt, false
}

// launchOnErrorLocked starts the next hedge for an attempt that failed,
// if the policy says so and it may start (the race is open, the parent
// live, the hedges not all started, Permit agrees), as launchNextLocked.
func (r *hedgeRace[T]) launchOnErrorLocked() (context.Context, int, bool) {
	p := r.h.Policy
	if !p.OnError || r.closed || r.parent.Err() != nil || r.started >= p.attempts() {
		return nil, noAttempt, false
	}
	return r.launchNextLocked()
}

// failedLocked reports whether the attempt at place i told the race it
// fails.
func (r *hedgeRace[T]) failedLocked(i int) bool {
	if i == firstAttempt {
		return r.firstFailed
	}
	return r.hedges[i-1].failed
}

// failing is FailingAttempt for the attempt whose context is s, failing
// with err.
func (r *hedgeRace[T]) failing(s *attemptScope, err error) bool {
	r.mu.Lock()
	i := r.placeLocked(s)
	if r.done || i == noAttempt || r.failedLocked(i) {
		r.mu.Unlock()
		return true
	}
	if r.h.Policy.final(err) {
		r.closed = true // its result, when it comes, ends the race
		r.disarmLocked()
		r.mu.Unlock()
		return false
	}
	if next, j, ok := r.afterFailureLocked(err); ok {
		r.countOutLocked(i)
		r.mu.Unlock()
		r.startAside(next, j)
		return true
	}
	if r.running > 1 {
		r.countOutLocked(i)
		r.mu.Unlock()
		return true
	}
	r.closed = true
	r.disarmLocked()
	r.mu.Unlock()
	return false
}

// placeLocked returns the place of the attempt whose context is s, or
// noAttempt if r, a HedgeSingle's spare, serves another call now: the
// context was kept past its attempt, and its race is long over.
func (r *hedgeRace[T]) placeLocked(s *attemptScope) int {
	if s == r.first {
		return firstAttempt
	}
	for j, a := range r.hedges {
		if a.s == s {
			return j + 1
		}
	}
	return noAttempt
}

// countOutLocked is the attempt at place i failing while the race goes
// on: it no longer runs, as far as the race is concerned, and its result,
// when it comes, is not counted (ended).
func (r *hedgeRace[T]) countOutLocked(i int) {
	r.running--
	if i == firstAttempt {
		r.firstFailed = true
	} else {
		r.hedges[i-1].failed = true
	}
}

// armLocked makes the next hedge wait for its delay from now (Unix
// nanoseconds on the race's clock), if one may still start.
func (r *hedgeRace[T]) armLocked(now int64) {
	if r.started >= r.h.Policy.attempts() {
		return
	}
	r.armAtLocked(clock.UnixNanoAfter(now, max(r.h.Policy.Delay(), 0)))
}

// armAtLocked makes the next hedge, which may still start, due at due;
// no wait for it is armed.
func (r *hedgeRace[T]) armAtLocked(due int64) {
	r.nextDue = due
	if list := timerlist.For(r.h.Clock).PickFor(&r.next); list.Add(&r.next, r, r.nextDue) {
		go list.Fire() // due at once
	}
}

// disarmLocked stops the wait for the next hedge.
func (r *hedgeRace[T]) disarmLocked() {
	if r.nextDue != 0 {
		r.nextDue = 0
		if !r.next.Stop() {
			r.fired.Store(true) // its Expire may be on its way
		}
	}
}

// Expire is the next hedge's delay passing: the hedge due then starts,
// unless the race has moved on since, or its subscriber has left. A race
// whose subscriber left may not have been told: a stream's attempt that
// ends as its subscription does is not heard (HedgeStreamOn), and a
// hedge started then would take Permit's place and never run.
func (r *hedgeRace[T]) Expire(due int64) {
	r.mu.Lock()
	r.fired.Store(true)
	if r.done || r.closed || due != r.nextDue || r.started >= r.h.Policy.attempts() || r.parent.Err() != nil {
		r.mu.Unlock()
		return
	}
	r.nextDue = 0
	ctx, i, ok := r.launchNextLocked()
	r.mu.Unlock()
	if ok {
		r.startAside(ctx, i)
	}
}

// startAside starts an attempt beside the caller's: on a goroutine of its
// own, unless the Single computes on other goroutines anyway.
func (r *hedgeRace[T]) startAside(ctx context.Context, i int) {
	if r.h.Attempt.Async() {
		r.start(ctx, i)
		return
	}
	go r.start(ctx, i)
}

// start subscribes to the attempt at place i, whose context is ctx.
func (r *hedgeRace[T]) start(ctx context.Context, i int) {
	r.h.Attempt.SubscribeSingle(ctx, hedgeObserver[T]{r, i})
}

// hedgeObserver is the observer of one attempt, at place i.
type hedgeObserver[T any] struct {
	r *hedgeRace[T]
	i int
}

func (o hedgeObserver[T]) OnResult(v T, err error) { o.r.ended(o.i, v, err) }

// ended is the result of the attempt at place i. It reports whether that
// result ended the race, and so whether r.v and r.err are final once it
// returns.
func (r *hedgeRace[T]) ended(i int, v T, err error) (finished bool) {
	r.mu.Lock()
	if r.failedLocked(i) {
		r.mu.Unlock()
		r.drop(v, err) // counted out when it told the race it fails
		return false
	}
	r.running--
	if r.done {
		r.mu.Unlock()
		r.drop(v, err) // a loser's
		return false
	}
	if err == nil || r.h.Wins != nil && r.h.Wins(err) || r.h.Policy.final(err) {
		r.v, r.err = v, err
		r.finishLocked(i)
		return true
	}
	r.err = err
	// A cancelled attempt did not fail: its caller, or the race's, is
	// leaving, and may reach the attempt before the race's context.
	if !errors.Is(err, context.Canceled) {
		if next, j, ok := r.afterFailureLocked(err); ok {
			r.mu.Unlock()
			r.startAside(next, j)
			return false
		}
	}
	if r.running > 0 {
		r.mu.Unlock()
		return false // the others may still win
	}
	var zero T
	r.v = zero
	r.finishLocked(noAttempt)
	return true
}

// abandonUnlessReturned, deferred around the first attempt on the
// caller's goroutine, abandons the race if that attempt did not return:
// it panicked. A method with a flag in r, not a closure over a local
// flag: the hedge row's cost (bench/peers rxhystrix-semaphore-hedge, c=1)
// stays where it was, where the closure's added about 3%.
func (r *hedgeRace[T]) abandonUnlessReturned() {
	if r.returned {
		return
	}
	r.abandon()
}

// abandon ends a race whose first attempt panicked on the caller's
// goroutine, as the panic propagates: no hedge starts after the call has
// ended, and the attempts started are cancelled. Nobody is told a
// result. A race that had ended already is left as it is.
func (r *hedgeRace[T]) abandon() {
	r.mu.Lock()
	if r.done {
		r.mu.Unlock()
		return
	}
	r.done = true
	r.disarmLocked()
	hedges := r.hedges
	r.mu.Unlock()
	r.first.cancel(context.Canceled)
	for _, a := range hedges {
		a.s.cancel(context.Canceled)
	}
}

// drop hands an attempt's value that nobody receives to the
// HedgeSingle's Discard.
func (r *hedgeRace[T]) drop(v T, err error) {
	if err == nil && r.h.Discard != nil {
		r.h.Discard(v)
	}
}

// finishLocked ends the race with r.v and r.err: every attempt but the
// winner's (at place winner) is cancelled, and the result told. It
// releases r.mu.
func (r *hedgeRace[T]) finishLocked(winner int) {
	r.done = true
	r.disarmLocked()
	hedges, wait := r.hedges, r.wait
	r.mu.Unlock()
	if winner != firstAttempt {
		r.first.cancel(context.Canceled)
	}
	for i, a := range hedges {
		if i+1 != winner {
			a.s.cancel(context.Canceled)
		}
	}
	if r.down != nil {
		r.down.OnResult(r.v, r.err)
	}
	if wait != nil {
		close(wait)
	}
	if r.h.keepsWinner {
		return
	}
	// The winner's context too: it is no longer needed.
	r.first.cancel(context.Canceled)
	for _, a := range hedges {
		a.s.cancel(context.Canceled)
	}
}
