package command

import (
	"context"
	"errors"
	"time"
)

// joinContexts returns a context that is done when either is done and
// whose values are looked up in sub, then in caller. If caller is done
// already, so is the context, at once, with caller's error.
func joinContexts(sub, caller context.Context) (context.Context, func()) {
	values := valuesOf(sub, caller)
	if values == sub || caller.Done() == nil {
		return values, noop
	}
	if caller.Err() != nil {
		// AfterFunc would tell it on a goroutine of its own, after work
		// had begun for a caller who had left.
		return endedContext{Context: values, caller: caller}, noop
	}
	inner, cancel := context.WithCancelCause(values)
	ctx := &joinedContext{Context: inner, caller: caller}
	stop := context.AfterFunc(caller, func() { cancel(context.Cause(caller)) })
	return ctx, func() { stop(); cancel(nil) }
}

// joinedContext is a joined context whose caller's context may end: once
// the caller's context has ended it, its Err is that context's error and
// its cause that context's cause (context.DeadlineExceeded, say), as a
// child's of package context would be, and as a subscription's caller
// gets (subscription.leftErr); a context.WithCancel alone would say
// context.Canceled.
type joinedContext struct {
	context.Context // context.WithCancelCause of the values
	caller          context.Context
}

func (j *joinedContext) Err() error {
	err := j.Context.Err()
	if err == nil {
		return nil
	}
	// Ended by the caller's context, not by the subscriber's: the cause
	// is the one the caller's context gave.
	if cerr := j.caller.Err(); cerr != nil && errors.Is(context.Cause(j.Context), context.Cause(j.caller)) {
		return cerr
	}
	return err
}

// valuesOf returns a context whose values are looked up in sub, then in
// caller, and whose deadline is the earlier of theirs. It is done when
// sub is: whoever uses it for a run watches caller too.
func valuesOf(sub, caller context.Context) context.Context {
	if !addsValues(caller, sub) {
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

// endedContext is a joined context whose caller's context had ended when
// it was made: done, with that context's error, so that an execution
// joined to a caller who has left ends as Execute's would, with the same
// error (context.DeadlineExceeded, say).
type endedContext struct {
	context.Context // the values, and the deadline
	caller          context.Context
}

func (e endedContext) Done() <-chan struct{} { return e.caller.Done() }

func (e endedContext) Err() error { return e.caller.Err() }
