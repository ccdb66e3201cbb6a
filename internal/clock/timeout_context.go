package clock

import (
	"context"
	"sync"
	"time"
)

// timeoutContext is context.WithTimeout measured on a Manual clock.
//
// It embeds a context.WithCancelCause of the parent, which gives values
// and lets context.Cause find the cause, but it has its own done channel:
// so package context does not take the embedded context for the parent of
// contexts derived from this one (it checks that the done channels match),
// and hooks them in through AfterFunc instead, so that they end with this
// context's error, context.DeadlineExceeded included.
type timeoutContext struct {
	context.Context
	parent      context.Context
	cancelInner context.CancelCauseFunc
	deadline    time.Time
	done        chan struct{}

	mu         sync.Mutex
	err        error
	timer      Timer
	stopParent func() bool

	afterFuncs AfterFuncs
}

func newTimeoutContext(m *Manual, parent context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if parent == nil {
		panic("clock: WithTimeout with nil parent")
	}
	inner, cancelInner := context.WithCancelCause(parent)
	c := &timeoutContext{
		Context:     inner,
		parent:      parent,
		cancelInner: cancelInner,
		deadline:    m.Now().Add(d),
		done:        make(chan struct{}),
	}
	cancel := func() { c.cancel(context.Canceled, context.Canceled) }
	if parent.Err() != nil {
		c.cancelFromParent(false)
		return c, cancel
	}
	timer, reached := AfterFuncAt(m, c.deadline, func() { c.cancel(context.DeadlineExceeded, context.DeadlineExceeded) })
	if reached { // the clock moved on since the deadline was read
		c.cancel(context.DeadlineExceeded, context.DeadlineExceeded)
	}
	stop := c.watchParent(parent)
	c.mu.Lock()
	ended := c.err != nil
	if !ended {
		c.timer, c.stopParent = timer, stop
	}
	c.mu.Unlock()
	if ended {
		timer.Stop()
		stop()
	}
	return c, cancel
}

// watchParent arranges for c to end when parent does, and returns what
// undoes that. A parent with an AfterFunc method (another timeoutContext,
// a subscription's scope) calls it synchronously as it ends, as package
// context does for the contexts it derives, so that a Manual clock's
// Advance that ends the parent has ended c too when it returns;
// context.AfterFunc would end c later, on a goroutine of its own.
func (c *timeoutContext) watchParent(parent context.Context) (stop func() bool) {
	end := func() { c.cancelFromParent(false) }
	if a, ok := parent.(interface{ AfterFunc(func()) func() bool }); ok {
		return a.AfterFunc(end)
	}
	return context.AfterFunc(parent, end)
}

// cancelFromParent ends c for its parent, which has ended: with the
// parent's error and cause, which end takes from it (context.Canceled if
// the parent does not say yet); found is end's.
func (c *timeoutContext) cancelFromParent(found bool) {
	c.end(context.Canceled, context.Canceled, found)
}

// cancel ends the context with err (and cause, for context.Cause); later
// calls do nothing.
func (c *timeoutContext) cancel(err, cause error) { c.end(err, cause, false) }

// end is cancel; found says the caller found the context ended while it
// asked (Err, Done) and may hold a lock that an AfterFunc function takes,
// so those run on a goroutine of their own, as they do for a context that
// had ended before they were registered.
//
// A parent that has ended already, though c has not heard of it yet
// (package context tells it on a goroutine of its own), ended it first:
// c ends with the parent's error, as a context.WithTimeout does once its
// parent's cancel has returned, not with its deadline or its own cancel.
func (c *timeoutContext) end(err, cause error, found bool) {
	if perr := c.parent.Err(); perr != nil {
		err, cause = perr, context.Cause(c.parent)
	}
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	c.err = err
	close(c.done)
	timer, stop := c.timer, c.stopParent
	c.mu.Unlock()

	if timer != nil {
		timer.Stop()
	}
	if stop != nil {
		stop()
	}
	c.cancelInner(cause)
	if found {
		go c.afterFuncs.End()
	} else {
		c.afterFuncs.End()
	}
}

func (c *timeoutContext) Deadline() (time.Time, bool) {
	if d, ok := c.Context.Deadline(); ok && d.Before(c.deadline) {
		return d, true
	}
	return c.deadline, true
}

// Done is c's done channel; as Err, it ends c first if its parent has
// ended, so that it is closed once the parent's cancel has returned.
func (c *timeoutContext) Done() <-chan struct{} {
	c.Err()
	return c.done
}

// Err is c's error. A parent that package context cancels ends the
// embedded context synchronously but c only through context.AfterFunc's
// goroutine, and a parent of this type ends it only as the parent ends
// (when asked, if a context above it was cancelled), so Err ends c at
// once if its parent's Err says it has ended while c has not: as with
// context.WithTimeout, c's Err is not nil once the cancel of its parent,
// or of any context above it, has returned. The AfterFunc functions of c
// ended so run on a goroutine of their own: the asker may hold a lock
// they take.
func (c *timeoutContext) Err() error {
	c.mu.Lock()
	err := c.err
	c.mu.Unlock()
	if err == nil && c.parent.Err() != nil {
		// Asked rather than the embedded context, which a parent of this
		// type tells only as it ends: it may have found a grandparent
		// ended when asked.
		c.cancelFromParent(true)
		c.mu.Lock()
		err = c.err
		c.mu.Unlock()
	}
	return err
}

// AfterFunc is what package context uses to hook derived contexts in.
func (c *timeoutContext) AfterFunc(f func()) (stop func() bool) { return c.afterFuncs.Add(f) }
