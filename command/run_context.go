package command

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rxhystrix/rxhystrix/internal/clock"
)

// runContextFor returns the context run gets under a timeout from start
// (about now, in Unix nanoseconds of c): a deadlineContext, which costs
// one small allocation, and which follows ctx. Without a timeout, run gets
// ctx itself and deadline is nil. endRunContext ends it.
//
// Under a cancellable caller's context (a request's, say),
// context.WithTimeout's context cost four allocations and a timer more
// (bench/peers, one caller: rxhystrix-semaphore-timeout-request 1.2 µs
// against 0.33 µs, rxhystrix-pool-request 2.6 µs against 1.4 µs).
func runContextFor(ctx context.Context, c clock.Clock, start int64, timeout time.Duration) (runCtx context.Context, deadline *deadlineContext) {
	if timeout <= 0 {
		return ctx, nil
	}
	d := newDeadlineContext(ctx, c, clock.UnixNanoAfter(start, timeout))
	return d, d
}

// deadlineContext is the context of a run with a timeout: what
// context.WithDeadline gives, for a fraction of its cost. Its expiry is
// checked against the clock when Err is asked, and what waiting needs
// (the Done channel, a timer, the functions of AfterFunc) is made only
// when somebody waits, so a run that never waits on its context costs one
// small allocation where context.WithDeadline costs four and a timer, and
// ends without a lock. It ends when the deadline passes, when the command
// times the run out, when the command ends it after run returned, and,
// when it ends by itself, when the parent ends: Err asks the parent,
// and the first waiter hooks it into the parent with context.AfterFunc.
// context.Cause finds the parent's cause through Value, or, when the
// parent has none, the context's own Err. (One difference from
// context.WithDeadline's: a parent cancelled with a cause after the
// deadline passed gives that cause, not context.DeadlineExceeded.)
type deadlineContext struct {
	parent context.Context
	clock  clock.Clock
	due    int64 // the deadline in Unix nanoseconds, as clock.UnixNano reads clock
	// endsItself says the context ends by itself when the clock reaches
	// due and when parent ends (a run's, made by runContextFor); without
	// it (newCommandContext) only the subscription ends it, and due is
	// reported, when bounded, but not enforced.
	endsItself bool
	unbounded  bool // there is no deadline to report
	// disarmed says the subscription no longer ends the context at due:
	// an ObservableCommand's stream emitted its first value, which
	// disarms the timeout, so only the parent's deadline is reported.
	disarmed atomic.Bool
	// callersDue: due is the parent's deadline, which comes before the
	// timeout's, so that the context expiring is the caller's deadline
	// passing, not a timeout (see leftAt).
	callersDue bool

	state   atomic.Uint32                  // contextLive until it ends, then how
	waiters atomic.Pointer[contextWaiters] // made by the first Done or AfterFunc
}

// The states of a deadlineContext.
const (
	contextLive           uint32 = iota
	contextTimedOut              // Err is context.DeadlineExceeded
	contextEnded                 // Err is context.Canceled
	contextLeft                  // the parent ended: Err is the parent's
	contextCallerDeadline        // ended for a caller whose deadline passed: Err is context.DeadlineExceeded
)

// contextWaiters is what a deadlineContext needs once somebody waits on
// it. Whoever ends the context after the waiters were published releases
// them (closes done, stops the timer, unhooks the context from its
// parent, runs the AfterFunc functions);
// whoever adds a waiter after the context ended releases them itself:
// each writes its part (the state; the waiters and the waiter) before it
// reads the other's, so at least one of them sees both. A release may
// come twice; it does each thing once.
type contextWaiters struct {
	mu         sync.Mutex
	done       chan struct{} // made by the first Done
	closed     bool          // done is closed
	timer      clock.Timer   // armed by the first Done or AfterFunc
	armed      bool          // the timer was armed, or found the deadline passed
	afterFuncs clock.AfterFuncs
	stopParent func() bool // unhooks the context from its parent
}

