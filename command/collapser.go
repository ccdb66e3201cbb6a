package command

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	"github.com/rxhystrix/rxhystrix/internal/clock"
	"github.com/rxhystrix/rxhystrix/metricsstream"
	"github.com/rxhystrix/rxhystrix/observable"
)

// ErrBatchResultCount is wrapped by the error of the requests of a batch
// whose function returned a slice of another length than its arguments.
var ErrBatchResultCount = errors.New("batch returned a wrong number of results")

// ErrDuplicateArgument is wrapped by the error of a request whose argument
// is already in the batch of a collapser whose request cache is off, as
// Hystrix's "Duplicate argument in collapser batch".
var ErrDuplicateArgument = errors.New("duplicate argument in collapser batch")

// BatchError is the error of a collapsed request whose batch failed: the
// batch command's error (an *Error, say, when the breaker was open), or
// ErrBatchResultCount. Every request of the batch gets one. errors.Is and
// errors.As see through it to Err.
type BatchError struct {
	// Collapser is the collapser key.
	Collapser string
	// Size is how many requests the batch held.
	Size int
	// Err is why the batch failed.
	Err error
}

// Error says which collapser's batch failed and why.
func (e *BatchError) Error() string {
	return fmt.Sprintf("collapser %s: batch of %d requests failed: %v", e.Collapser, e.Size, e.Err)
}

// Unwrap returns Err.
func (e *BatchError) Unwrap() error { return e.Err }

// Collapser batches requests, as Hystrix's HystrixCollapser: the requests
// that arrive within Delay of the first one of a batch (and at most
// MaxRequestsInBatch of them) are sent to the batch function as one call,
// and each caller gets its own result, the one at its argument's position
// in the slice the batch function returns.
//
// The batch function runs as a command of its own key (CollapserConfig's
// BatchCommandKey), with the Config, fallback, registry and isolation
// given to NewCollapser: its breaker, timeout and metrics work as for any
// command, and its Completion counts COLLAPSED once per request served.
// The collapser's own metrics (batches, requests batched, batch sizes) are
// in Metrics.
//
// With RequestScope (the default) the requests of one request context
// (WithRequestContext) are batched together, and a request without a
// request context fails with ErrNoRequestContext; with GlobalScope the
// requests of every caller are. A collapser batches only its own
// requests: two collapsers of the same key share metrics, not batches.
//
// Requests with equal arguments (the same cache key when WithCacheKey is
// given, otherwise equal values of a comparable In) share one place in a
// batch and one result while the request cache is on (the default); with
// CollapserConfig.RequestCacheDisabled the later ones fail with
// ErrDuplicateArgument. Within a request context, WithCacheKey also
// serves a request whose cache key was requested before from the earlier
// request's result, without a batch.
//
// The batch command's Config applies to every batch: with retries or
// hedges on, each attempt executes the whole batch and records its
// requests (COLLAPSED), and the requests get the result of the call.
//
// The batch function's context carries the callers of the batch's
// requests ([BatchOf]): their contexts, at their arguments' indexes, for
// what they hold (a user, a deadline), and for a Tracer to link the
// batch's trace to theirs.
//
// A caller whose context ends before the batch starts leaves it (an empty
// batch does not run); once every caller of a started batch has left, the
// batch command's context is cancelled. A Collapser is safe for
// concurrent use. Its timers run on the registry's clock; a batch runs on
// the goroutine of the timer that closes its window, or on a goroutine
// of its own when it fills up. No goroutine outlives a batch.
type Collapser[In, Out any] struct {
	key        string
	cfg        CollapserConfig // with defaults
	cmd        *Command[[]In, []Out]
	cacheKey   func(In) string
	comparable bool // values of In can be map keys
	dynamicKey bool // In may hold interface values: check each value
	metrics    *metricsstream.CollapserMetrics
	clock      clock.Clock
	global     *batcher[In, Out] // for GlobalScope
	discard    func(Out)         // WithDiscard's, or nil
}

