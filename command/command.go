package command

import (
	"context"
	"fmt"

	"github.com/rxhystrix/rxhystrix/breaker"
	"github.com/rxhystrix/rxhystrix/metricsstream"
	"github.com/rxhystrix/rxhystrix/observable"
)

// Command wraps run, a call to a downstream dependency, with Hystrix's
// protections: circuit breaker, isolation, timeout, fallback and metrics.
// A Command is safe for concurrent use and is made once and executed many
// times (unlike a Hystrix command instance, which runs once).
type Command[In, Out any] struct {
	core[In, Out]
	fbObs    func(context.Context, In, error) observable.Observable[Out]
	cacheKey func(In) string
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
	c := &Command[In, Out]{core: core[In, Out]{run: run}}
	var cfg Config
	if o.config != nil {
		cfg = *o.config
	}
	c.k = o.registry.state(key, cfg)
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
// error when ctx ends first (recorded as CANCELLED).
//
// Execute is ToObservable(ctx, in).First(ctx), as Hystrix's execute is
// toObservable().toBlocking().single(): First of the command's Observable
// calls its single execution on the caller's goroutine (see
// observable.Single), and Execute makes that call without building the
// Observable.
func (c *Command[In, Out]) Execute(ctx context.Context, in In) (Out, error) {
	x := single[In, Out]{c: &c.core, ctx: orBackground(ctx), in: in}
	if requestScoped.Load() {
		return c.callInRequest(&x)
	}
	return x.Call(x.ctx)
}

// observableFallback adapts an Observable fallback to a scalar one: its
// last value.
func (c *Command[In, Out]) observableFallback(ctx context.Context, in In, err error) (Out, error) {
	return c.fbObs(ctx, in, err).Last(ctx)
}
