package command

import (
	"context"
	"sync/atomic"

	"github.com/rxhystrix/rxhystrix/metricsstream"
)

// The stages of one execution, each in one place, as Hystrix's
// AbstractCommand.toObservable chains them:
//
//	applyHystrixSemantics                 execution.admit: the breaker, then under semaphore
//	                                      isolation the execution permit
//	executeCommandWithSpecifiedIsolation  run on the caller (runHere) or a pool worker
//	                                      (executeInPool, subscription.submit), under the
//	                                      timeout (runContextFor)
//	markEmits, markOnCompleted, onError   execution.concluded: the run's event, the
//	                                      breaker's verdict and the adaptive limit's sample
//	handleFallback                        fallbackPermitted, callFallback, fallbackDone
//	handleCommandEnd, unsubscribe         execution.finish: one Completion, every permit back
//
// Two drivers move an execution through them. Command.call runs it on
// the calling goroutine and returns its result: Execute, First of
// ToObservable (of an ObservableCommand's too, see observable_first.go),
// the request log and the collapser's batch. subscription
// runs it for a subscriber that may leave, or be answered by a timer,
// while run still runs: Queue, Observe and every other subscription.
// Neither repeats a stage.

// Pseudo failure types that concluded returns besides the real ones.
const (
	noFailure    FailureType = -1 // run succeeded: its value stands
	runCancelled FailureType = -2 // the caller left: its context's error stands
)

// admit asks the breaker for permission, takes a token of the rate limit
// (waiting for one under ctx and callerCtx if it is configured to) and,
// under semaphore isolation, an execution permit. It returns the failure
// that refused the execution, runCancelled if ctx or callerCtx ended while
// it waited for a token (the caller records CANCELLED), or noFailure.
func (e *execution) admit(ctx, callerCtx context.Context) FailureType {
	if !e.attempt() {
		return ShortCircuitFailure
	}
	if f := e.admitRate(ctx, callerCtx); f != noFailure {
		return f
	}
	if e.cfg.Isolation == SemaphoreIsolation {
		return e.acquire(ctx, callerCtx)
	}
	return noFailure
}

// concluded records how run ended, at now (see execution.start), and
// returns what follows: noFailure (run's value stands), runCancelled, or
// the failure the fallback stage handles, with its cause.
func (e *execution) concluded(o outcome, err error, now int64) (FailureType, error) {
	if e.limiter != nil {
		e.sampleLimit(o, now)
	}
	switch o {
	case outcomeSuccess:
		e.succeeded(now)
		e.hook(func(h ExecutionHook) { h.Success(e.k.key) })
		return noFailure, nil
	case outcomeCancelled:
		e.cancelled(now)
		return runCancelled, nil
	}
	failure := e.failed(o, err, now)
	return failure, causeOf(failure, err)
}

// fallbackDone records how the fallback ended and returns the caller's
// error: nil after FALLBACK_SUCCESS, the *Error with the fallback's error
// after FALLBACK_FAILURE.
func (e *execution) fallbackDone(cmdErr *Error, err error) error {
	if err != nil {
		return e.fallbackFailed(cmdErr, err)
	}
	e.fallbackSucceeded()
	return nil
}

// badRequest is the fallback stage of a bad request: no fallback runs, and
// run's error is returned as it is.
func (e *execution) badRequest(cause error) error {
	e.hook(func(h ExecutionHook) { h.Error(e.k.key, BadRequestFailure, cause) })
	return cause
}

// collapsedBatch is a collapser's batch that the executions of its batch
// command serve.
type collapsedBatch struct {
	requests int // each execution records COLLAPSED that often
	// metrics are the collapser's, which count the batch
	// (BATCH_EXECUTED, ADDED_TO_BATCH) as the first of its executions
	// begins, and only then: a batch whose request scope ended before the
	// batch command looked does not run, and a count made before that
	// look would pair with no execution's COLLAPSED.
	metrics *metricsstream.CollapserMetrics
	counted atomic.Bool
}

// markCollapsed records that the execution serves b's requests, as
// Hystrix's markAsCollapsedCommand: COLLAPSED once per request in the
// result, once to the notifiers; the first to begin counts the batch.
func (e *execution) markCollapsed(b *collapsedBatch) {
	e.completion.Events[metricsstream.Collapsed] += int32(b.requests)
	if b.counted.CompareAndSwap(false, true) {
		b.metrics.MarkBatch(b.requests)
	}
	if e.hooked() {
		notify(e.global, e.local, e.k.key, metricsstream.Collapsed)
	}
}