// NewCollapser returns a collapser of key whose batches are calls of
// batch, which must return one result per argument, in the order of the
// arguments. Options: WithCollapserConfig (window, cap, scope, cache, batch
// command key), and those of the batch command: WithConfig,
// WithRegistry; the methods WithCacheKey, WithFallback and WithDiscard
// give the key of an argument, the batch command's fallback and what
// releases a result no caller receives. It panics if batch
// is nil, naming the key, if key is empty or not valid UTF-8, or if an
// option is invalid.
func NewCollapser[In, Out any](key string, batch func(context.Context, []In) ([]Out, error), opts ...Option) *Collapser[In, Out] {
	if batch == nil {
		panic(fmt.Sprintf("command: NewCollapser(%q): batch is nil", key))
	}
	mustKey("NewCollapser", key)
	o := buildOptions("NewCollapser", key, opts)
	var cfg CollapserConfig
	if o.collapser != nil {
		cfg = *o.collapser
	}
	cfg = cfg.withDefaults(key)
	c := &Collapser[In, Out]{
		key:        key,
		cfg:        cfg,
		comparable: reflect.TypeFor[In]().Comparable(),
		dynamicKey: holdsInterface(reflect.TypeFor[In]()),
		clock:      o.registry.clock,
	}
	cmdOptions := *o
	cmdOptions.collapser = nil
	c.cmd = New(cfg.BatchCommandKey, batch, optionFunc(func(dst *options) { *dst = cmdOptions }))
	var metricsCfg metricsstream.Config
	if o.config != nil {
		metricsCfg = o.config.Metrics
	}
	c.metrics = o.registry.metrics.Collapser(key, metricsCfg)
	c.metrics.SetStatusProvider(c)
	if cfg.Scope == GlobalScope {
		c.global = &batcher[In, Out]{c: c}
	}
	return c
}

// Key returns the collapser key.
func (c *Collapser[In, Out]) Key() string { return c.key }

// Config returns the collapser's configuration, with defaults filled in.
func (c *Collapser[In, Out]) Config() CollapserConfig { return c.cfg }

// Metrics returns the metrics of the collapser's key.
func (c *Collapser[In, Out]) Metrics() *metricsstream.CollapserMetrics { return c.metrics }

// BatchCommand returns the command that runs the batches: its breaker and
// metrics are those of the batch command key.
func (c *Collapser[In, Out]) BatchCommand() *Command[[]In, []Out] { return c.cmd }

// CollapserStatus reports the collapser's properties to its metrics, for
// the dashboard stream.
func (c *Collapser[In, Out]) CollapserStatus() metricsstream.CollapserStatus {
	return metricsstream.CollapserStatus{
		RequestCacheEnabled: !c.cfg.RequestCacheDisabled,
		MaxRequestsInBatch:  c.cfg.MaxRequestsInBatch,
		TimerDelay:          c.cfg.Delay,
	}
}

// Execute adds in to a batch and returns its result: the batch's result
// at in's position, or the batch's error in a *BatchError, or ctx's error
// when ctx ends first (the request then leaves its batch).
func (c *Collapser[In, Out]) Execute(ctx context.Context, in In) (Out, error) {
	return c.await(orBackground(ctx), nil, in, nil)
}

// ToObservable returns a cold Observable that adds in to a batch at each
// subscription and emits its result. Unsubscribing before the result
// leaves the batch, and so does ctx ending.
func (c *Collapser[In, Out]) ToObservable(ctx context.Context, in In) observable.Observable[Out] {
	return observable.FromSingle[Out](&collapsedSingle[In, Out]{c: c, ctx: orBackground(ctx), in: in})
}

// Observe adds in to a batch at once and returns a hot Observable that
// replays its result to every subscriber. When every subscriber has
// unsubscribed before the result, the request leaves its batch.
func (c *Collapser[In, Out]) Observe(ctx context.Context, in In) observable.Observable[Out] {
	ctx = orBackground(ctx)
	return observeNow(ctx, nil, c.ToObservable(ctx, in))
}

