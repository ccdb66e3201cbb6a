package command

import "context"

// call is one execution on the calling goroutine, which waits for its
// result: the driver of Execute, of First of ToObservable, of the request
// log and of the collapser's batch (see stages.go). It serves collapsed
// collapsed requests (COLLAPSED is recorded that often) and tells rec,
// when not nil, of the execution just before its Completion is published;
// of, when not nil, is the attempts it is one of.
// The execution stays on the caller's stack.
func (c *core[In, Out]) call(ctx context.Context, in In, collapsed int, rec executionRecorder, of *attemptInfo) (Out, error) {
	return c.callAs(ctx, in, collapsed, rec, of, nil)
}

// callFirst is call for the first attempt of a call that retries, whose
// fallback stage asks first whether a retry follows.
// The decision is written to first, which the execution does not keep:
// it stays on the caller's stack.
func (c *core[In, Out]) callFirst(ctx context.Context, in In, collapsed int, rec executionRecorder, first *retryDecision) (Out, error) {
	return c.callAs(ctx, in, collapsed, rec, nil, first)
}

func (c *core[In, Out]) callAs(ctx context.Context, in In, collapsed int, rec executionRecorder, of *attemptInfo, first *retryDecision) (Out, error) {
	if err := ctx.Err(); err != nil {
		var zero Out
		return zero, err
	}
	var e execution
	e.begin(c.k, of)
	e.firstOfRetries = first != nil
	if collapsed > 0 {
		e.markCollapsed(collapsed)
	}
	var v Out
	var err error
	switch failure := e.admit(ctx, ctx); {
	case failure != noFailure:
		v, err = c.fallBack(ctx, &e, in, failure, failure.sentinel())
	case e.cfg.Isolation == SemaphoreIsolation:
		v, err = c.runHere(ctx, &e, in)
	default:
		v, err = c.executeInPool(ctx, &e, in)
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
	runCtx, deadline, end := runContextFor(ctx, c.k.registry.clock, e.start, e.cfg.Timeout)
	v, err := callRun(c.run, runCtx, in)
	now := c.k.registry.now()
	o := classifyTimed(ctx, runCtx != ctx && timedOut(runCtx, deadline, now), err)
	endRunContext(deadline, end)
	return c.conclude(ctx, e, in, o, v, err, now)
}

// conclude records how run ended, at now, and produces the caller's
// result: run's value, ctx's error, or the fallback stage's.
func (c *core[In, Out]) conclude(ctx context.Context, e *execution, in In, o outcome, v Out, err error, now int64) (Out, error) {
	switch failure, cause := e.concluded(o, err, now); failure {
	case noFailure:
		return v, nil
	case runCancelled:
		var zero Out
		return zero, ctx.Err()
	default:
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
	cmdErr, ok := fallbackPermitted(e, c.fallback != nil, failure, cause)
	if !ok {
		return zero, cmdErr
	}
	v, err := callFallback(c.fallback, ctx, in, cmdErr)
	if err = e.fallbackDone(cmdErr, err); err != nil {
		return zero, err
	}
	return v, nil
}
