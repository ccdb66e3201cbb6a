package command

import (
	"context"
	"fmt"

	"github.com/rxhystrix/rxhystrix/observable"
)

// The functions of a command that depend on its types are given with
// methods, so that the compiler checks them: each returns a copy of the
// command with the function set, sharing the key's breaker, metrics,
// permits and pools with every other command of the key. The command it
// is called on is unchanged; use the copy.

// derive returns a copy of c's functions, with a pool of calls of its own.
func (c *core[In, Out]) derive() core[In, Out] {
	return core[In, Out]{k: c.k, run: c.run, construct: c.construct, fallback: c.fallback, fallbackObs: c.fallbackObs, poolKey: c.poolKey, discard: c.discard, isBad: c.isBad}
}

func (c *Command[In, Out]) derive() *Command[In, Out] {
	return &Command[In, Out]{core: c.core.derive(), fbObs: c.fbObs, cacheKey: c.cacheKey}
}

// WithFallback returns a copy of c that falls back to f, called with the
// command's input and an *Error saying why run did not produce the value.
// It panics if f is nil.
func (c *Command[In, Out]) WithFallback(f func(ctx context.Context, in In, err error) (Out, error)) *Command[In, Out] {
	mustFunc(c.k.key, "WithFallback", f == nil)
	d := c.derive()
	d.fallback, d.fbObs = f, nil
	return d
}

// WithFallbackObservable returns a copy of c whose fallback produces its
// value as an Observable (Hystrix's resumeWithFallback): its last value.
// It panics if f is nil.
func (c *Command[In, Out]) WithFallbackObservable(f func(ctx context.Context, in In, err error) observable.Observable[Out]) *Command[In, Out] {
	mustFunc(c.k.key, "WithFallbackObservable", f == nil)
	d := c.derive()
	d.fbObs = f
	d.fallback = d.observableFallback
	return d
}

// WithCacheKey returns a copy of c with the request cache on: executions
// of the key with the same cache key f(in) inside one request context
// (WithRequestContext) run once. It panics if f is nil.
func (c *Command[In, Out]) WithCacheKey(f func(in In) string) *Command[In, Out] {
	mustFunc(c.k.key, "WithCacheKey", f == nil)
	requestScoped.Store(true)
	d := c.derive()
	d.cacheKey = f
	return d
}

// WithPoolKey returns a copy of c that runs each call in the pool named
// f(in) instead of Config.Pool, e.g. one pool per downstream URL. Such
// pools are made on first use and retired after PoolConfig.IdleTimeout
// without work. It panics if f is nil.
func (c *Command[In, Out]) WithPoolKey(f func(in In) string) *Command[In, Out] {
	mustFunc(c.k.key, "WithPoolKey", f == nil)
	d := c.derive()
	d.poolKey = f
	return d
}

// WithDiscard returns a copy of c that hands discard every value its run
// or its fallback returned with a nil error that no caller receives, so
// that what such a value holds open (rows, a response body, a
// connection) is released: the collector frees the value, not what it
// holds. Such a value is one that
//   - run returned after its execution had ended: at the timeout, when
//     the caller left or every subscriber unsubscribed, or when another
//     attempt had won a hedge's race;
//   - run returned as its execution ended otherwise: past the timeout
//     (TIMEOUT, and the fallback answers), or once the caller had left
//     (CANCELLED);
//   - the fallback returned after the subscriber had left.
//
// A value a caller receives is the caller's to release: what Execute
// returns, what a Future holds (whether or not Get is called), what an
// Observable of the command tells its subscriber, and what the request
// cache keeps for the later callers of its key. An operator of package
// observable that takes the value from ToObservable's Observable and
// drops it hands it to discard too (observable.Discarder): Zip2 when
// the other side fails or the subscriber has left before the pair,
// Timeout past its deadline, a Future (Queue's) cancelled as the value
// comes, Observe's replay once every subscriber has left. What an
// operator makes of the value (Map's value, Zip2's pair) is the
// composition's to release.
//
// discard is called once per such value, on the goroutine that finds the
// value has nowhere to go (a pool worker, a timer's, the caller's), maybe
// at the same time as other calls of it. It should return quickly, and
// must not panic: on a worker, a panic ends the program. WithDiscard
// panics if discard is nil.
func (c *Command[In, Out]) WithDiscard(discard func(Out)) *Command[In, Out] {
	mustFunc(c.k.key, "WithDiscard", discard == nil)
	d := c.derive()
	d.discard = discard
	return d
}

func (c *ObservableCommand[In, Out]) derive() *ObservableCommand[In, Out] {
	return &ObservableCommand[In, Out]{core: c.core.derive(), cacheKey: c.cacheKey}
}

// WithFallbackObservable returns a copy of c whose fallback produces its
// values as an Observable (Hystrix's resumeWithFallback), each recorded as
// FALLBACK_EMIT. It panics if f is nil.
func (c *ObservableCommand[In, Out]) WithFallbackObservable(f func(ctx context.Context, in In, err error) observable.Observable[Out]) *ObservableCommand[In, Out] {
	mustFunc(c.k.key, "WithFallbackObservable", f == nil)
	d := c.derive()
	d.fallbackObs = f
	return d
}

// WithFallback returns a copy of c whose fallback produces one value. It
// panics if f is nil.
func (c *ObservableCommand[In, Out]) WithFallback(f func(ctx context.Context, in In, err error) (Out, error)) *ObservableCommand[In, Out] {
	mustFunc(c.k.key, "WithFallback", f == nil)
	d := c.derive()
	d.fallbackObs = scalarFallback(f)
	return d
}