// newDeadlineContext returns the context of a run due at due, in Unix
// nanoseconds, or at parent's deadline if that comes first.
func newDeadlineContext(parent context.Context, c clock.Clock, due int64) *deadlineContext {
	d := &deadlineContext{parent: parent, clock: c, due: dueBy(parent, c, due), endsItself: true}
	d.callersDue = d.due != due
	return d
}

// leftAt reports whether c, if not nil, has expired at now at its
// parent's deadline: the caller's deadline has passed, which makes the
// execution CANCELLED and not TIMEOUT, though the caller's context may
// not say so yet (its timer is not the registry's clock).
func (c *deadlineContext) leftAt(now int64) bool {
	return c != nil && c.callersDue && c.expiredAt(now)
}

// callerLeft reports whether the caller of a run under runCtx has left:
// its context ctx has ended, unless runCtx had ended at the timeout
// before (timedOutFirst), or runCtx expired at ctx's deadline (leftAt,
// now).
func callerLeft(ctx, runCtx context.Context) bool {
	d, ok := runCtx.(*deadlineContext)
	if !ok {
		return ctx.Err() != nil
	}
	return d.callerGone(ctx, clock.UnixNano(d.clock))
}

// callerGone is callerLeft for a caller that has read the clock (now)
// and holds run's deadlineContext c (nil: a run without a timeout).
func (c *deadlineContext) callerGone(ctx context.Context, now int64) bool {
	if ctx.Err() != nil {
		return !c.timedOutFirst()
	}
	return c.leftAt(now)
}

// timedOutFirst reports whether c, if not nil, ended at the timeout
// while the caller was still there: run's context told run
// context.DeadlineExceeded of the timeout, not of the caller's deadline,
// before the caller's context ended. The execution then timed out, as a
// subscription's timer or a pool caller's says at the timeout (and as
// Hystrix's timer does), though the caller has left since: it is a
// TIMEOUT, which the breaker counts, and not a CANCELLED, which it does
// not.
func (c *deadlineContext) timedOutFirst() bool {
	return c != nil && !c.callersDue && c.state.Load() == contextTimedOut
}

// callerErr is the error of a caller that left: its context's, or, when
// its deadline has passed on the registry's clock and its context has
// not said so yet, context.DeadlineExceeded, which it is about to say.
func callerErr(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return context.DeadlineExceeded
}

// dueBy returns due, in Unix nanoseconds as c reads them, or parent's
// deadline if that comes first. The deadline is placed on c's time line
// (clock.UnixNanoOf): a caller's deadline is read from the system clock,
// which Real does not follow when it is stepped.
func dueBy(parent context.Context, c clock.Clock, due int64) int64 {
	if d, ok := parent.Deadline(); ok {
		if n := clock.UnixNanoOf(c, d); n < due {
			return n
		}
	}
	return due
}

// newCommandContext returns the context of a run that a subscription
// ends itself, at its timeout timer, when its subscriber or caller leaves,
// or when the execution ends: the values are parent's, the deadline is
// reported (timeout > 0), but nothing but the subscription ends it. So it
// costs one small allocation, where joining the subscriber's and the
// caller's contexts under context.WithTimeout costs five and a timer; and
// an ObservableCommand's stream, whose first value disarms the timeout,
// may run past the timeout's time, and reports from then on the
// parent's deadline alone (disarm).
func newCommandContext(parent context.Context, c clock.Clock, start int64, timeout time.Duration) *deadlineContext {
	if timeout <= 0 {
		return &deadlineContext{parent: parent, clock: c, due: math.MaxInt64, unbounded: true}
	}
	return &deadlineContext{parent: parent, clock: c, due: clock.UnixNanoAfter(start, timeout)}
}

// Deadline returns the run's deadline, in the local time zone as
// context.WithTimeout's: the timeout's, or the parent's if that comes
// first. For Real it carries a monotonic reading (clock.TimeAt), as
// context.WithTimeout's does, so that time.Until measures it rightly
// after a step of the system clock. (A run's due has the parent's folded
// in already; a subscription's is the timeout's alone, since it tells
// TIMEOUT from the caller leaving, which the subscription watches for
// itself.)
func (c *deadlineContext) Deadline() (time.Time, bool) {
	if c.unbounded || c.disarmed.Load() {
		return c.parent.Deadline()
	}
	return clock.TimeAt(c.clock, dueBy(c.parent, c.clock, c.due)), true
}

