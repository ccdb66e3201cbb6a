package command

import (
	"context"

	"github.com/rxhystrix/rxhystrix/observable"
)

// executor is either kind of command, as the request cache and the
// request log see it: the Observable of one execution, whose end rec (when
// not nil) sees just before its Completion is published.
type executor[In, Out any] interface {
	state() *keyState
	observeRecorded(callerCtx context.Context, in In, rec executionRecorder) observable.Observable[Out]
}

func (c *Command[In, Out]) state() *keyState { return c.k }

func (c *Command[In, Out]) observeRecorded(ctx context.Context, in In, rec executionRecorder) observable.Observable[Out] {
	return observable.FromSingle[Out](&single[In, Out]{c: &c.core, ctx: ctx, in: in, rec: rec})
}

// callInRequest is Execute of x once request contexts or cache keys
// exist: the request cache when the command has a cache key and its cache
// is on, the request log when the context carries a request context.
func (c *Command[In, Out]) callInRequest(x *single[In, Out]) (Out, error) {
	ctx := x.ctx
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
		ck, err := cacheKeyOf(c.k.key, c.cacheKey, x.in)
		if err != nil {
			var zero Out
			return zero, err
		}
		if v, err, ok := executeCached[In, Out](ctx, c, rc, x.in, ck); ok {
			return v, err
		}
	}
	if log := rc.logFor(c.k); log != nil {
		x.rec = log
	}
	return x.Call(ctx)
}

// requestObservable is ToObservable of ex once request contexts or cache
// keys exist: the request cache when cacheKey is set and the key's cache
// is on, the request log when ctx carries a request context.
func requestObservable[In, Out any](ex executor[In, Out], ctx context.Context, in In, cacheKey func(In) string) observable.Observable[Out] {
	k := ex.state()
	rc := requestContextOf(ctx)
	if cacheKey != nil && !k.config.Load().RequestCacheDisabled {
		if rc == nil {
			return observable.Error[Out](k.noRequestContext())
		}
		ck, err := cacheKeyOf(k.key, cacheKey, in)
		if err != nil {
			return observable.Error[Out](err)
		}
		return cachedObservable(ex, rc, ctx, in, ck)
	}
	if log := rc.logFor(k); log != nil {
		return ex.observeRecorded(ctx, in, log)
	}
	return ex.observeRecorded(ctx, in, nil)
}
