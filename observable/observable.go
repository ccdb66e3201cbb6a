package observable

import "context"

// Observer receives the notifications of an Observable: OnNext any number
// of times, then at most one of OnError and OnCompleted. An Observable
// never calls an Observer concurrently, but it may call it from different
// goroutines one after another.
type Observer[T any] interface {
	OnNext(v T)
	OnError(err error)
	OnCompleted()
}

// Subscription is a live subscription to an Observable. Its methods are
// safe for concurrent use.
type Subscription interface {
	// Unsubscribe stops the subscription: the source sees its context
	// done and the observer receives nothing more. It is safe to call
	// more than once and from any goroutine; after a terminal event it
	// does nothing.
	Unsubscribe()
	// Done returns a channel closed when the subscription has ended: by a
	// terminal event (after the observer received it), by Unsubscribe, or
	// by the end of the context given to Subscribe. When it was cancelled
	// (by Unsubscribe or the context), the DoOnUnsubscribe and Finally
	// functions the cancellation runs have returned by then. After a
	// terminal event, Finally runs once the observer has received it, on
	// the goroutine that delivered it, and may still be running.
	Done() <-chan struct{}
}

// Observable is a typed, push-based stream of values. It is cold unless
// documented otherwise: each subscription runs the source anew. Nothing
// switches goroutines unless an operator says it does ([Observable.SubscribeOn],
// [Observable.Timeout], [FromChannel], [Interval], and [Merge] or
// [FlatMap] of asynchronous sources).
//
// An Observable is an immutable value: copying it is cheap, and it is safe
// to subscribe to from many goroutines at once. The zero Observable
// completes at once without emitting.
type Observable[T any] struct {
	src source[T] // nil for the zero Observable and for a Single's
	// one is the Single of an Observable made by FromSingle, kept here
	// rather than in a source of its own so that FromSingle allocates
	// nothing (bench/peers rxhystrix-semaphore-toobservable).
	//
	// A Producer has no field of its own: with one, every Observable
	// passed by value grew by two words, and First of a Command's
	// ToObservable with 75 callers went from 240 to 315 ns in an A/B of
	// alternating rounds (bench/peers rxhystrix-semaphore-toobservable).
	one Single[T]
}

// source is what an Observable runs for each subscription.
type source[T any] interface {
	// subscribe runs the source for one subscription. s is the context
	// the source sees; o is the downstream observer. The source must
	// follow the Rx grammar and stop calling o once s has ended.
	subscribe(s *scope, o Observer[T])
}

// sourceFunc adapts a function to source.
type sourceFunc[T any] func(s *scope, o Observer[T])

func (f sourceFunc[T]) subscribe(s *scope, o Observer[T]) { f(s, o) }

// Subscribe starts a subscription that delivers to ob. The subscription
// ends at the first terminal event, on Unsubscribe, or when ctx is done
// (a nil ctx means context.Background); the source sees its context done
// in each case. Subscribe runs the source on the calling goroutine: for a
// synchronous source it returns after the source has finished, for an
// asynchronous one it returns once the source has started. A value that
// comes once the subscription has ended is not told to ob: it is handed
// to ob's Discard if ob is a [Discarder], and otherwise to the Discard of
// o's Single or Producer, if that is a Discarder.
//
// It panics if ob is nil.
func (o Observable[T]) Subscribe(ctx context.Context, ob Observer[T]) Subscription {
	if ob == nil {
		panic("observable: Subscribe with nil ob")
	}
	s := &subscriber[T]{ob: ob, discard: discarderOf(o)}
	s.init(ctx)
	o.run(&s.scope, s)
	return s
}

// SubscribeFunc subscribes with functions: next for each value, err for an
// error, done for completion. Any of them may be nil.
func (o Observable[T]) SubscribeFunc(ctx context.Context, next func(T), err func(error), done func()) Subscription {
	return o.Subscribe(ctx, funcObserver[T]{next: next, err: err, done: done})
}

// run subscribes o's source with s and ob, unless s has begun to end.
func (o Observable[T]) run(s *scope, ob Observer[T]) {
	if !s.live() {
		return
	}
	switch {
	case o.one != nil:
		if src, ok := o.one.(source[T]); ok {
			// One of this package's Singles, which emits directly.
			src.subscribe(s, ob)
			return
		}
		o.one.SubscribeSingle(s, singleToObserver[T]{s: s, o: ob})
	case o.src == nil:
		ob.OnCompleted()
	default:
		o.src.subscribe(s, ob)
	}
}

// subscriber is the end of a chain: it is the subscription, the scope the
// source sees, and the guard that keeps the observer to the Rx grammar.
type subscriber[T any] struct {
	scope
	ob      Observer[T]
	discard Discarder[T] // the Observable's, or nil
}

func (s *subscriber[T]) OnNext(v T) {
	if s.live() {
		s.ob.OnNext(v)
		return
	}
	// What the subscription drops goes back: to an observer that is a
	// Discarder (a Producer's, say, which hands it to the Producer), or
	// else to the Observable's Single or Producer, if it is one.
	if d, ok := s.ob.(Discarder[T]); ok {
		d.Discard(v)
	} else if s.discard != nil {
		s.discard.Discard(v)
	}
}

func (s *subscriber[T]) OnError(err error) {
	if s.begin() {
		defer s.finish(nil)
		s.ob.OnError(err)
	}
}

func (s *subscriber[T]) OnCompleted() {
	if s.begin() {
		defer s.finish(nil)
		s.ob.OnCompleted()
	}
}

func (s *subscriber[T]) Unsubscribe() { s.cancel(context.Canceled) }

// Done is closed once the subscription has ended and the functions its
// end runs (DoOnUnsubscribe, Finally) have returned, whichever goroutine
// ended it: the end of a caller's context, say, runs them on a goroutine
// of its own.
func (s *subscriber[T]) Done() <-chan struct{} { return s.scope.settledDone() }

// funcObserver adapts three optional functions to Observer.
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
