package command

import (
	"context"
	"fmt"

	"github.com/rxhystrix/rxhystrix/breaker"
	"github.com/rxhystrix/rxhystrix/metricsstream"
	"github.com/rxhystrix/rxhystrix/observable"
)

// ToObservable returns a cold Observable that executes the command once
// per subscription and emits its value (run's or the fallback's) or its
// error. It is built stage by stage as Hystrix's toObservable; the
// subscription's context and ctx both reach run, and ctx's values (the
// request context) are visible to run and the fallback.
func (c *Command[In, Out]) ToObservable(ctx context.Context, in In) observable.Observable[Out] {
	ctx = orBackground(ctx)
	if requestScoped.Load() {
		return requestObservable[In, Out](c, ctx, in, c.cacheKey)
	}
	return observable.FromSingle[Out](&single[In, Out]{c: &c.core, ctx: ctx, in: in})
}

// Observe starts the command at once and returns a hot Observable that
// replays its result to every subscriber, as Hystrix's observe; unlike
// Hystrix's, it returns at once in either isolation. When
// every subscriber has unsubscribed before the result, the execution is
// cancelled: it is recorded as CANCELLED, its permits go back and run's
// context is cancelled.
func (c *Command[In, Out]) Observe(ctx context.Context, in In) observable.Observable[Out] {
	ctx = orBackground(ctx)
	return observeNow(ctx, c.k, c.ToObservable(ctx, in))
}

// Queue starts the command and returns at once a Future of its result.
// Cancelling the Future unsubscribes: the execution is recorded as
// CANCELLED and run's context is cancelled.
//
// An execution without retries or hedges is not started at once (see
// observable.Observable.ToFuture): a Get with a context that cannot end,
// called before it was, runs it as Execute does (see observable.Joinable),
// except that under semaphore isolation with a timeout run is handed to a
// goroutine of its own, so that the Get is answered at the timeout; and
// Queue(...).Get then costs about Execute and the Future (and that
// goroutine); otherwise it starts within about ten
// microseconds (a millisecond while the other Futures are all being
// taken over), or as soon as a Get with a context that can end waits for
// it. A Cancel ends run's context, and the execution is CANCELLED when
// run returns, or at once if it had not started.
func (c *Command[In, Out]) Queue(ctx context.Context, in In) *observable.Future[Out] {
	ctx = orBackground(ctx)
	return c.ToObservable(ctx, in).ToFuture(ctx)
}

// observeNow is Hystrix's observe: o, an execution of k (nil for a
// collapsed request), subscribed at once and replayed. When every
// subscriber has left before the result, the execution is cancelled
// (CANCELLED, permits back, run's context cancelled), and a collapsed
// request leaves its batch.
//
// Unlike Hystrix's, it never blocks its caller: a semaphore-isolated
// execution, which runs on the goroutine that subscribes, is subscribed
// on a goroutine of its own, as Queue's is, and a pool-isolated one has
// its worker for that. A Command's execution is handed over as Queue's
// is, in either isolation, so that a First with a context that cannot
// end may take it over (see Command.Queue); an ObservableCommand's, in a
// pool, is subscribed on the caller's goroutine, which a goroutine of
// its own would only hand on to the worker, unless the execution may
// first wait there for a rate limit's token. A collapsed request joins
// its batch at once.
func observeNow[Out any](ctx context.Context, k *keyState, o observable.Observable[Out]) observable.Observable[Out] {
	if k == nil {
		return o.ReplayNow(ctx)
	}
	if _, single := o.AsSingle(); single || waitsOnSubscriber(k.config.Load()) {
		return o.ReplayNowOn(ctx, observable.NewGoroutine)
	}
	return o.ReplayNow(ctx)
}

