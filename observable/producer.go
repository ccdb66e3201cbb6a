package observable

import "context"

// A Producer is what an Observable made with FromProducer runs for each
// subscription, as Create runs its function: Produce is called with the
// subscription's context and an observer, under the same rules. A
// Producer that is a value of its own type, rather than a function, can
// also say more about itself (see FirstProducer).
type Producer[T any] interface {
	Produce(ctx context.Context, o Observer[T])
}

// A FirstProducer is a Producer that can also produce the first value of a
// subscription by itself, on the calling goroutine and with no observer:
// ProduceFirst returns what a subscription that stops at the first value
// (as First's does) would have received first: that value, the error it
// failed with, or ErrEmpty if it completed. When it returns, that
// subscription is over, as First's is when First returns. First calls
// ProduceFirst instead of subscribing, which spares the subscription and
// its observer (the scalar fusion of RxJava 2 and Reactor, for a source
// that knows its first value only when it runs).
//
// ProduceFirst is called only with a context that is not done yet. What
// First returns must not depend on which of the two ways it took: only
// the cost may.
type FirstProducer[T any] interface {
	Producer[T]
	ProduceFirst(ctx context.Context) (T, error)
}

// FromProducer returns a cold Observable that calls p.Produce for each
// subscription, as Create does with its function; First of it calls
// p.ProduceFirst if p is a FirstProducer. If p is a [Discarder], a value
// it emits once the subscription has ended (the subscriber left, a Take
// or First downstream had what it needed) is handed to its Discard, on
// the emitting goroutine, rather than dropped; and so is one that an
// Observable p subscribed with its observer emits then, which p emits.
//
// It panics if p is nil.
func FromProducer[T any](p Producer[T]) Observable[T] {
	if p == nil {
		panic("observable: FromProducer with nil p")
	}
	return Observable[T]{src: producerSource[T]{p}}
}

// producerSource runs a Producer for each subscription.
type producerSource[T any] struct{ p Producer[T] }

func (ps producerSource[T]) subscribe(s *scope, o Observer[T]) {
	d, _ := ps.p.(Discarder[T])
	ps.p.Produce(s, &createObserver[T]{s: s, ob: o, discard: d})
}

// firstProducerOf returns o's FirstProducer, if it has one.
func firstProducerOf[T any](o Observable[T]) (FirstProducer[T], bool) {
	ps, ok := o.src.(producerSource[T])
	if !ok {
		return nil, false
	}
	p, ok := ps.p.(FirstProducer[T])
	return p, ok
}

// produceFirst is First of a FirstProducer's Observable.
func produceFirst[T any](p FirstProducer[T], ctx context.Context) (T, error) {
	if err := ctx.Err(); err != nil {
		var zero T
		return zero, err
	}
	return p.ProduceFirst(ctx)
}