// Value returns the caller's context's value for key.
func (c *deadlineContext) Value(key any) any { return c.parent.Value(key) }

// Err returns context.DeadlineExceeded once the deadline has passed,
// context.Canceled once the command ended the context, the parent's error
// once the parent it follows ended, and nil before.
func (c *deadlineContext) Err() error {
	if c.state.Load() == contextLive {
		// The parent first: found ended with the deadline passed too,
		// it ended before anybody saw the deadline pass (no timer was
		// armed), and the execution is the caller's leaving, as it is
		// when run does not ask (callerGone), not a timeout.
		switch {
		case !c.endsItself:
		case c.parent.Err() != nil:
			c.finishFound(contextLeft)
		case clock.UnixNano(c.clock) >= c.due:
			c.finishFound(contextTimedOut)
		}
	}
	switch c.state.Load() {
	case contextTimedOut, contextCallerDeadline:
		return context.DeadlineExceeded
	case contextEnded:
		return context.Canceled
	case contextLeft:
		return c.parent.Err()
	}
	return nil
}

// disarm makes the context report the parent's deadline alone, once the
// subscription that ends it no longer ends it at the timeout.
func (c *deadlineContext) disarm() { c.disarmed.Store(true) }

// expiredAt reports whether the deadline has passed at now (Unix
// nanoseconds) or the command timed the run out: Err's verdict for a
// caller that has read the clock.
func (c *deadlineContext) expiredAt(now int64) bool {
	return now >= c.due || c.state.Load() == contextTimedOut
}

// waitersMade returns the context's waiters, publishing them first if
// nobody did; whoever publishes them hooks a context that ends by itself
// into its parent.
func (c *deadlineContext) waitersMade() *contextWaiters {
	if w := c.waiters.Load(); w != nil {
		return w
	}
	w := new(contextWaiters)
	if !c.waiters.CompareAndSwap(nil, w) {
		return c.waiters.Load()
	}
	if c.endsItself && c.parent.Done() != nil {
		stop := context.AfterFunc(c.parent, c.leave)
		w.mu.Lock()
		if c.state.Load() == contextLive { // else its release may have come and gone
			w.stopParent, stop = stop, nil
		}
		w.mu.Unlock()
		if stop != nil {
			stop()
		}
		if c.parent.Err() != nil {
			// context.AfterFunc runs leave on a goroutine of its own for a
			// parent that has ended already: the context ends now, so that
			// the Done its caller is making is closed, as a child's of
			// package context is, when it returns.
			c.leave()
		}
	}
	return w
}

// Done returns a channel closed when the context ends. The first call
// arms a timer for the deadline.
func (c *deadlineContext) Done() <-chan struct{} {
	w := c.waitersMade()
	w.mu.Lock()
	if w.done != nil {
		defer w.mu.Unlock()
		return w.done
	}
	w.done = make(chan struct{})
	done := w.done
	arm := w.claimArmLocked(c)
	w.mu.Unlock()
	if c.state.Load() != contextLive {
		c.release(w) // it ended before the waiters were there to see
		return done
	}
	if arm {
		c.armTimer(w)
	}
	return done
}

// claimArmLocked reports, under w.mu, whether the caller is the one to
// arm c's timer: the first Done or AfterFunc of a context that ends by
// itself at its deadline, whichever waits first.
func (w *contextWaiters) claimArmLocked(c *deadlineContext) bool {
	if !c.endsItself || w.armed {
		return false
	}
	w.armed = true
	return true
}

