package command

import (
	"context"
	"math"
	"time"

	"github.com/rxhystrix/rxhystrix/limit"
	"github.com/rxhystrix/rxhystrix/metricsstream"
	"github.com/rxhystrix/rxhystrix/observable"
)

// execution is the state of one execution: Hystrix's ExecutionResult plus
// what the execution took and must give back. Command.call keeps it on
// the caller's stack; a subscription keeps one of its own (see stages.go).
type execution struct {
	k      *keyState
	cfg    *Config
	global *plugins
	local  *plugins
	pool   string

	// The times are the registry clock's readings in Unix nanoseconds
	// (clock.UnixNano): an execution measures itself with subtractions.
	start       int64
	completion  metricsstream.Completion // what finish publishes; its Events are the execution's events so far
	execLatency time.Duration            // set when run ended, timed out or was cancelled
	end         int64                    // when run's outcome was recorded, once ended
	concurrency int64                    // at the start of run; positive while an execution permit or start is held
	runStart    int64                    // when user code started, once executed
	executed    bool                     // user code ran
	ended       bool                     // run's outcome was recorded
	fellBack    bool                     // a fallback ran after end
	terminal    bool                     // a terminal event was recorded

	// limiter is the adaptive limit that admitted the execution, if
	// any: its key's under semaphore isolation, limitPool's otherwise.
	limiter   *limit.Limiter
	limitPool *pool

	fallbackPermit bool  // a fallback permit is held
	breakerHeld    bool  // the breaker admitted the execution, which has not reported to it yet
	trial          bool  // and it holds a half-open trial (breaker.Breaker.AttemptTrial)
	finished       bool  // the Completion was published
	partition      uint8 // 1 + the index in k.partitions of the partition held, or 0 (see partition.go)
	waited         bool  // it waited in the backlog: time passed since its start, run or not
	waitedForToken bool  // it waited for a token of the rate limit: time passed since its start, run or not
	firstOfRetries bool  // it is the first attempt of a call that retries, and retry is what its fallback stage decided

	of    *attemptInfo  // the attempts the execution is one of, or nil
	retry retryDecision // see firstOfRetries

	// The small fields are grouped so that padding does not grow the
	// execution: a subscription, which holds one, fits the allocator's
	// size class of 640 bytes with its header of 8 (command
	// BenchmarkObservableCommand/plain/ToSlice: 984 → 920 B/op).
	//
	// traceEnd ends the execution's trace (see tracer.go), if it has one.
	// It is the trace's End alone, not the trace, for the same size class.
	traceEnd func(*metricsstream.Completion)
}

// begin starts an execution of k, one of the attempts of of when not nil.
func (e *execution) begin(k *keyState, of *attemptInfo) {
	e.k = k
	e.cfg = k.config.Load()
	e.global = k.registry.plugins.p.Load()
	e.local = k.plugins.p.Load()
	e.pool = e.cfg.Pool
	if of != nil && of.start != 0 {
		e.start = of.start // read by the hedge operator just before
	} else {
		e.start = k.registry.now()
	}
	if e.global != nil || e.local != nil {
		callHooks(e.global, e.local, func(h ExecutionHook) { h.Start(k.key) })
	}
	if of != nil {
		e.of = of
		if of.collapsed != nil {
			e.markCollapsed(of.collapsed)
		}
		switch {
		case of.retry:
			e.mark(metricsstream.Retried)
		case of.hedge:
			e.mark(metricsstream.Hedged)
		}
	}
}

// deferFallback reports whether the fallback of a failure waits for other
// attempts of the execution's call (see attempts.go).
func (e *execution) deferFallback(ctx context.Context, failure FailureType, cause error) bool {
	switch {
	case e.firstOfRetries:
		return e.decideFirstRetry(ctx, failure, cause)
	case e.of != nil:
		return e.of.a.deferFallback(ctx, e.of, failure, cause)
	}
	return false
}

