package observable

import (
	"context"
	"slices"
	"sync/atomic"
)

// Create returns a cold Observable whose every subscription calls f with
// the subscription's context and an observer. f may emit from any
// goroutine, but not concurrently; emissions after a terminal event or
// after ctx is done are dropped. f should stop when ctx is done.
func Create[T any](f func(ctx context.Context, o Observer[T])) Observable[T] {
	if f == nil {
		panic("observable: Create with nil f")
	}
	return Observable[T]{subscribe: func(ctx context.Context, o Observer[T]) {
		f(ctx, &createObserver[T]{ctx: ctx, ob: o})
	}}
}

// createObserver keeps a producer to the Rx grammar.
type createObserver[T any] struct {
	ctx     context.Context
	stopped atomic.Bool
	ob      Observer[T]
}

func (c *createObserver[T]) OnNext(v T) {
	if !c.stopped.Load() && c.ctx.Err() == nil {
		c.ob.OnNext(v)
	}
}

func (c *createObserver[T]) OnError(err error) {
	if c.stopped.CompareAndSwap(false, true) && c.ctx.Err() == nil {
		c.ob.OnError(err)
	}
}

func (c *createObserver[T]) OnCompleted() {
	if c.stopped.CompareAndSwap(false, true) && c.ctx.Err() == nil {
		c.ob.OnCompleted()
	}
}

// Just returns an Observable that emits vs in order, then completes. vs is
// copied.
func Just[T any](vs ...T) Observable[T] {
	if len(vs) == 1 {
		v := vs[0]
		return Observable[T]{subscribe: func(ctx context.Context, o Observer[T]) {
			o.OnNext(v)
			o.OnCompleted()
		}}
	}
	vs = slices.Clone(vs)
	return Observable[T]{subscribe: func(ctx context.Context, o Observer[T]) {
		for _, v := range vs {
			if ctx.Err() != nil {
				return
			}
			o.OnNext(v)
		}
		o.OnCompleted()
	}}
}

// Error returns an Observable that fails with err at once.
func Error[T any](err error) Observable[T] {
	return Observable[T]{subscribe: func(ctx context.Context, o Observer[T]) { o.OnError(err) }}
}

// Empty returns an Observable that completes at once.
func Empty[T any]() Observable[T] {
	return Observable[T]{subscribe: func(ctx context.Context, o Observer[T]) { o.OnCompleted() }}
}

// Never returns an Observable that emits nothing and never terminates; its
// subscription ends only by Unsubscribe or its context.
func Never[T any]() Observable[T] {
	return Observable[T]{subscribe: func(ctx context.Context, o Observer[T]) {}}
}

// Defer returns an Observable that calls f at each subscription and
// subscribes to the Observable it returns.
func Defer[T any](f func() Observable[T]) Observable[T] {
	if f == nil {
		panic("observable: Defer with nil f")
	}
	return Observable[T]{subscribe: func(ctx context.Context, o Observer[T]) {
		f().run(ctx, o)
	}}
}