// armTimer arms the timer that ends c at its deadline, for the caller
// that claimed it (claimArmLocked).
func (c *deadlineContext) armTimer(w *contextWaiters) {
	// The clock is used outside the lock: a manual clock fires timers
	// while holding its own.
	if clock.UnixNano(c.clock) >= c.due {
		c.finishFound(contextTimedOut)
		return
	}
	t, reached := clock.AfterFuncAt(c.clock, time.Unix(0, c.due), func() { c.finish(contextTimedOut) })
	if reached { // the clock moved on since it was read above
		c.finishFound(contextTimedOut)
	}
	w.mu.Lock()
	if c.state.Load() == contextLive { // else it ended meanwhile, and its release found no timer
		w.timer, t = t, nil
	}
	w.mu.Unlock()
	if t != nil {
		t.Stop()
	}
}

// AfterFunc is what package context uses to hook derived contexts in
// without a goroutine watching Done.
func (c *deadlineContext) AfterFunc(f func()) (stop func() bool) {
	w := c.waitersMade()
	stop = w.afterFuncs.Add(f)
	if c.state.Load() != contextLive {
		// It ended before the waiters were there to see. f runs on a
		// goroutine of its own, as AfterFunc's functions do once the
		// context has ended: package context calls this method holding a
		// lock that f takes.
		go w.afterFuncs.End()
		return stop
	}
	// f runs at the deadline too, though nobody asked for Done.
	w.mu.Lock()
	arm := w.claimArmLocked(c)
	w.mu.Unlock()
	if arm {
		c.armTimer(w)
	}
	return stop
}

// String describes the context, as the standard contexts do.
func (c *deadlineContext) String() string {
	return "command.runContext(deadline " + time.Unix(0, c.due).String() + ")"
}

// endRunContext ends a context made by runContextFor once run has returned
// or its caller has left.
func endRunContext(deadline *deadlineContext) {
	if deadline != nil {
		deadline.end()
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
func (c *deadlineContext) timeOut() { c.finish(contextTimedOut) }

// end ends the context once run has returned or its caller has left.
func (c *deadlineContext) end() { c.finish(contextEnded) }

// endFor ends the context once the execution has ended with err: with
// context.DeadlineExceeded when err is a caller's context's
// (subscription.leftErr) whose deadline passed, so that run sees the
// caller's error, as under context.WithTimeout; with context.Canceled
// otherwise.
func (c *deadlineContext) endFor(err error) {
	if err == context.DeadlineExceeded {
		c.finish(contextCallerDeadline)
		return
	}
	c.finish(contextEnded)
}

// leave ends the context because its parent ended.
func (c *deadlineContext) leave() { c.finish(contextLeft) }

// finish ends the context in state, unless it ended already, and lets go
// of whoever waits on it.
func (c *deadlineContext) finish(state uint32) {
	if !c.state.CompareAndSwap(contextLive, state) {
		return
	}
	if w := c.waiters.Load(); w != nil {
		c.release(w)
	}
}

// finishFound is finish for a goroutine that found the context ended
// while it asked (Err, the first Done or AfterFunc), and may hold a lock
// that an AfterFunc function takes (a subscription asks its caller's
// context under the lock its leave takes): Done is closed at once, and
// the AfterFunc functions run on a goroutine of their own, as they do
// for a context that had ended before they were registered.
func (c *deadlineContext) finishFound(state uint32) {
	if !c.state.CompareAndSwap(contextLive, state) {
		return
	}
	if w := c.waiters.Load(); w != nil {
		w.mu.Lock()
		if w.done != nil && !w.closed {
			close(w.done)
			w.closed = true
		}
		w.mu.Unlock()
		go c.release(w)
	}
}

// release lets go of the waiters of an ended context: it closes done,
// stops the timer and runs the AfterFunc functions, each once however
// often it is called.
func (c *deadlineContext) release(w *contextWaiters) {
	w.mu.Lock()
	if w.done != nil && !w.closed {
		close(w.done)
		w.closed = true
	}
	t, stopParent := w.timer, w.stopParent
	w.timer, w.stopParent = nil, nil
	w.mu.Unlock()
	if t != nil {
		t.Stop()
	}
	if stopParent != nil {
		stopParent()
	}
	w.afterFuncs.End()
}