// mark records event in the result and tells the notifiers.
func (e *execution) mark(event metricsstream.EventType) {
	// An emission count stops at its largest value, as EventCounts.Add's,
	// rather than wrap around after 2³¹ values of a long-lived stream.
	if n := &e.completion.Events[event]; *n < math.MaxInt32 {
		*n++
	}
	if event.IsTerminal() {
		e.terminal = true
	}
	if e.global != nil || e.local != nil {
		notify(e.global, e.local, e.k.key, event)
	}
}

func (e *execution) hooked() bool { return e.global != nil || e.local != nil }

func (e *execution) hook(f func(ExecutionHook)) {
	if e.hooked() {
		callHooks(e.global, e.local, f)
	}
}

// attempt asks the breaker for permission; false records SHORT_CIRCUITED.
func (e *execution) attempt() bool {
	if e.cfg.Breaker.Disabled {
		return true
	}
	if admitted, trial := e.k.breaker.AttemptTrial(); admitted {
		e.breakerHeld, e.trial = true, trial
		return true
	}
	e.mark(metricsstream.ShortCircuited)
	return false
}

// acquire takes an execution permit under semaphore isolation, or
// records SEMAPHORE_REJECTED and returns SemaphoreRejectedFailure. A
// rejected half-open trial re-opens the breaker: it must not stay
// HALF_OPEN with no trial in flight.
//
// The permits are the key's concurrent executions, counted by its
// metrics: taking one counts the execution as started, and the Completion
// gives it back (see metricsstream.CommandMetrics.TryMarkStartAt).
//
// A key with partitions (Config.Partitions) admits by the partition that
// ctx, the subscriber's, or else callerCtx names: see acquireInPartition.
//
// With a backlog (Config.Backlog), an execution that finds no permit
// waits for one (see awaitPermit): it returns runCancelled if ctx or
// callerCtx ends meanwhile, which the caller records.
func (e *execution) acquire(ctx, callerCtx context.Context) FailureType {
	permits := e.permitsUnder(e.cfg)
	if len(e.cfg.Partitions) != 0 {
		if e.acquireInPartition(permits, partitionOf(ctx, callerCtx)) {
			return noFailure
		}
	} else if n, ok := e.k.metrics.TryMarkStartAt(e.start, permits); ok {
		e.concurrency = n
		return noFailure
	} else if e.cfg.Backlog.Size > 0 {
		if f := e.awaitPermit(ctx, callerCtx); f != SemaphoreRejectedFailure {
			return f
		}
	}
	e.mark(metricsstream.SemaphoreRejected)
	e.markNonSuccess()
	return SemaphoreRejectedFailure
}

// permitsUnder returns the key's execution permits under cfg (the
// execution's Config, or the key's now for an execution that waited in
// the backlog through a Configure), and keeps the adaptive limit that
// sets them, if any, for the execution to sample.
func (e *execution) permitsUnder(cfg *Config) int64 {
	n, l := e.k.permits(cfg)
	if l != nil {
		e.limiter = l
	}
	return int64(n)
}

// poolRejected records THREAD_POOL_REJECTED.
func (e *execution) poolRejected() {
	e.mark(metricsstream.PoolRejected)
	e.markNonSuccess()
}

// runStarted records that user code is about to run; under semaphore
// isolation acquire has counted it already.
func (e *execution) runStarted() {
	e.executed = true
	if e.runStart == 0 {
		e.runStart = e.start
	}
	if e.concurrency == 0 {
		e.concurrency = e.k.metrics.MarkStartAt(e.start)
	}
	e.hook(func(h ExecutionHook) { h.ExecutionStart(e.k.key) })
}

// ranOnWorker records that user code ran on a pool worker, which counted
// its start: the concurrency it recorded, and when it started.
func (e *execution) ranOnWorker(concurrency, started int64) {
	e.executed, e.concurrency, e.runStart = true, concurrency, started
}

func (e *execution) markNonSuccess() {
	e.breakerHeld = false
	if !e.cfg.Breaker.Disabled {
		e.k.breaker.MarkNonSuccess()
	}
}

// invoked returns when the execution's run was invoked, the start of its
// ExecutionLatency: its start, as Hystrix's, or, for one that waited in
// the backlog, when it took its permit, since that wait is before the
// semaphore is acquired, where Hystrix's execution latency begins.
func (e *execution) invoked() int64 {
	if e.waited && e.runStart != 0 {
		return e.runStart
	}
	return e.start
}

