package command

import (
	"context"

	"github.com/rxhystrix/rxhystrix/metricsstream"
	"github.com/rxhystrix/rxhystrix/observable"
)

// executeInRequest is Execute once request contexts or cache keys exist:
// the request cache when the command has a cache key and its cache is on,
// the request log when ctx carries a request context.
func (c *Command[In, Out]) executeInRequest(ctx context.Context, in In) (Out, error) {
	if err := ctx.Err(); err != nil {
		var zero Out
		return zero, err
	}
	rc := requestContextOf(ctx)
	if c.cacheKey != nil && !c.k.config.Load().RequestCacheDisabled {
		if rc == nil {
			var zero Out
			return zero, c.k.noRequestContext()
		}
		ck, err := cacheKeyOf(c.k.key, c.cacheKey, in)
		if err != nil {
			var zero Out
			return zero, err
		}
		if v, err, ok := executeCached(ctx, c.pipe, rc, in, ck); ok {
			return v, err
		}
	}
	if log := rc.logFor(c.k); log != nil {
		return c.executeWith(ctx, in, 0, log)
	}
	return c.executeWith(ctx, in, 0, nil)
}

// executeWith is Execute's fused path for an execution that serves
// collapsed requests (it records COLLAPSED collapsed times) or that
// somebody must see once it has ended (rec, told just before the
// Completion is published). The execution stays on the stack.
func (c *Command[In, Out]) executeWith(ctx context.Context, in In, collapsed int, rec executionRecorder) (Out, error) {
	if err := ctx.Err(); err != nil {
		var zero Out
		return zero, err
	}
	var e execution
	e.begin(c.k)
	if collapsed > 0 {
		e.markCollapsed(collapsed)
	}
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
	if rec != nil {
		rec.recordExecution(e.logRecord())
	}
	e.finish(e.endTime())
	return v, err
}

// markCollapsed records that the execution serves n collapsed requests, as
// Hystrix's markAsCollapsedCommand: COLLAPSED n times in the result, once
// to the notifiers.
func (e *execution) markCollapsed(n int) {
	e.completion.Events[metricsstream.Collapsed] += int32(n)
	if e.hooked() {
		notify(e.global, e.local, e.k.key, metricsstream.Collapsed)
	}
}

// requestObservable is the pipeline's Observable once request contexts or
// cache keys exist: the request cache when cacheKey is set and the key's
// cache is on, the request log when ctx carries a request context.
func (p *pipeline[In, Out]) requestObservable(ctx context.Context, in In, cacheKey func(In) string) observable.Observable[Out] {
	rc := requestContextOf(ctx)
	if cacheKey != nil && !p.k.config.Load().RequestCacheDisabled {
		if rc == nil {
			return observable.Error[Out](p.k.noRequestContext())
		}
		ck, err := cacheKeyOf(p.k.key, cacheKey, in)
		if err != nil {
			return observable.Error[Out](err)
		}
		return p.cachedObservable(rc, ctx, in, ck)
	}
	if log := rc.logFor(p.k); log != nil {
		return p.observableEnded(ctx, in, log.record)
	}
	return p.observableEnded(ctx, in, nil)
}
