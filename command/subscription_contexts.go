package command

import (
	"context"

	"github.com/rxhystrix/rxhystrix/internal/ctxend"
)

// What a subscription watches: the subscriber's and the caller's contexts.

// watch arranges for the end of the subscriber's and the caller's
// contexts to cancel the execution, and returns what stops that. A
// context that can tell its end synchronously (the subscription's does)
// does: the execution has ended, and its permits are back, when
// Unsubscribe returns.
func (s *subscription[In, Out]) watch(subCtx, callerCtx context.Context) (w contextWatches) {
	s.leave = s.cancel // one function value for both (bench/peers rxhystrix-pool-queue)
	w.told[0], w.stops[0] = watchEnd(subCtx, &s.leave)
	if callerCtx != subCtx {
		w.told[1], w.stops[1] = watchEnd(callerCtx, &s.leave)
	}
	return w
}

// contextWatches is how the subscriber's and the caller's contexts, in
// that order, tell a subscription that they have ended: each holds the
// subscription's leave by address (told, a ctxend.Notifier, as the
// subscription's own context of package observable is), or a
// registration of context.AfterFunc, or nothing for a context that never
// ends.
type contextWatches struct {
	stops [2]func() bool
	told  [2]bool
}

// watchEnd arranges for *leave to be called once ctx ends, on the
// goroutine that ends it where ctx can say so (as the contexts of package
// observable and of package context's own derivations do): told says ctx
// holds leave, and stop otherwise stops a registration; for a context
// that never ends it does nothing.
//
// A context of package observable is asked first: it keeps leave in a
// word of its own, where its AfterFunc allocates the registration, the
// function that stops it and the context's watch state (command
// BenchmarkObservableCommand/plain/ToSlice: 1.27 → 1.02 µs, 9 → 6
// allocations), and its Done makes a channel that nobody would read
// (bench/peers rxhystrix-*-queue).
func watchEnd(ctx context.Context, leave *func()) (told bool, stop func() bool) {
	if n, ok := ctx.(ctxend.Notifier); ok && n.NotifyEnd(leave) {
		return true, nil
	}
	if af, ok := ctx.(interface{ AfterFunc(func()) func() bool }); ok {
		return false, af.AfterFunc(*leave)
	}
	if ctx.Done() == nil {
		return false, nil
	}
	return false, context.AfterFunc(ctx, *leave)
}

// stop stops the watches of the subscriber's and the caller's contexts
// that leave, the function they call, has not been called by.
func (w *contextWatches) stop(subCtx, callerCtx context.Context, leave *func()) {
	for i, ctx := range [2]context.Context{subCtx, callerCtx} {
		switch {
		case w.told[i]:
			ctx.(ctxend.Notifier).StopNotify(leave)
		case w.stops[i] != nil:
			w.stops[i]()
		}
	}
}

// leftErr returns the error of the caller's or the subscriber's context,
// whichever has ended, or nil. The caller's comes first: when its deadline
// passes, an Observe's subscriber leaves too, and unsubscribing ends the
// subscriber's context with context.Canceled, where the caller must get
// context.DeadlineExceeded, as from Execute.
func (s *subscription[In, Out]) leftErr() error {
	if err := s.callerCtx.Err(); err != nil {
		return err
	}
	return s.subCtx.Err()
}

// neverEnds reports whether the caller's context adds nothing to the
// subscriber's: it never ends, or it is the subscriber's.
func neverEnds(callerCtx, subCtx context.Context) bool {
	return callerCtx == subCtx || callerCtx.Done() == nil
}

// addsValues reports whether the caller's context may add values or an
// end to the subscriber's: it is neither the subscriber's nor
// context.Background (nor nil), so that run's context must look its
// values up in both (valuesOf).
func addsValues(callerCtx, subCtx context.Context) bool {
	return callerCtx != nil && callerCtx != subCtx && callerCtx != context.Background()
}
