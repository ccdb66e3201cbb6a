package command

import "context"

// joinContexts returns a context that is done when either is done and
// whose values are looked up in sub, then in caller.
func joinContexts(sub, caller context.Context) (context.Context, func()) {
	values := valuesOf(sub, caller)
	if values == sub || caller.Done() == nil {
		return values, noop
	}
	ctx, cancel := context.WithCancel(values)
	stop := context.AfterFunc(caller, cancel)
	return ctx, func() { stop(); cancel() }
}

// valuesOf returns a context whose values are looked up in sub, then in
// caller.
func valuesOf(sub, caller context.Context) context.Context {
	if caller == nil || caller == sub || caller == context.Background() {
		return sub
	}
	return valuesFrom{Context: sub, caller: caller}
}

// valuesFrom looks values up in its Context, then in caller.
type valuesFrom struct {
	context.Context
	caller context.Context
}

func (v valuesFrom) Value(key any) any {
	if x := v.Context.Value(key); x != nil {
		return x
	}
	return v.caller.Value(key)
}

func noop() {}