// waitsOnSubscriber reports whether an execution under cfg may wait on
// the goroutine that subscribes it: it runs there (semaphore isolation),
// or it may wait there for a rate limit's token (RateLimitConfig.MaxWait).
func waitsOnSubscriber(cfg *Config) bool {
	return cfg.Isolation == SemaphoreIsolation || cfg.RateLimit.Enabled && cfg.RateLimit.MaxWait > 0
}

// scalarFallback adapts a fallback that returns one value to an
// ObservableCommand's Observable fallback, recovering its panics.
func scalarFallback[In, Out any](f fallbackFunc[In, Out]) func(context.Context, In, error) observable.Observable[Out] {
	return func(ctx context.Context, in In, err error) observable.Observable[Out] {
		return observable.FromFunc(func(context.Context) (Out, error) { return callFallback(f, ctx, in, err) })
	}
}

// ObservableCommand is a command whose user code produces an Observable of
// any number of values, as Hystrix's HystrixObservableCommand: each value
// is recorded as EMIT (FALLBACK_EMIT from the fallback). It is
// semaphore-isolated unless its Config.Isolation says otherwise,
// as in Hystrix. It is safe for concurrent use.
type ObservableCommand[In, Out any] struct {
	core[In, Out]
	cacheKey func(In) string
}

// NewObservable returns an observable command of key whose user code is
// construct. It panics if construct is nil, naming the key, if key is
// empty or not valid UTF-8, or if an option is invalid.
func NewObservable[In, Out any](key string, construct func(context.Context, In) observable.Observable[Out], opts ...Option) *ObservableCommand[In, Out] {
	if construct == nil {
		panic(fmt.Sprintf("command: NewObservable(%q): construct is nil", key))
	}
	mustKey("NewObservable", key)
	o := buildOptions("NewObservable", key, opts)
	c := &ObservableCommand[In, Out]{}
	var cfg Config
	if o.config != nil {
		cfg = *o.config
	}
	c.k = o.registry.stateWithDefault(key, cfg, SemaphoreIsolation)
	c.construct = construct
	return c
}

// Key returns the command key.
func (c *ObservableCommand[In, Out]) Key() string { return c.k.key }

// Metrics returns the metrics of the command's key.
func (c *ObservableCommand[In, Out]) Metrics() *metricsstream.CommandMetrics { return c.k.metrics }

// Breaker returns the circuit breaker of the command's key.
func (c *ObservableCommand[In, Out]) Breaker() *breaker.Breaker { return c.k.breaker }

// ToObservable returns a cold Observable that executes the command once
// per subscription. First of it takes the first value and leaves, as
// Hystrix's first(): the execution records EMIT (FALLBACK_EMIT for the
// fallback's value), then CANCELLED. Unless the command is
// semaphore-isolated with a timeout, First runs the execution on its own
// goroutine, as Command.Execute does, without subscribing.
func (c *ObservableCommand[In, Out]) ToObservable(ctx context.Context, in In) observable.Observable[Out] {
	ctx = orBackground(ctx)
	if requestScoped.Load() {
		return requestObservable[In, Out](c, ctx, in, c.cacheKey)
	}
	return c.observeRecorded(ctx, in, nil)
}

// observeRecorded is the Observable of one execution per subscription,
// whose end rec, when not nil, sees. First of it is fused (see
// observable_first.go).
func (c *ObservableCommand[In, Out]) observeRecorded(ctx context.Context, in In, rec executionRecorder) observable.Observable[Out] {
	return observable.FromProducer[Out](&observableExecution[In, Out]{c: c, ctx: ctx, in: in, rec: rec})
}

// Observe starts the command at once and returns a hot Observable that
// replays all its values to every subscriber. When every subscriber has
// unsubscribed before the last value, the execution is cancelled, as
// Command.Observe's.
func (c *ObservableCommand[In, Out]) Observe(ctx context.Context, in In) observable.Observable[Out] {
	ctx = orBackground(ctx)
	return observeNow(ctx, c.k, c.ToObservable(ctx, in))
}

