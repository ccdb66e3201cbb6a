package command

import (
	"context"

	"github.com/rxhystrix/rxhystrix/observable"
)

// safeSubscribe subscribes construct(ctx, in) to o, turning a panic in
// construct or while its Observable is subscribed into an error. With
// wait, it returns only when the subscription has ended, so that a pool
// worker stays taken while the user's Observable runs. With watch (ctx
// joins the caller's context), it reports whether the subscription has
// ended, and if ctx ended first (the caller left), o fails with ctx's
// error, so that the execution ends as cancelled whatever context its
// subscriber has; without, it reports true.
func safeSubscribe[In, Out any](ctx context.Context, construct func(context.Context, In) observable.Observable[Out], in In, o observable.Observer[Out], wait, watch bool) (ended bool) {
	var src observable.Observable[Out]
	func() {
		defer func() {
			if v := recover(); v != nil {
				src = observable.Error[Out](newPanicError(v))
			}
		}()
		src = construct(ctx, in)
	}()
	var sub observable.Subscription
	func() {
		defer func() {
			if v := recover(); v != nil {
				o.OnError(newPanicError(v))
			}
		}()
		sub = src.Subscribe(ctx, o)
	}()
	if sub == nil {
		return true // it panicked, and o has failed
	}
	if wait {
		select {
		case <-sub.Done():
		case <-ctx.Done():
		}
	}
	if !watch {
		return true
	}
	select {
	case <-sub.Done():
	default:
		return false
	}
	if err := ctx.Err(); err != nil {
		o.OnError(err)
	}
	return true
}

// recoverSubscribe returns src with a panic raised while it is subscribed
// turned into a *PanicError: a user's Observable that panics fails the
// execution instead of the process.
func recoverSubscribe[Out any](src observable.Observable[Out]) observable.Observable[Out] {
	return observable.Create(func(ctx context.Context, o observable.Observer[Out]) {
		defer func() {
			if v := recover(); v != nil {
				o.OnError(newPanicError(v))
			}
		}()
		src.Subscribe(ctx, o)
	})
}
