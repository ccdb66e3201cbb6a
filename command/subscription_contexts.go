package command

import (
	"context"
)

// What a subscription watches: the subscriber's and the caller's contexts.

// watch arranges for the end of the subscriber's and the caller's
// contexts to cancel the execution, and returns what stops that. A
// context that can tell its end synchronously (the subscription's does)
// does: the execution has ended, and its permits are back, when
// Unsubscribe returns.
func (s *subscription[In, Out]) watch(subCtx, callerCtx context.Context) (unwatch [2]func() bool) {
	cancel := s.cancel // one function value for both (bench/peers rxhystrix-pool-queue)
	unwatch[0] = afterEnd(subCtx, cancel)
	if callerCtx != subCtx {
		unwatch[1] = afterEnd(callerCtx, cancel)
	}
	return unwatch
}

// afterEnd calls f once ctx ends, on the goroutine that ends it where ctx
// can say so (as the contexts of package observable and of package
// context's own derivations do), and returns what stops it; for a context
// that never ends it does nothing.
//
// A context of package observable is asked first: its Done makes a
// channel that nobody would read (bench/peers rxhystrix-*-queue).
func afterEnd(ctx context.Context, f func()) func() bool {
	if af, ok := ctx.(interface{ AfterFunc(func()) func() bool }); ok {
		return af.AfterFunc(f)
	}
	if ctx.Done() == nil {
		return nil
	}
	return context.AfterFunc(ctx, f)
}

// stopAll calls the functions of fs that are not nil.
func stopAll(fs [2]func() bool) {
	for _, stop := range fs {
		if stop != nil {
			stop()
		}
	}
}

// leftErr returns the error of the subscriber's or the caller's context,
// whichever has ended, or nil.
func (s *subscription[In, Out]) leftErr() error {
	if err := s.subCtx.Err(); err != nil {
		return err
	}
	return s.callerCtx.Err()
}

// neverEnds reports whether the caller's context adds nothing to the
// subscriber's: it never ends, or it is the subscriber's.
func neverEnds(callerCtx, subCtx context.Context) bool {
	return callerCtx == subCtx || callerCtx.Done() == nil
}
