package command

import (
	"context"
	"sync"

	"github.com/rxhystrix/rxhystrix/observable"
)

// core is what both kinds of command are made of, assembled once per
// command: the key's state and the user's functions the stages call.
// Exactly one of run and construct is set.
type core[In, Out any] struct {
	k *keyState
	// run is a Command's user code; construct an ObservableCommand's.
	run       func(context.Context, In) (Out, error)
	construct func(context.Context, In) observable.Observable[Out]
	// fallback is a Command's fallback; fallbackObs an ObservableCommand's.
	fallback    fallbackFunc[In, Out]
	fallbackObs func(context.Context, In, error) observable.Observable[Out]
	poolKey     func(In) string
	// discard is the WithDiscard function, or nil.
	discard func(Out)
	// isBad picks the errors that are bad requests (WithBadRequests), or
	// is nil; core.judge applies it to the user code's errors and to the
	// errors injected in their place (Config.Faults).
	isBad func(error) bool
	calls sync.Pool // *poolCall[In, Out]
	// spareAttempts holds the attempts of hedged calls that left nothing
	// behind, for the next (callHedged).
	spareAttempts sync.Pool // *attempts[In, Out]
}

func (c *core[In, Out]) state() *keyState { return c.k }

// drop is where a value of run's or the fallback's that no caller
// receives ends: it is handed to discard, when the command has one and
// the value came with a nil error. It is called outside every lock, on
// the goroutine that finds the value has nowhere to go.
func (c *core[In, Out]) drop(v Out, err error) {
	if err == nil && c.discard != nil {
		c.discard(v)
	}
}

// hasFallback reports whether the command has a fallback.
func (c *core[In, Out]) hasFallback() bool { return c.fallback != nil || c.fallbackObs != nil }