// succeeded records SUCCESS and tells the breaker.
func (e *execution) succeeded(now int64) {
	e.end, e.ended = now, true
	e.execLatency = time.Duration(now - e.invoked())
	e.mark(metricsstream.Success)
	e.breakerHeld = false
	if !e.cfg.Breaker.Disabled {
		e.k.breaker.MarkSuccess()
	}
	e.hook(func(h ExecutionHook) { h.ExecutionSuccess(e.k.key) })
}

// outcome is how run ended.
type outcome int

const (
	outcomeSuccess outcome = iota
	outcomeFailure
	outcomeTimeout
	outcomeBadRequest
	outcomeCancelled
)

// classify says how a run that returned err ended, given the caller's
// context and run's context (which carries the timeout).
func classify(callerCtx, runCtx context.Context, err error) outcome {
	return classifyTimed(callerLeft(callerCtx, runCtx), runCtx.Err() != nil, err)
}

// classifyTimed is classify for a caller that knows whether it has left
// and whether run ran out of time. An ObservableCommand's Observable that
// completed without a value before First had one (errCompleted)
// succeeded.
func classifyTimed(left, timedOut bool, err error) outcome {
	switch {
	case left:
		return outcomeCancelled
	case timedOut:
		return outcomeTimeout
	case err == nil || err == errCompleted:
		return outcomeSuccess
	case isBadRequestOutcome(err):
		return outcomeBadRequest
	}
	return outcomeFailure
}

// isBadRequestOutcome reports whether err, what the user's code ended
// with, makes the execution a bad request: an error made by BadRequest,
// returned, and never a panic (*PanicError), whatever it panicked with,
// which is a FAILURE that the fallback answers (see WithBadRequests).
func isBadRequestOutcome(err error) bool {
	if _, panicked := err.(*PanicError); panicked {
		return false
	}
	return IsBadRequest(err)
}

// classifyInTime says how a run that returned err before the caller left
// ended: its value stands even if the deadline passed since.
func classifyInTime(callerCtx, runCtx context.Context, err error) outcome {
	if err == nil || err == errCompleted {
		return outcomeSuccess
	}
	return classify(callerCtx, runCtx, err)
}

// failed records the event of a run that ended in error and tells the
// breaker. It returns the failure type for the fallback.
func (e *execution) failed(o outcome, err error, now int64) FailureType {
	e.end, e.ended = now, true
	e.execLatency = time.Duration(now - e.invoked())
	switch o {
	case outcomeTimeout:
		e.mark(metricsstream.Timeout)
		e.markNonSuccess()
		e.hook(func(h ExecutionHook) { h.ExecutionError(e.k.key, ErrTimeout) })
		return TimeoutFailure
	case outcomeBadRequest:
		e.mark(metricsstream.BadRequest)
		e.badRequestForBreaker()
		e.hook(func(h ExecutionHook) { h.ExecutionError(e.k.key, err) })
		return BadRequestFailure
	}
	e.mark(metricsstream.Failure)
	e.markNonSuccess()
	e.hook(func(h ExecutionHook) { h.ExecutionError(e.k.key, err) })
	return CommandFailure
}

// badRequestForBreaker lets the next caller try when a half-open trial
// ends in a bad request: it is neither a success nor a failure. An
// execution the breaker let through while Closed holds no trial to give
// back.
func (e *execution) badRequestForBreaker() {
	e.breakerHeld = false
	if e.trial && !e.cfg.Breaker.Disabled {
		e.k.breaker.MarkIgnored()
	}
}