// Queue adds in to a batch before it returns, and returns a Future of its
// result. Cancelling the Future before the result leaves the batch.
func (c *Collapser[In, Out]) Queue(ctx context.Context, in In) *observable.Future[Out] {
	ctx = orBackground(ctx)
	return c.ToObservable(ctx, in).ToFutureOn(ctx, observable.Immediate)
}

// submit adds in to the batch of its scope, or joins a request of the
// request cache, when it reports fromCache.
func (c *Collapser[In, Out]) submit(ctx context.Context, in In) (r *collapsedRequest[In, Out], fromCache bool, err error) {
	rc := requestContextOf(ctx)
	b := c.global
	if c.cfg.Scope == RequestScope {
		if rc == nil {
			return nil, false, fmt.Errorf("collapser %s: %w", c.key, ErrNoRequestContext)
		}
		if rc.ended() { // the scope is over: its request cache does not stand in for it
			return nil, false, c.scopeEnded()
		}
		b = c.batcherOf(rc)
	}
	var ck string
	if c.cacheKey != nil {
		if ck, err = cacheKeyOf(c.key, c.cacheKey, in); err != nil {
			return nil, false, err
		}
	}
	if c.cacheKey == nil || c.cfg.RequestCacheDisabled || rc == nil {
		r, err = b.submit(ctx, in, ck, rc)
		return r, false, err
	}
	id := requestCacheKey{collapser: true, key: c.key, cacheKey: ck}
	for {
		v, ok := rc.cache.Load(id)
		if !ok {
			break
		}
		cached, typed := v.(*collapsedRequest[In, Out])
		if !typed {
			r, err = b.submit(ctx, in, ck, rc)
			return r, false, err
		}
		if cached.b.join(ctx, cached) {
			c.metrics.MarkResponseFromCache()
			return cached, true, nil
		}
		rc.cache.CompareAndDelete(id, v)
	}
	r, err = b.submit(ctx, in, ck, rc)
	if err == nil {
		rc.cache.LoadOrStore(id, r)
	}
	return r, false, err
}

// batcherOf returns the batcher of the request context rc.
func (c *Collapser[In, Out]) batcherOf(rc *requestContext) *batcher[In, Out] {
	if b, ok := rc.batchers.Load(c); ok {
		return b.(*batcher[In, Out])
	}
	b, _ := rc.batchers.LoadOrStore(c, &batcher[In, Out]{c: c, rc: rc})
	return b.(*batcher[In, Out])
}

// argumentKey returns the key under which in shares a place in a batch:
// its cache key ck, when the collapser has a cache key function, or in
// itself when it can be a map key.
func (c *Collapser[In, Out]) argumentKey(in In, ck string) (any, bool) {
	if c.cacheKey != nil {
		return ck, true
	}
	if !c.comparable {
		return nil, false
	}
	v := any(in)
	if c.dynamicKey && v != nil && !reflect.ValueOf(v).Comparable() {
		return nil, false // an interface holding a value that cannot be a key
	}
	return v, true
}

// holdsInterface reports whether values of the comparable type t may hold
// interface values, whose dynamic values may not be comparable.
func holdsInterface(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Interface:
		return true
	case reflect.Array:
		return holdsInterface(t.Elem())
	case reflect.Struct:
		for f := range t.Fields() {
			if holdsInterface(f.Type) {
				return true
			}
		}
	}
	return false
}

// duplicate is the error of a request whose argument is in the batch
// already while the request cache is off.
func (c *Collapser[In, Out]) duplicate(in In) error {
	return fmt.Errorf("collapser %s: %w: [%v]: turn the collapser's request cache on or keep duplicates out of the batch", c.key, ErrDuplicateArgument, in)
}

// scopeEnded is the error of a request whose request context ended before
// its batch ran.
func (c *Collapser[In, Out]) scopeEnded() error {
	return fmt.Errorf("collapser %s: %w", c.key, ErrRequestContextDone)
}
