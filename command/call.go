package command

import (
	"context"

	"github.com/rxhystrix/rxhystrix/metricsstream"
	"github.com/rxhystrix/rxhystrix/observable"
)

// call is one execution on the calling goroutine, which waits for its
// result: the driver of Execute, of First of ToObservable, of the request
// log and of the collapser's batch (see stages.go). It serves collapsed
// requests of a collapser's batch, the one caller that passes any
// (COLLAPSED is recorded that often), and tells rec, when not nil, of the
// execution just before its Completion is published; of, when not nil, is
// the attempts it is one of.
// The execution stays on the caller's stack.
func (c *core[In, Out]) call(ctx context.Context, in In, collapsed *collapsedBatch, rec executionRecorder, of *attemptInfo) (Out, error) {
	return c.callAs(ctx, in, collapsed, rec, of, nil, false)
}

// callFirst is call for the first attempt of a call that retries, under
// subCtx and callerCtx together (as a Single's Call runs under its
// subscriber's context and the one it was made with), whose fallback
// stage asks first whether a retry follows. The decision is written to
// first, which the execution does not keep: it stays on the caller's
// stack.
func (c *core[In, Out]) callFirst(subCtx, callerCtx context.Context, in In, rec executionRecorder, first *retryDecision) (Out, error) {
	ctx, stop := joinContexts(subCtx, callerCtx)
	v, err := c.callAs(ctx, in, nil, rec, nil, first, false)
	stop()
	return v, err
}

// callAs is call, callFirst, and, with waiter set, call for a caller that
// only waits for the result, as a Future's Get that takes a Queue over
// does (observable.Joiner): under semaphore isolation with a timeout, run
// is then handed to a goroutine of its own (runHandedOver), so that the
// caller is answered at the timeout, as a subscriber is, where call holds
// it until run returns.
func (c *core[In, Out]) callAs(ctx context.Context, in In, collapsed *collapsedBatch, rec executionRecorder, of *attemptInfo, first *retryDecision, waiter bool) (Out, error) {
	if err := ctx.Err(); err != nil {
		var zero Out
		return zero, err
	}
	var e execution
	e.begin(c.k, of)
	if t := c.k.registry.tracer.Load(); t != nil {
		ctx = e.traced(t, ctx)
	}
	e.firstOfRetries = first != nil
	if collapsed != nil {
		e.markCollapsed(collapsed)
	}
	var v Out
	var err error
	switch failure := e.admit(ctx, ctx); {
	case failure == runCancelled:
		e.cancelled(c.k.registry.now())
		err = ctx.Err()
	case failure != noFailure:
		v, err = c.fallBack(ctx, &e, in, failure, failure.sentinel())
	case e.cfg.Isolation != SemaphoreIsolation:
		v, err = c.executeInPool(ctx, &e, in)
	case waiter && e.cfg.Timeout > 0:
		v, err = c.runHandedOver(ctx, &e, in)
	default:
		v, err = c.runHere(ctx, &e, in)
	}
	if rec != nil {
		rec.recordExecution(e.logRecord())
	}
	e.finish(e.endTime())
	if first != nil {
		*first = e.retry
	}
	return v, err
}

// runHere runs run on the caller's goroutine under the execution permit
// admit took, with the timeout as run's context deadline.
func (c *core[In, Out]) runHere(ctx context.Context, e *execution, in In) (Out, error) {
	e.runStarted()
	runCtx, deadline := runContextFor(ctx, c.k.registry.clock, e.start, e.cfg.Timeout)
	v, err := c.invoke(runCtx, e.cfg, in)
	now := c.k.registry.now()
	o := classifyTimed(deadline.callerGone(ctx, now), runCtx != ctx && timedOut(runCtx, deadline, now), err)
	endRunContext(deadline)
	return c.conclude(ctx, e, in, o, v, err, now)
}