// cancelled records CANCELLED for an execution the caller left before a
// terminal event, and re-opens a half-open breaker (Hystrix 1.5.13).
func (e *execution) cancelled(now int64) {
	if e.terminal {
		return
	}
	// A run that ended has its latency, which may be 0: only one still
	// running is measured up to now.
	if e.executed && !e.ended {
		e.execLatency = time.Duration(now - e.invoked())
		if e.limiter != nil && e.completion.Events[metricsstream.Emit] > 0 {
			// An ObservableCommand's caller that leaves once its
			// Observable has emitted (First) had its answer: a success
			// for the adaptive limit, up to now (see sampleLimit).
			e.sampleLimit(outcomeSuccess, now)
		}
	}
	e.mark(metricsstream.Cancelled)
	// Only an execution the breaker admitted, and that has not reported
	// yet, tells it: a short-circuited one held no trial, and one that
	// failed, was rejected or was refused by the rate limit has
	// reported already (its caller left during the fallback).
	if e.breakerHeld && !e.cfg.Breaker.Disabled {
		e.breakerHeld = false
		if e.of != nil && observable.LostAttempt(e.of.ctx) {
			// A hedge's race ended it, not its caller: it gives its
			// half-open trial back, if it holds one, as a bad request
			// does, rather than fail a trial whose call another attempt
			// answered.
			if e.trial {
				e.k.breaker.MarkIgnored()
			}
		} else {
			e.k.breaker.MarkCancelled()
		}
	}
	e.hook(func(h ExecutionHook) { h.Unsubscribe(e.k.key) })
}

// endTime returns when the execution ended, reading the clock only if
// nothing recorded the end yet or a fallback ran since.
func (e *execution) endTime() int64 {
	if !e.ended && !e.executed && !e.fellBack && !e.waited && !e.waitedForToken {
		return e.start // short-circuited or rejected, nothing ran or waited since
	}
	if !e.ended || e.fellBack {
		return e.k.registry.now()
	}
	return e.end
}

// finish releases the permits and publishes the Completion, once.
func (e *execution) finish(now int64) {
	if e.finished {
		return
	}
	e.finished = true
	if e.fallbackPermit {
		e.fallbackPermit = false
		e.k.fallbackSem.release()
	}
	if e.partition != 0 {
		e.releasePartition()
	}
	// Filled in place: the Completion is most of the execution's state,
	// and copying it out costs more than the fields it adds.
	c := &e.completion
	c.CommandKey = e.k.key
	c.GroupKey = e.cfg.Group
	c.PoolKey = e.poolKey()
	c.ExecutionLatency = e.execLatency
	c.TotalLatency = time.Duration(now - e.start)
	c.Executed = e.executed
	c.ConcurrencyAtStart = e.concurrency
	if !e.executed {
		c.ExecutionLatency = -1
	}
	// c.End is left to MarkCompletionAt, which makes it only for
	// subscribers.
	e.k.metrics.MarkCompletionAt(c, now)
	if e.concurrency != 0 {
		e.k.permitGivenBack()
	}
	if e.k.registry.onCompletion != nil || e.traceEnd != nil {
		e.showCompletion(c, now)
	}
}

// showCompletion shows the execution's Completion c, which ended at now,
// to the registry's onCompletion and to the execution's trace: one copy
// for both, so that the execution stays on the stack. finish calls it
// only when there is one to show it to, so that an execution without
// pays no call.
func (e *execution) showCompletion(c *metricsstream.Completion, now int64) {
	seen := *c
	seen.End = time.Unix(0, now)
	if f := e.k.registry.onCompletion; f != nil {
		f(&seen)
	}
	if end := e.traceEnd; end != nil {
		e.traceEnd = nil
		endTrace(end, &seen)
	}
}

// poolKey is the pool the execution ran in, or "" under semaphore
// isolation.
func (e *execution) poolKey() string {
	if e.cfg.Isolation == SemaphoreIsolation {
		return ""
	}
	return e.pool
}

// commandError is the error passed to a fallback and, with the fallback's
// failure, returned to the caller.
func (e *execution) commandError(failure FailureType, cause error) *Error {
	return &Error{Command: e.k.key, Failure: failure, Cause: cause}
}

// causeOf returns the cause to record for a failure type: run's error
// for a failure or a bad request (returned to the caller as it is), the
// failure's sentinel otherwise.
func causeOf(failure FailureType, err error) error {
	if (failure == CommandFailure || failure == BadRequestFailure) && err != nil {
		return err
	}
	if s := failure.sentinel(); s != nil {
		return s
	}
	return err
}
