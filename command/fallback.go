package command

import (
	"context"
	"sync/atomic"

	"github.com/rxhystrix/rxhystrix/metricsstream"
)

// fallbackFunc is the fallback of a scalar command.
type fallbackFunc[In, Out any] func(ctx context.Context, in In, err error) (Out, error)

// fallbackPermitted decides whether the fallback may run. When it may not,
// it records why and returns the error for the caller; when it may, it
// holds a fallback permit and returns the error to pass to the fallback.
func fallbackPermitted(e *execution, hasFallback bool, failure FailureType, cause error) (*Error, bool) {
	var cmdErr *Error
	switch {
	case e.cfg.FallbackDisabled:
		cmdErr = e.k.failureError(failure, cause, ErrFallbackDisabled)
	case !hasFallback:
		e.mark(metricsstream.FallbackMissing)
		cmdErr = e.k.failureError(failure, cause, ErrFallbackMissing)
	case !e.k.fallbackSem.tryAcquire():
		e.mark(metricsstream.FallbackRejection)
		cmdErr = e.k.failureError(FallbackRejectedFailure, cause, ErrFallbackRejected)
	default:
		e.fallbackPermit = true
		e.fellBack = true
		e.hook(func(h ExecutionHook) { h.FallbackStart(e.k.key) })
		return e.commandError(failure, cause), true
	}
	e.hook(func(h ExecutionHook) { h.Error(e.k.key, cmdErr.Failure, cmdErr) })
	return cmdErr, false
}

// failureError returns the *Error of a failure the fallback did not
// mend. Where the cause is the failure's own sentinel (short-circuits,
// rejections, timeouts) the error is the same for every execution of the
// key and is made once: an open circuit answers without allocating.
func (k *keyState) failureError(failure FailureType, cause, fallbackErr error) *Error {
	if cause != failure.sentinel() || cause == nil {
		return &Error{Command: k.key, Failure: failure, Cause: cause, FallbackErr: fallbackErr}
	}
	var slot *atomic.Pointer[Error]
	switch fallbackErr {
	case ErrFallbackMissing:
		slot = &k.errs[failure][0]
	case ErrFallbackDisabled:
		slot = &k.errs[failure][1]
	default:
		slot = &k.errs[failure][2]
	}
	if err := slot.Load(); err != nil {
		return err
	}
	err := &Error{Command: k.key, Failure: failure, Cause: cause, FallbackErr: fallbackErr}
	slot.CompareAndSwap(nil, err)
	return slot.Load()
}

// fallbackFailed records FALLBACK_FAILURE and returns the caller's error.
func (e *execution) fallbackFailed(cmdErr *Error, err error) *Error {
	e.mark(metricsstream.FallbackFailure)
	e.hook(func(h ExecutionHook) { h.FallbackError(e.k.key, err) })
	final := *cmdErr
	final.FallbackErr = err
	e.hook(func(h ExecutionHook) { h.Error(e.k.key, final.Failure, &final) })
	return &final
}

// fallbackSucceeded records FALLBACK_SUCCESS.
func (e *execution) fallbackSucceeded() {
	e.mark(metricsstream.FallbackSuccess)
	e.hook(func(h ExecutionHook) { h.FallbackSuccess(e.k.key) })
	e.hook(func(h ExecutionHook) { h.Success(e.k.key) })
}

// callFallback calls f, turning a panic into a *PanicError.
func callFallback[In, Out any](f fallbackFunc[In, Out], ctx context.Context, in In, cmdErr error) (v Out, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = newPanicError(p)
		}
	}()
	return f(ctx, in, cmdErr)
}

// callRun calls run, turning a panic into a *PanicError.
func callRun[In, Out any](run func(context.Context, In) (Out, error), ctx context.Context, in In) (v Out, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = newPanicError(p)
		}
	}()
	return run(ctx, in)
}
