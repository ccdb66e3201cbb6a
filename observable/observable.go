package observable

import (
	"context"
	"errors"
)

// ErrTimeout is the error of an Observable that did not terminate within
// the duration given to [Observable.Timeout].
var ErrTimeout = errors.New("observable: timed out")

// ErrEmpty is returned by [Observable.First] and [Observable.Last] when the
// Observable completed without emitting a value.
var ErrEmpty = errors.New("observable: completed without a value")

// Observer receives the notifications of an Observable: OnNext any number
// of times, then at most one of OnError and OnCompleted. An Observable
// never calls an Observer concurrently.
type Observer[T any] interface {
	OnNext(v T)
	OnError(err error)
	OnCompleted()
}

// Subscription is a live subscription to an Observable.
type Subscription interface {
	// Unsubscribe stops the subscription: the source sees its context done
	// and the observer receives nothing more. It is safe to call more than
	// once and from any goroutine.
	Unsubscribe()
	// Done returns a channel closed when the subscription has ended, by a
	// terminal event (after the observer received it) or by Unsubscribe or
	// the end of the subscriber's context.
	Done() <-chan struct{}
}

// Observable is a typed, push-based stream of values. It is cold unless
// documented otherwise: each subscription runs the source anew. Nothing
// switches goroutines unless an operator says it does (SubscribeOn,
// Timeout, FromChannel, Merge or FlatMap of asynchronous sources).
//
// The zero Observable completes at once without emitting.
type Observable[T any] struct {
	// subscribe runs the source for one subscription. ctx is done when the
	// subscriber stops; o is never called after a terminal event.
	subscribe func(ctx context.Context, o Observer[T])
}

// Subscribe starts a subscription that delivers to ob. The subscription
// ends at the first terminal event, on Unsubscribe, or when ctx is done;
// the source sees its context done in each case. For a synchronous source
// Subscribe returns after the source has finished.
func (o Observable[T]) Subscribe(ctx context.Context, ob Observer[T]) Subscription {
	if ob == nil {
		panic("observable: Subscribe with nil observer")
	}
	s := &subscriber[T]{ob: ob}
	s.init(ctx)
	o.run(s, s)
	return s
}

// SubscribeFunc subscribes with functions; any of them may be nil.
func (o Observable[T]) SubscribeFunc(ctx context.Context, next func(T), err func(error), done func()) Subscription {
	return o.Subscribe(ctx, funcObserver[T]{next: next, err: err, done: done})
}

// run subscribes o's source with ctx and ob, unless ctx is already done.
func (o Observable[T]) run(ctx context.Context, ob Observer[T]) {
	if ctx.Err() != nil {
		return
	}
	if o.subscribe == nil {
		ob.OnCompleted()
		return
	}
	o.subscribe(ctx, ob)
}

// subscriber is the end of a chain: it is the subscription, the context
// the source sees, and the guard that enforces the Rx grammar.
type subscriber[T any] struct {
	scope
	ob Observer[T]
}

func (s *subscriber[T]) OnNext(v T) {
	if s.live() {
		s.ob.OnNext(v)
	}
}

func (s *subscriber[T]) OnError(err error) {
	if s.begin() {
		s.ob.OnError(err)
		s.finish(context.Canceled)
	}
}

func (s *subscriber[T]) OnCompleted() {
	if s.begin() {
		s.ob.OnCompleted()
		s.finish(context.Canceled)
	}
}

func (s *subscriber[T]) Unsubscribe() { s.cancel(context.Canceled) }

type funcObserver[T any] struct {
	next func(T)
	err  func(error)
	done func()
}

func (f funcObserver[T]) OnNext(v T) {
	if f.next != nil {
		f.next(v)
	}
}

func (f funcObserver[T]) OnError(err error) {
	if f.err != nil {
		f.err(err)
	}
}

func (f funcObserver[T]) OnCompleted() {
	if f.done != nil {
		f.done()
	}
}
