package observable

import (
	"context"
	"slices"
	"sync/atomic"
)

// Create returns a cold Observable whose every subscription calls f with
// the subscription's context and an observer. f may emit synchronously,
// before it returns, or later from goroutines it starts, but never
// concurrently. Emissions after a terminal event or after ctx is done are
// dropped. ctx is done once the subscriber no longer wants values (it
// unsubscribed, a Take or First downstream has what it needs, a Timeout
// fired, the stream terminated); f and any goroutine it starts should
// then stop.
//
// It panics if f is nil.
func Create[T any](f func(ctx context.Context, o Observer[T])) Observable[T] {
	if f == nil {
		panic("observable: Create with nil f")
	}
	return Observable[T]{src: createSource[T](f)}
}

// createSource is Create's f, which a function value keeps in the
// Observable's source without an allocation.
type createSource[T any] func(ctx context.Context, o Observer[T])

func (f createSource[T]) subscribe(s *scope, o Observer[T]) {
	f(s, &createObserver[T]{s: s, ob: o})
}

// createObserver keeps Create's function and a Producer to the Rx
// grammar.
type createObserver[T any] struct {
	s       *scope
	stopped atomic.Bool
	ob      Observer[T]
	// discard is a Producer's that is a Discarder, handed the values that
	// come after the subscription has ended; nil for Create's function.
	discard Discarder[T]
}

func (c *createObserver[T]) OnNext(v T) {
	switch {
	case !c.stopped.Load() && c.s.live():
		c.ob.OnNext(v)
	case c.discard != nil:
		c.discard.Discard(v)
	}
}

// Discard hands v, a value emitted to c that its subscription dropped,
// to the Producer's Discard, if it has one.
func (c *createObserver[T]) Discard(v T) {
	if c.discard != nil {
		c.discard.Discard(v)
	}
}

func (c *createObserver[T]) OnError(err error) {
	if !c.stopped.Load() && c.stopped.CompareAndSwap(false, true) && c.s.live() {
		c.ob.OnError(err)
	}
}

func (c *createObserver[T]) OnCompleted() {
	if !c.stopped.Load() && c.stopped.CompareAndSwap(false, true) && c.s.live() {
		c.ob.OnCompleted()
	}
}

// Just returns an Observable that emits vs in order, then completes. vs is
// copied; the values themselves are shared by every subscription.
func Just[T any](vs ...T) Observable[T] {
	// Up to four values are kept by value, in the interface's own
	// allocation: a small one, with no pointers when T has none.
	switch len(vs) {
	case 1:
		return Observable[T]{one: justOne[T]{vs[0]}} // a Single: First of it is its value
	case 2:
		return Observable[T]{src: just2[T]{vs[0], vs[1]}}
	case 3:
		return Observable[T]{src: just3[T]{vs[0], vs[1], vs[2]}}
	case 4:
		return Observable[T]{src: just4[T]{vs[0], vs[1], vs[2], vs[3]}}
	}
	return Observable[T]{src: &justMany[T]{slices.Clone(vs)}}
}

type (
	just2[T any] [2]T
	just3[T any] [3]T
	just4[T any] [4]T
)

func (j just2[T]) subscribe(s *scope, o Observer[T]) { emitAll(s, o, j[:]) }
func (j just3[T]) subscribe(s *scope, o Observer[T]) { emitAll(s, o, j[:]) }
func (j just4[T]) subscribe(s *scope, o Observer[T]) { emitAll(s, o, j[:]) }

type justMany[T any] struct{ vs []T }

func (j *justMany[T]) subscribe(s *scope, o Observer[T]) { emitAll(s, o, j.vs) }

// emitAll emits vs while s is live, then completes.
func emitAll[T any](s *scope, o Observer[T], vs []T) {
	for _, v := range vs {
		if !s.live() {
			return
		}
		o.OnNext(v)
	}
	o.OnCompleted()
}

// copyInto returns a copy of vs: in buf if it fits, else in a new slice.
func copyInto[T any](buf, vs []T) []T {
	if len(vs) <= len(buf) {
		return buf[:copy(buf, vs)]
	}
	return slices.Clone(vs)
}

// justOne is Just of one value, a Single.
type justOne[T any] struct{ v T }

func (j justOne[T]) Call(ctx context.Context) (T, error) {
	if err := ctx.Err(); err != nil {
		var zero T
		return zero, err
	}
	return j.v, nil
}

func (j justOne[T]) SubscribeSingle(ctx context.Context, r SingleObserver[T]) {
	r.OnResult(j.Call(ctx))
}

func (justOne[T]) Async() bool { return false }

func (justOne[T]) Joinable() bool { return true }

func (j justOne[T]) subscribe(s *scope, o Observer[T]) {
	o.OnNext(j.v)
	o.OnCompleted()
}

// Error returns an Observable that fails with err at once. It is a
// [Single]: First of it returns err.
//
// It panics if err is nil.
func Error[T any](err error) Observable[T] {
	if err == nil {
		panic("observable: Error with nil err")
	}
	return Observable[T]{one: errorOne[T]{err}}
}

// errorOne is Error's Single.
type errorOne[T any] struct{ err error }

func (e errorOne[T]) Call(ctx context.Context) (T, error) {
	var zero T
	if err := ctx.Err(); err != nil {
		return zero, err
	}
	return zero, e.err
}

func (e errorOne[T]) SubscribeSingle(ctx context.Context, r SingleObserver[T]) {
	r.OnResult(e.Call(ctx))
}

func (errorOne[T]) Async() bool { return false }

func (errorOne[T]) Joinable() bool { return true }

func (e errorOne[T]) subscribe(s *scope, o Observer[T]) { o.OnError(e.err) }

// Empty returns an Observable that completes at once.
func Empty[T any]() Observable[T] {
	return Observable[T]{src: sourceFunc[T](func(s *scope, o Observer[T]) { o.OnCompleted() })}
}

// Never returns an Observable that emits nothing and never terminates; its
// subscriptions end only by Unsubscribe or their context.
func Never[T any]() Observable[T] {
	return Observable[T]{src: sourceFunc[T](func(s *scope, o Observer[T]) {})}
}

// Defer returns an Observable that calls f at each subscription and
// subscribes to the Observable it returns. A zero Observable from f
// completes at once.
//
// It panics if f is nil.
func Defer[T any](f func() Observable[T]) Observable[T] {
	if f == nil {
		panic("observable: Defer with nil f")
	}
	return Observable[T]{src: deferSource[T](f)}
}

type deferSource[T any] func() Observable[T]

func (f deferSource[T]) subscribe(s *scope, o Observer[T]) { f().run(s, o) }

// DeferContext is Defer for a factory that needs the subscription's
// context: f is called at each subscription with the context the
// subscription's sources see (done once the subscriber no longer wants
// values), so that it can leave undone what a subscriber that has already
// left would not use. A zero Observable from f completes at once.
//
// It panics if f is nil.
func DeferContext[T any](f func(ctx context.Context) Observable[T]) Observable[T] {
	if f == nil {
		panic("observable: DeferContext with nil f")
	}
	return Observable[T]{src: deferContextSource[T](f)}
}

type deferContextSource[T any] func(context.Context) Observable[T]

func (f deferContextSource[T]) subscribe(s *scope, o Observer[T]) { f(s).run(s, o) }