// WithCacheKey is Command.WithCacheKey for an observable command.
func (c *ObservableCommand[In, Out]) WithCacheKey(f func(in In) string) *ObservableCommand[In, Out] {
	mustFunc(c.k.key, "WithCacheKey", f == nil)
	requestScoped.Store(true)
	d := c.derive()
	d.cacheKey = f
	return d
}

// WithPoolKey is Command.WithPoolKey for an observable command.
func (c *ObservableCommand[In, Out]) WithPoolKey(f func(in In) string) *ObservableCommand[In, Out] {
	mustFunc(c.k.key, "WithPoolKey", f == nil)
	d := c.derive()
	d.poolKey = f
	return d
}

// WithDiscard returns a copy of c that hands discard each value of its
// Observable, or of its Observable fallback, that no caller receives, as
// [Command.WithDiscard] does for a run's. Such a value is one that comes
//   - once its execution has ended: at the timeout, when the subscriber
//     or the caller left, or when another attempt had won a hedge's race;
//   - once the subscription it was meant for has ended, or as it ends:
//     after the value First took, or the values Execute, ToSlice or a
//     Future of Queue had collected when their context ended.
//
// A value a caller receives is the caller's to release: what Execute
// returns (with an error too, when the stream failed part way), what a
// Future holds, what an Observable of the command tells its subscriber.
// Observe's replay keeps what it was given for the subscribers to come,
// even once every subscriber has left: its values are not discarded. A
// hedged command discards what an attempt that lost the race emits.
//
// The user's Observable is subscribed under a context that ends with its
// execution, and an Observable made by package observable (Create, say)
// drops what it is given to emit after that, as its documentation says:
// such an Observable should stop, and release what it holds, once its
// context ends. A synchronous Single (observable.FromFunc, and the
// fallback of WithFallback) hands its value to the execution directly,
// so a value it returns late is discarded here.
//
// discard is called once per such value, on the goroutine that drops it,
// maybe at the same time as other calls of it. It should return quickly,
// and must not panic. WithDiscard panics if discard is nil.
func (c *ObservableCommand[In, Out]) WithDiscard(discard func(Out)) *ObservableCommand[In, Out] {
	mustFunc(c.k.key, "WithDiscard", discard == nil)
	d := c.derive()
	d.discard = discard
	return d
}

// mustFunc panics, naming the key and the method, if a function given to a
// method is nil.
func mustFunc(key, method string, isNil bool) {
	if isNil {
		panic(fmt.Sprintf("command: %s of %q with nil f", method, key))
	}
}

// derive returns a copy of c, batching on its own.
func (c *Collapser[In, Out]) derive() *Collapser[In, Out] {
	d := &Collapser[In, Out]{key: c.key, cfg: c.cfg, cmd: c.cmd, cacheKey: c.cacheKey, comparable: c.comparable,
		dynamicKey: c.dynamicKey, metrics: c.metrics, clock: c.clock, discard: c.discard}
	if c.global != nil {
		d.global = &batcher[In, Out]{c: d}
	}
	return d
}

// WithCacheKey returns a copy of c whose requests are served from the
// request cache by the key f(arg): requests of one request context with
// the same cache key share one response. The copy batches on its own: use
// it instead of c. It panics if f is nil.
func (c *Collapser[In, Out]) WithCacheKey(f func(arg In) string) *Collapser[In, Out] {
	mustFunc(c.key, "WithCacheKey", f == nil)
	requestScoped.Store(true)
	d := c.derive()
	d.cacheKey = f
	return d
}

// WithFallback returns a copy of c whose batch command falls back to f,
// which must return one result per argument as the batch function does.
// The copy batches on its own: use it instead of c. It panics if f is nil.
func (c *Collapser[In, Out]) WithFallback(f func(ctx context.Context, args []In, err error) ([]Out, error)) *Collapser[In, Out] {
	mustFunc(c.key, "WithFallback", f == nil)
	d := c.derive()
	d.cmd = c.cmd.WithFallback(f)
	return d
}

// WithDiscard returns a copy of c that calls discard with each result of
// its batches that no caller receives, as [Command.WithDiscard] does for a
// command's values, so that what such a result holds open can be
// released. Such a result is
//   - the result of a request whose every caller left once its batch had
//     started: the batch cannot give the argument back, and the request
//     cache no longer serves it;
//   - every result of a batch that returned a wrong number of them,
//     discarded before its requests fail with ErrBatchResultCount;
//   - every result of a batch the batch command no longer takes: returned
//     past its timeout, after every caller left, or by the loser of a
//     hedge (the batch command's own WithDiscard, called with each of its
//     results).
//
// A result a caller receives is the caller's to release, and so is one
// the request cache keeps for the later callers of its key; requests
// with equal arguments share one result, which is discarded only when
// none of them receives it. An operator of package observable that drops
// a result of ToObservable's Observable (observable.Discarder: a Future
// of Queue that was cancelled as it came, Observe's replay once every
// subscriber left, Zip2, Timeout) gives it back, and it is discarded
// once no other caller of its argument holds it; this holds for an
// Observable of ToObservable subscribed once, as Queue's and Observe's
// are. discard is called once per such result, on
// the goroutine that finds it has nowhere to go, outside every lock; it
// should return quickly and must not panic. The copy batches on its own:
// use it instead of c. It panics if discard is nil.
func (c *Collapser[In, Out]) WithDiscard(discard func(Out)) *Collapser[In, Out] {
	mustFunc(c.key, "WithDiscard", discard == nil)
	d := c.derive()
	d.discard = discard
	d.cmd = c.cmd.WithDiscard(func(outs []Out) {
		for _, v := range outs {
			discard(v)
		}
	})
	return d
}
