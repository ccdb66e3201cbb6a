package command

import (
	"context"
	"sync"
	"time"

	"github.com/rxhystrix/rxhystrix/internal/clock"
)

// runContextFor returns the context run gets under a timeout from start
// (about now, in Unix nanoseconds of c). A caller whose context can never
// be cancelled (its Done is nil, as context.Background's) gets a
// deadlineContext, which costs one small allocation, returned as deadline
// too; any other gets context.WithTimeout's, which follows the caller's
// cancellation and cause, and the cancel function that ends it. Without a
// timeout, run gets ctx itself. endRunContext ends either.
func runContextFor(ctx context.Context, c clock.Clock, start int64, timeout time.Duration) (runCtx context.Context, deadline *deadlineContext, end context.CancelFunc) {
	if timeout <= 0 {
		return ctx, nil, nil
	}
	if ctx.Done() == nil {
		d := newDeadlineContext(ctx, c, start+int64(timeout))
		return d, d, nil
	}
	runCtx, end = c.WithTimeout(ctx, timeout)
	return runCtx, nil, end
}

// deadlineContext is the context of a run with a timeout whose caller's
// context can never be cancelled: what context.WithDeadline gives, for a
// fraction of its cost. Its expiry is checked against the clock when Err
// is asked, and a timer is armed only when somebody waits on Done, so a
// run that never waits on its context costs one small allocation where
// context.WithDeadline costs four and a timer. It ends when the deadline
// passes, when the command times the run out, or when the command ends it
// after run returned.
type deadlineContext struct {
	parent context.Context
	clock  clock.Clock
	due    int64 // the deadline in Unix nanoseconds, as clock.UnixNano reads clock

	mu    sync.Mutex
	err   error
	done  chan struct{} // made by the first Done
	timer clock.Timer   // armed by the first Done

	afterFuncs clock.AfterFuncs
}

// newDeadlineContext returns the context of a run due at due, in Unix
// nanoseconds, or at parent's deadline if that comes first.
func newDeadlineContext(parent context.Context, c clock.Clock, due int64) *deadlineContext {
	if d, ok := parent.Deadline(); ok && d.UnixNano() < due {
		due = d.UnixNano()
	}
	return &deadlineContext{parent: parent, clock: c, due: due}
}

// Deadline returns the run's deadline, in the local time zone as
// context.WithTimeout's.
func (c *deadlineContext) Deadline() (time.Time, bool) { return time.Unix(0, c.due), true }

// Value returns the caller's context's value for key.
func (c *deadlineContext) Value(key any) any { return c.parent.Value(key) }

// Err returns context.DeadlineExceeded once the deadline has passed,
// context.Canceled once the command ended the context, and nil before.
func (c *deadlineContext) Err() error {
	now := clock.UnixNano(c.clock)
	c.mu.Lock()
	err := c.err
	c.mu.Unlock()
	if err == nil && now >= c.due {
		c.finish(context.DeadlineExceeded)
		c.mu.Lock()
		err = c.err
		c.mu.Unlock()
	}
	return err
}

// expiredAt reports whether the deadline has passed at now (Unix
// nanoseconds) or the command timed the run out: Err's verdict for a
// caller that has read the clock.
func (c *deadlineContext) expiredAt(now int64) bool {
	if now >= c.due {
		return true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err == context.DeadlineExceeded
}

// Done returns a channel closed when the context ends. The first call
// arms a timer for the deadline.
func (c *deadlineContext) Done() <-chan struct{} {
	c.mu.Lock()
	if c.done != nil {
		defer c.mu.Unlock()
		return c.done
	}
	c.done = make(chan struct{})
	ended := c.err != nil
	if ended {
		close(c.done)
	}
	done := c.done
	c.mu.Unlock()
	if ended {
		return done
	}
	// The clock is used outside the lock: a manual clock fires timers
	// while holding its own.
	if clock.UnixNano(c.clock) >= c.due {
		c.finish(context.DeadlineExceeded)
		return done
	}
	t, reached := clock.AfterFuncAt(c.clock, time.Unix(0, c.due), func() { c.finish(context.DeadlineExceeded) })
	if reached { // the clock moved on since it was read above
		c.finish(context.DeadlineExceeded)
	}
	c.mu.Lock()
	if c.err == nil {
		c.timer, t = t, nil
	}
	c.mu.Unlock()
	if t != nil {
		t.Stop() // it ended meanwhile
	}
	return done
}

// AfterFunc is what package context uses to hook derived contexts in
// without a goroutine watching Done.
func (c *deadlineContext) AfterFunc(f func()) (stop func() bool) { return c.afterFuncs.Add(f) }

// String describes the context, as the standard contexts do.
func (c *deadlineContext) String() string {
	return "command.runContext(deadline " + time.Unix(0, c.due).String() + ")"
}

// endRunContext ends a context made by runContextFor once run has returned
// or its caller has left.
func endRunContext(deadline *deadlineContext, cancel context.CancelFunc) {
	if deadline != nil {
		deadline.end()
	} else if cancel != nil {
		cancel()
	}
}

// timedOut reports whether run, which returned at now (Unix
// nanoseconds), ran out of time: runCtx's Err is context.DeadlineExceeded,
// told without reading the clock again when the context is a
// deadlineContext.
func timedOut(runCtx context.Context, deadline *deadlineContext, now int64) bool {
	if deadline != nil {
		return deadline.expiredAt(now)
	}
	return runCtx.Err() != nil
}

// timeOut ends the context because the command timed the run out.
func (c *deadlineContext) timeOut() { c.finish(context.DeadlineExceeded) }

// end ends the context once run has returned or its caller has left.
func (c *deadlineContext) end() { c.finish(context.Canceled) }

// finish ends the context with err, once.
func (c *deadlineContext) finish(err error) {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	c.err = err
	if c.done != nil {
		close(c.done)
	}
	t := c.timer
	c.timer = nil
	c.mu.Unlock()
	if t != nil {
		t.Stop()
	}
	c.afterFuncs.End()
}
