package hystrix

import (
	"context"
	"runtime"
	"sync/atomic"
	"time"
)

// runContext is the context GoC's and DoC's run is given. hystrix-go
// gives run the caller's context, which lives on after run returns: a run
// that returns an *http.Response made with it leaves the body to be read
// after DoC returns, until the caller's context ends. rxhystrix ends run's
// context at the timeout and when the caller leaves, which this package
// keeps, but also once run has returned, which would break that body. So
// a runContext ends with run's context only while run runs, and with the
// caller's at any time.
type runContext struct {
	context.Context                 // ended as above, with the cause its Err reports
	run             context.Context // run's context: its deadline while run runs
	caller          context.Context // the caller's: its deadline once run has returned
	returned        atomic.Bool
}

// Deadline is run's context's while run runs (the timeout's or the
// caller's, the earlier), and the caller's once run has returned.
func (c *runContext) Deadline() (time.Time, bool) {
	if c.returned.Load() {
		if c.caller == nil {
			return time.Time{}, false
		}
		return c.caller.Deadline()
	}
	return c.run.Deadline()
}

// Err is the error of the context that ended c (context.DeadlineExceeded
// at the caller's deadline, say), and nil before c has ended.
func (c *runContext) Err() error {
	if c.Context.Err() == nil {
		return nil
	}
	return context.Cause(c.Context)
}

// runContextOf returns the context to give run for run's context ctx and
// the caller's context caller, and the function to call as run returns,
// after which the context no longer ends with ctx. It ends with caller
// until it is unreachable: a caller's context that never ends does not
// keep a registration for each call. Its values are ctx's.
func runContextOf(ctx, caller context.Context) (context.Context, func()) {
	inner, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	c := &runContext{Context: inner, run: ctx, caller: caller}
	if caller != nil && caller.Done() != nil {
		stop := context.AfterFunc(caller, func() { cancel(caller.Err()) })
		runtime.AddCleanup(c, func(stop func() bool) { stop() }, stop)
	}
	stop := context.AfterFunc(ctx, func() { cancel(ctx.Err()) })
	return c, func() {
		stop()
		c.returned.Store(true)
	}
}
