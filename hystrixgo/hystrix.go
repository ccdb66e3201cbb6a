package hystrix

import (
	"context"
	"errors"
	"runtime/debug"
	"time"

	"github.com/rxhystrix/rxhystrix/command"
)

// Go runs run as a command of name in the background, as GoC does with
// context.Background.
func Go(name string, run func() error, fallback func(error) error) chan error {
	c := call{run: run}
	if fallback != nil {
		c.fallback = fallback
	}
	return goCall(context.Background(), name, c)
}

// GoC runs run as a command of name in the background and returns at
// once. The channel, of capacity 1, receives the command's error if
// there is one (see DoC); after a success, or a fallback's success, it
// receives nothing and is never closed. fallback may be nil.
func GoC(ctx context.Context, name string, run func(context.Context) error, fallback func(context.Context, error) error) chan error {
	c := call{runC: run}
	if fallback != nil {
		c.fallbackC = fallback
	}
	return goCall(ctx, name, c)
}

func goCall(ctx context.Context, name string, c call) chan error {
	errs := make(chan error, 1)
	e := current()
	go func() {
		if err := e.do(ctx, name, c); err != nil {
			errs <- err
		}
	}()
	return errs
}

// Do runs run as a command of name and waits for it, as DoC does with
// context.Background.
func Do(name string, run func() error, fallback func(error) error) error {
	c := call{run: run}
	if fallback != nil {
		c.fallback = fallback
	}
	return current().do(context.Background(), name, c)
}

// DoC runs run as a command of name and waits for it: through the
// circuit, in the name's pool of MaxConcurrentRequests, under its
// timeout. It returns nil when run or the fallback succeeds. Otherwise,
// without a fallback, it returns run's error as it is, ErrTimeout,
// ErrCircuitOpen, ErrMaxConcurrency, or ctx.Err() when ctx ends first; the
// fallback (which may be nil) is called with that same error, and when it
// fails DoC returns "fallback failed with '<its error>'. run error was
// '<run's error>'".
//
// At the timeout DoC returns and run's context is cancelled; run keeps
// its place in the pool until it returns (see the package doc).
func DoC(ctx context.Context, name string, run func(context.Context) error, fallback func(context.Context, error) error) error {
	c := call{runC: run}
	if fallback != nil {
		c.fallbackC = fallback
	}
	return current().do(ctx, name, c)
}

// do runs c as a command of name and returns hystrix-go's error.
func (e *engine) do(ctx context.Context, name string, c call) error {
	cb, _ := e.circuit(name)
	c.caller = ctx
	var start time.Time
	if len(cb.collectors) > 0 {
		c.rec = &record{}
		start = e.reg.Clock().Now()
	}
	hasFallback := c.fallback != nil || c.fallbackC != nil
	cmd := cb.core.plain
	if hasFallback {
		cmd = cb.core.withFb
		c.fbOut = &fallbackOutcome{}
	}
	_, err := cmd.Execute(ctx, c)
	out := err
	ce, isCommandErr := err.(*command.Error) // Execute returns it unwrapped
	switch {
	case err == nil:
	case isCommandErr:
		out = translate(ce)
		if fb := ce.FallbackErr; hasFallback && fb != nil && !isFallbackSentinel(fb) {
			var p *command.PanicError
			if errors.As(fb, &p) {
				out = fallbackFailure(p, out)
			} else {
				out = fb // hystrix-go's message, from callFallback
			}
		}
	case hasFallback && c.fbOut.ran.Load():
		// The context ended while the fallback ran: rxhystrix drops its
		// result, hystrix-go returns it (and calls no second fallback).
		out = c.fbOut.err
	case hasFallback:
		// The context ended first: rxhystrix runs no fallback then,
		// hystrix-go does.
		if c.rec != nil {
			c.rec.kind.Store(int32(kindOf(err)))
		}
		out = callFallbackRecovering(ctx, c, err)
	}
	if c.rec != nil {
		cb.update(c.rec, err, e.reg.Clock().Since(start))
	}
	return out
}

// callFallbackRecovering is callFallback for a fallback that no command
// runs, and so none recovers: a panic in it fails the fallback with a
// *command.PanicError, reported in hystrix-go's message as when the
// command runs the fallback.
func callFallbackRecovering(ctx context.Context, c call, runErr error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fallbackFailure(&command.PanicError{Value: v, Stack: debug.Stack()}, runErr)
		}
	}()
	return callFallback(ctx, c, runErr)
}

func isFallbackSentinel(err error) bool {
	return err == command.ErrFallbackMissing || err == command.ErrFallbackDisabled || err == command.ErrFallbackRejected
}
