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
	calls       sync.Pool // *poolCall[In, Out]
	// spareAttempts holds the attempts of hedged calls that left nothing
	// behind, for the next (callHedged).
	spareAttempts sync.Pool // *attempts[In, Out]
}

func (c *core[In, Out]) state() *keyState { return c.k }

// hasFallback reports whether the command has a fallback.
func (c *core[In, Out]) hasFallback() bool { return c.fallback != nil || c.fallbackObs != nil }
