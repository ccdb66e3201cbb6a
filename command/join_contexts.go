package command

import (
	"context"
	"time"
)

// joinContexts returns a context that is done when either is done and
// whose values are looked up in sub, then in caller.
func joinContexts(sub, caller context.Context) (context.Context, func()) {
	values := valuesOf(sub, caller)
	if values == sub || caller.Done() == nil {
		return values, noop
	}
	ctx, cancel := context.WithCancel(values)
	if caller.Err() != nil {
		// AfterFunc would tell it on a goroutine of its own, after the
		// caller had begun work for a caller that had left.
		cancel()
		return ctx, noop
	}
	stop := context.AfterFunc(caller, cancel)
	return ctx, func() { stop(); cancel() }
}

// valuesOf returns a context whose values are looked up in sub, then in
// caller, and whose deadline is the earlier of theirs. It is done when
// sub is: whoever uses it for a run watches caller too.
func valuesOf(sub, caller context.Context) context.Context {
	if caller == nil || caller == sub || caller == context.Background() {
		return sub
	}
	return valuesFrom{Context: sub, caller: caller}
}

// valuesFrom looks values up in its Context, then in caller, and reports
// the earlier of their deadlines, so that run sees the caller's deadline
// when it comes first, whichever context carries it.
type valuesFrom struct {
	context.Context
	caller context.Context
}

func (v valuesFrom) Deadline() (time.Time, bool) {
	d, ok := v.Context.Deadline()
	if c, cok := v.caller.Deadline(); cok && (!ok || c.Before(d)) {
		return c, true
	}
	return d, ok
}

func (v valuesFrom) Value(key any) any {
	if x := v.Context.Value(key); x != nil {
		return x
	}
	return v.caller.Value(key)
}

func noop() {}
