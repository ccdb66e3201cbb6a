package command

import (
	"context"
	"sync/atomic"

	"github.com/rxhystrix/rxhystrix/observable"
)

// constructBody returns an ObservableCommand's Observable for in, or the
// Observable of the *PanicError construct panicked with.
func constructBody[In, Out any](construct func(context.Context, In) observable.Observable[Out], ctx context.Context, in In) (src observable.Observable[Out]) {
	defer func() {
		if v := recover(); v != nil {
			src = observable.Error[Out](newPanicError(v))
		}
	}()
	return construct(ctx, in)
}

// callSingle calls one, turning a panic into a *PanicError.
func callSingle[Out any](one observable.Single[Out], ctx context.Context) (v Out, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = newPanicError(p)
		}
	}()
	return one.Call(ctx)
}

// subscribeSafely subscribes o to src, turning a panic while src is
// subscribed into o's error, and returns the subscription (nil after a
// panic). With wait, it returns only once the subscription has ended or
// ctx has, so that a pool worker stays taken while the user's Observable
// runs. A panic raised once theirs is set is the subscriber's
// (subscription.tellNext), and goes on.
func subscribeSafely[Out any](ctx context.Context, src observable.Observable[Out], o observable.Observer[Out], wait bool, theirs *atomic.Bool) observable.Subscription {
	var sub observable.Subscription
	func() {
		defer failOnPanic(o, theirs)
		sub = src.Subscribe(ctx, o)
	}()
	if sub != nil && wait {
		select {
		case <-sub.Done():
		case <-ctx.Done():
		}
	}
	return sub
}

// recoverSubscribe returns src with a panic raised while it is subscribed
// turned into a *PanicError: a user's Observable that panics fails the
// execution instead of the process. A panic raised once theirs, if not
// nil, is set is the subscriber's, and goes on (see subscribeSafely).
func recoverSubscribe[Out any](src observable.Observable[Out], theirs *atomic.Bool) observable.Observable[Out] {
	return observable.Create(func(ctx context.Context, o observable.Observer[Out]) {
		defer failOnPanic(o, theirs)
		src.Subscribe(ctx, o)
	})
}

// failOnPanic, deferred around the subscription of the user's Observable,
// turns a panic there into o's *PanicError, unless theirs, if not nil, is
// set: the panic is then the subscriber's (subscription.tellNext), and
// goes on.
func failOnPanic[Out any](o observable.Observer[Out], theirs *atomic.Bool) {
	if v := recover(); v != nil {
		if theirs != nil && theirs.Load() {
			panic(v)
		}
		o.OnError(newPanicError(v))
	}
}
