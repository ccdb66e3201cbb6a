package observable

import (
	"context"

	"github.com/rxhystrix/rxhystrix/internal/clock"
)

// HedgeStream returns an Observable that races subscriptions to o until
// one of them emits, and is then that one: it is [HedgeStreamOn] on the
// real clock.
func HedgeStream[T any](o Observable[T], p HedgePolicy) Observable[T] {
	return HedgeStreamOn(o, p, clock.Real)
}

// HedgeStreamOn returns an Observable that hedges its subscriptions to o,
// a cold stream of any number of values, the way gRPC hedges a streaming
// call: it subscribes to o and, when that attempt has neither emitted
// nor completed p.Delay() after it started (measured on c), subscribes
// again beside it, up to p.MaxHedges times. The first attempt that emits
// a value or completes wins: every other one is cancelled (its context
// ends with context.Canceled), and the stream is the winner's, its values
// and then its error or completion, which no other attempt is asked to
// answer for. An attempt that fails before it emits loses; p.OnError and
// p.Permit say, as for [Observable.HedgeOn], whether a hedge starts in
// its place, and when every attempt has failed the stream fails with the
// last failure.
//
// Each subscription is one race. Its first attempt is subscribed on the
// subscribing goroutine, the others on goroutines of their own. An
// attempt's source sees a context made from the attempt's, which
// [FailingAttempt] answers for.
//
// c is rxhystrix's own clock, so that its packages can test on a manual
// clock; code outside this module uses HedgeStream. It panics if p is not
// valid or c is nil.
func HedgeStreamOn[T any](o Observable[T], p HedgePolicy, c clock.Clock) Observable[T] {
	// A function, not a method of Observable as Hedge is: a method is
	// compiled for every type of value a program streams, and with this
	// one the code of every command moved, and First of a Command's
	// ToObservable slowed by about 6 % (bench/peers
	// rxhystrix-semaphore-toobservable, in alternating runs); a function
	// is compiled only for the streams hedged.
	if err := p.Validate(); err != nil {
		panic("observable: HedgeStream: " + err.Error())
	}
	if c == nil {
		panic("observable: HedgeStreamOn with nil c")
	}
	// The race is HedgeSingle's, with an attempt's result the news that
	// it has emitted or completed: the first such attempt is the first to
	// succeed, and wins; one that fails first has failed. The winner's
	// context is kept (keepsWinner) for the rest of its stream.
	s := &hedgedStream[T]{policy: p, attempts: streamAttempts[T]{o, discarderOf(o)}}
	s.h.Attempt, s.h.Policy, s.h.Clock, s.h.keepsWinner = &s.attempts, &s.policy, c, true
	return FromProducer[T](s)
}

// hedgedStream is what HedgeStreamOn returns: each subscription a race,
// and, when o is a Discarder, a Discarder of o's values, so that a value
// the winner emits once its subscription has ended goes to o's Discard.
// It holds the race's parts by value, in one allocation rather than
// three (command BenchmarkObservableCommand/hedge/ToSlice: 30 → 27).
type hedgedStream[T any] struct {
	h        HedgeSingle[*streamAttempt[T]]
	policy   HedgePolicy
	attempts streamAttempts[T]
}

func (s *hedgedStream[T]) Produce(ctx context.Context, down Observer[T]) {
	s.h.SubscribeSingle(ctx, streamWinner[T]{down})
}

func (s *hedgedStream[T]) Discard(v T) {
	if d := s.attempts.discard; d != nil {
		d.Discard(v)
	}
}

// streamAttempts is the Single whose every subscription is one attempt of
// a hedged stream: a subscription to o whose result, for the race, is
// the attempt itself once it has emitted or completed.
type streamAttempts[T any] struct {
	o       Observable[T]
	discard Discarder[T] // o's, or nil
}

func (s streamAttempts[T]) SubscribeSingle(ctx context.Context, race SingleObserver[*streamAttempt[T]]) {
	s.o.Subscribe(ctx, &streamAttempt[T]{race: race, ctx: ctx.(*attemptScope), discard: s.discard})
}

// Call is never made: the race of a hedged stream only subscribes.
func (streamAttempts[T]) Call(context.Context) (*streamAttempt[T], error) {
	panic("observable: a hedged stream's attempt is only subscribed")
}

// Async is false: the stream's source may emit on the subscribing
// goroutine, so hedges start on goroutines of their own.
func (streamAttempts[T]) Async() bool { return false }

// streamAttempt is the observer of one attempt of a hedged stream. Its
// notifications come one after another (the Rx grammar), so its fields
// need no lock: down is written by the race's end, which the attempt's
// own first notification makes when it wins.
type streamAttempt[T any] struct {
	race    SingleObserver[*streamAttempt[T]]
	ctx     *attemptScope
	told    bool         // the race knows the attempt emitted, completed or failed
	down    Observer[T]  // the subscriber's, once the attempt has won
	discard Discarder[T] // takes a loser's values, if not nil
}

// emitting tells the race, the first time, that the attempt has emitted
// or completed, and reports whether the attempt is the winner.
func (a *streamAttempt[T]) emitting() bool {
	if !a.told {
		a.told = true
		a.race.OnResult(a, nil)
	}
	return a.down != nil
}

func (a *streamAttempt[T]) OnNext(v T) {
	switch {
	case a.emitting():
		a.down.OnNext(v)
	case a.discard != nil:
		a.discard.Discard(v) // a loser's
	}
}

func (a *streamAttempt[T]) OnError(err error) {
	if !a.told {
		a.told = true
		a.race.OnResult(nil, err) // a loser's failure, or the last
		return
	}
	if a.down != nil {
		a.down.OnError(err)
		a.ctx.cancel(context.Canceled)
	}
}

func (a *streamAttempt[T]) OnCompleted() {
	if a.emitting() {
		a.down.OnCompleted()
		a.ctx.cancel(context.Canceled)
	}
}

// streamWinner is told the end of a hedged stream's race: the winner,
// which from then on notifies the subscriber itself, or the last failure.
type streamWinner[T any] struct{ down Observer[T] }

func (w streamWinner[T]) OnResult(a *streamAttempt[T], err error) {
	if err != nil {
		w.down.OnError(err)
		return
	}
	a.down = w.down
}
