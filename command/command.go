package command

import (
	"context"
	"fmt"
	"sync"

	"github.com/rxhystrix/rxhystrix/breaker"
	"github.com/rxhystrix/rxhystrix/metricsstream"
	"github.com/rxhystrix/rxhystrix/observable"
)

// Command wraps run, a call to a downstream dependency, with Hystrix's
// protections: circuit breaker, isolation, timeout, fallback and metrics.
// A Command is safe for concurrent use and is made once and executed many
// times (unlike a Hystrix command instance, which runs once).
type Command[In, Out any] struct {
	k        *keyState
	run      func(context.Context, In) (Out, error)
	fallback fallbackFunc[In, Out]
	fbObs    func(context.Context, In, error) observable.Observable[Out]
	cacheKey func(In) string
	poolKey  func(In) string
	calls    sync.Pool // *poolCall[In, Out]
	pipe     *pipeline[In, Out]
}

// New returns a command of key that calls run. Commands made with the same
// key share one breaker, one metrics and one pair of semaphores. It panics
// if run is nil, naming the key, if key is empty or not valid UTF-8 (keys
// become metric labels), or if an option is invalid.
func New[In, Out any](key string, run func(context.Context, In) (Out, error), opts ...Option) *Command[In, Out] {
	if run == nil {
		panic(fmt.Sprintf("command: New(%q): run is nil", key))
	}
	mustKey("New", key)
	o := buildOptions("New", key, opts)
	c := &Command[In, Out]{
		run:      run,
		fallback: typed[func(context.Context, In, error) (Out, error)]("New", key, "WithFallback", o.fallback),
		fbObs:    typed[func(context.Context, In, error) observable.Observable[Out]]("New", key, "WithFallbackObservable", o.fallbackObs),
		cacheKey: typed[func(In) string]("New", key, "WithCacheKey", o.cacheKey),
		poolKey:  typed[func(In) string]("New", key, "WithPoolKey", o.poolKey),
	}
	var cfg Config
	if o.config != nil {
		cfg = *o.config
	}
	if o.isolation != nil {
		cfg.Isolation = *o.isolation
	}
	c.k = o.registry.state(key, cfg)
	c.pipe = c.scalarPipeline()
	return c
}

// Key returns the command key.
func (c *Command[In, Out]) Key() string { return c.k.key }

// Metrics returns the metrics of the command's key.
func (c *Command[In, Out]) Metrics() *metricsstream.CommandMetrics { return c.k.metrics }

// Breaker returns the circuit breaker of the command's key.
func (c *Command[In, Out]) Breaker() *breaker.Breaker { return c.k.breaker }

// Execute runs the command and returns its value: run's, or the
// fallback's when run fails, times out, is rejected or short-circuited. Its
// error is an *Error, or run's error as it is for a BadRequest, or ctx's
// error when ctx ends first (recorded as CANCELLED). Execute is
// Queue(ctx, in).Get(ctx), fused into one call on the caller's goroutine:
// values, errors and recorded events are those of ToObservable.
func (c *Command[In, Out]) Execute(ctx context.Context, in In) (Out, error) {
	ctx = orBackground(ctx)
	if requestScoped.Load() {
		return c.executeInRequest(ctx, in)
	}
	if err := ctx.Err(); err != nil {
		var zero Out
		return zero, err
	}
	var e execution
	e.begin(c.k)
	var v Out
	var err error
	switch {
	case !e.attempt():
		v, err = c.fallBack(ctx, &e, in, ShortCircuitFailure, ErrShortCircuited)
	case e.cfg.Isolation == SemaphoreIsolation:
		v, err = c.executeWithSemaphore(ctx, &e, in)
	default:
		v, err = c.executeInPool(ctx, &e, in)
	}
	e.finish(e.endTime())
	return v, err
}

// fallBack runs the fallback after a failure.
func (c *Command[In, Out]) fallBack(ctx context.Context, e *execution, in In, failure FailureType, cause error) (Out, error) {
	if c.fallback == nil && c.fbObs != nil {
		return recoverWith(ctx, e, in, c.observableFallback, failure, cause)
	}
	return recoverWith(ctx, e, in, c.fallback, failure, cause)
}

// observableFallback adapts an Observable fallback to a scalar one: its
// last value.
func (c *Command[In, Out]) observableFallback(ctx context.Context, in In, err error) (Out, error) {
	return c.fbObs(ctx, in, err).Last(ctx)
}

// executeWithSemaphore runs run on the caller's goroutine under an
// execution permit, with the timeout as run's context deadline.
func (c *Command[In, Out]) executeWithSemaphore(ctx context.Context, e *execution, in In) (Out, error) {
	if !e.acquire() {
		return c.fallBack(ctx, e, in, SemaphoreRejectedFailure, ErrSemaphoreRejected)
	}
	e.runStarted()
	runCtx, deadline, end := runContextFor(ctx, c.k.registry.clock, e.start, e.cfg.Timeout)
	v, err := callRun(c.run, runCtx, in)
	now := c.k.registry.now()
	o := classifyTimed(ctx, runCtx != ctx && timedOut(runCtx, deadline, now), err)
	endRunContext(deadline, end)
	return c.conclude(ctx, e, in, o, v, err, now)
}

// conclude records how run ended, at now (see execution.start), and
// produces the caller's result.
func (c *Command[In, Out]) conclude(ctx context.Context, e *execution, in In, o outcome, v Out, err error, now int64) (Out, error) {
	switch o {
	case outcomeSuccess:
		e.succeeded(now)
		e.hook(func(h ExecutionHook) { h.Success(e.k.key) })
		return v, nil
	case outcomeCancelled:
		e.cancelled(now)
		var zero Out
		return zero, ctx.Err()
	}
	failure := e.failed(o, err, now)
	return c.fallBack(ctx, e, in, failure, causeOf(failure, err))
}