// invoke runs the user's code for call: a Command's run, or, for First of
// an ObservableCommand, its Observable up to the first value (see
// observable_first.go).
// It is small enough to be inlined, so that a Command's run is called as
// directly as before ObservableCommands came this way (bench/peers
// rxhystrix-semaphore, 3 to 6 ns).
func (c *core[In, Out]) invoke(ctx context.Context, cfg *Config, in In) (Out, error) {
	if c.run != nil {
		return c.callUser(ctx, cfg, in)
	}
	return c.firstOfBody(ctx, cfg, in)
}

// firstOfBody is invoke for an ObservableCommand.
func (c *core[In, Out]) firstOfBody(ctx context.Context, cfg *Config, in In) (Out, error) {
	return firstOf(ctx, c.body(ctx, cfg, in))
}

// conclude records how run ended, at now, and produces the caller's
// result: run's value, ctx's error, or the fallback stage's. A value run
// returned that the caller does not get is dropped (core.drop); err is
// not nil when run did not return.
func (c *core[In, Out]) conclude(ctx context.Context, e *execution, in In, o outcome, v Out, err error, now int64) (Out, error) {
	if c.construct != nil && o == outcomeSuccess && err == nil {
		return tookFirst(e, v, metricsstream.Emit, now)
	}
	switch failure, cause := e.concluded(o, err, now); failure {
	case noFailure:
		if err == errCompleted {
			return v, observable.ErrEmpty // an ObservableCommand's Observable was empty
		}
		return v, nil
	case runCancelled:
		c.drop(v, err)
		var zero Out
		return zero, callerErr(ctx)
	default:
		c.drop(v, err)
		return c.fallBack(ctx, e, in, failure, cause)
	}
}

// fallBack is the fallback stage on the caller's goroutine: the fallback
// under its permit, or the error Hystrix's getFallbackOrThrowException
// would raise.
func (c *core[In, Out]) fallBack(ctx context.Context, e *execution, in In, failure FailureType, cause error) (Out, error) {
	var zero Out
	if failure == BadRequestFailure {
		return zero, e.badRequest(cause)
	}
	if e.deferFallback(ctx, failure, cause) {
		return zero, e.commandError(failure, cause)
	}
	if ctx.Err() != nil {
		// The caller left after the timeout, while run held its goroutine
		// (semaphore isolation): nobody is there for a fallback's answer,
		// so none runs, as none would once it had run (leftDuringFallback).
		e.cancelled(c.k.registry.now())
		return zero, callerErr(ctx)
	}
	cmdErr, ok := fallbackPermitted(e, c.hasFallback(), failure, cause)
	if !ok {
		return zero, cmdErr
	}
	if c.fallbackObs != nil {
		return c.fallBackFirst(ctx, e, in, cmdErr)
	}
	v, err := callFallback(c.fallback, ctx, in, cmdErr)
	if c.leftDuringFallback(ctx, e, v, err) {
		return zero, callerErr(ctx)
	}
	if err = e.fallbackDone(cmdErr, err); err != nil {
		return zero, err
	}
	return v, nil
}

// leftDuringFallback reports whether the caller left while the fallback
// ran, ctx having ended: then the execution is CANCELLED, as a
// subscription's (fallbackEnded) and a run's (runHere), and v and err,
// what the fallback returned, are dropped.
func (c *core[In, Out]) leftDuringFallback(ctx context.Context, e *execution, v Out, err error) bool {
	if ctx.Err() == nil {
		return false
	}
	e.cancelled(c.k.registry.now())
	c.drop(v, err)
	return true
}

// fallBackFirst is the fallback stage of First of an ObservableCommand:
// the first value of the fallback's Observable.
func (c *core[In, Out]) fallBackFirst(ctx context.Context, e *execution, in In, cmdErr *Error) (Out, error) {
	var zero Out
	v, err := firstOf(ctx, fallbackBody(c.fallbackObs, ctx, in, cmdErr))
	if c.leftDuringFallback(ctx, e, v, err) {
		return zero, callerErr(ctx)
	}
	switch err {
	case nil:
		return tookFirst(e, v, metricsstream.FallbackEmit, c.k.registry.now())
	case errCompleted:
		e.fallbackSucceeded()
		return zero, observable.ErrEmpty
	}
	return zero, e.fallbackFailed(cmdErr, err)
}