// Queue starts the command and returns at once a Future of all its
// values.
func (c *ObservableCommand[In, Out]) Queue(ctx context.Context, in In) *observable.Future[[]Out] {
	ctx = orBackground(ctx)
	return observable.FromSingle[[]Out](&allValues[In, Out]{c.ToObservable(ctx, in), &c.core}).ToFuture(ctx)
}

// allValues is the Single of every value of an ObservableCommand's
// execution, for Queue: values its Future does not take go to the
// command's WithDiscard function.
type allValues[In, Out any] struct {
	o observable.Observable[Out]
	c *core[In, Out]
}

// Call collects the values. A Future gives an error alone: the values a
// stream emitted before it failed are dropped.
func (a *allValues[In, Out]) Call(ctx context.Context) ([]Out, error) {
	vs, err := a.o.ToSlice(ctx)
	if err != nil {
		a.Discard(vs)
		return nil, err
	}
	return vs, nil
}

func (a *allValues[In, Out]) SubscribeSingle(ctx context.Context, obs observable.SingleObserver[[]Out]) {
	obs.OnResult(a.Call(ctx))
}

// Async is false: the values are collected on the subscribing goroutine.
func (a *allValues[In, Out]) Async() bool { return false }

// Discard hands each of vs to the command's WithDiscard function.
func (a *allValues[In, Out]) Discard(vs []Out) {
	for _, v := range vs {
		a.c.drop(v, nil)
	}
}

// Execute runs the command and returns all its values.
func (c *ObservableCommand[In, Out]) Execute(ctx context.Context, in In) ([]Out, error) {
	ctx = orBackground(ctx)
	return c.ToObservable(ctx, in).ToSlice(ctx)
}

// doCall is the input of the command behind Do.
type doCall struct {
	run      func(context.Context) error
	fallback func(context.Context, error) error
}

// doCommands are the commands behind Do, with and without a fallback.
type doCommands struct {
	withFallback, without *Command[doCall, struct{}]
}

// Do runs run as a command of key in DefaultRegistry, with fallback (which
// may be nil) as its fallback, in the style of hystrix-go's Do: commands
// of the key share breaker, metrics and permits with every other command
// of the key. It panics if run is nil, and returns an error wrapping
// ErrInvalidKey, running nothing, if key is empty or not valid UTF-8.
func Do(ctx context.Context, key string, run func(context.Context) error, fallback func(context.Context, error) error) error {
	return DefaultRegistry.Do(ctx, key, run, fallback)
}

// Do is the package-level Do in this registry.
func (r *Registry) Do(ctx context.Context, key string, run func(context.Context) error, fallback func(context.Context, error) error) error {
	if run == nil {
		panic(fmt.Sprintf("command: Do(%q): run is nil", key))
	}
	cmds, err := r.doCommandsFor(key)
	if err != nil {
		return err
	}
	c := cmds.without
	if fallback != nil {
		c = cmds.withFallback
	}
	_, err = c.Execute(ctx, doCall{run: run, fallback: fallback})
	return err
}

// doCommandsFor returns the commands behind Do for key, making them on
// the key's first use; a key that cannot name a command is an error.
func (r *Registry) doCommandsFor(key string) (*doCommands, error) {
	if d, ok := r.doCmds.Load(key); ok {
		return d.(*doCommands), nil
	}
	if err := checkKey("key", key); err != nil {
		return nil, fmt.Errorf("command: Do(%q): %w", key, err)
	}
	run := func(ctx context.Context, call doCall) (struct{}, error) { return struct{}{}, call.run(ctx) }
	d := &doCommands{
		without: New(key, run, WithRegistry(r)),
		withFallback: New(key, run, WithRegistry(r)).WithFallback(func(ctx context.Context, call doCall, err error) (struct{}, error) {
			return struct{}{}, call.fallback(ctx, err)
		}),
	}
	actual, _ := r.doCmds.LoadOrStore(key, d)
	return actual.(*doCommands), nil
}
