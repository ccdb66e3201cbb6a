package command

import (
	"context"
	"fmt"

	"github.com/rxhystrix/rxhystrix/observable"
)

// Option configures a command, an observable command or a collapser.
type Option interface{ apply(*options) }

type options struct {
	config      *Config
	fallback    any
	fallbackObs any
	cacheKey    any
	poolKey     any
	registry    *Registry
	collapser   *CollapserConfig
	isolation   *Isolation
}

type optionFunc func(*options)

func (f optionFunc) apply(o *options) { f(o) }

// WithConfig sets the configuration of the command's key, if the key has
// none yet (the first Config seen for a key holds until Configure changes
// it). New panics if cfg is invalid, naming the field.
func WithConfig(cfg Config) Option {
	return optionFunc(func(o *options) { o.config = &cfg })
}

// WithFallback gives a command of any kind a fallback, called with the
// command's input and an *Error saying why run did not produce the value.
// Its In and Out must be those of the command.
func WithFallback[In, Out any](f func(ctx context.Context, in In, err error) (Out, error)) Option {
	if f == nil {
		panic("command: WithFallback with nil f")
	}
	return optionFunc(func(o *options) { o.fallback = f })
}

// WithFallbackObservable gives a command of any kind a fallback that
// produces its values as an Observable (Hystrix's resumeWithFallback).
func WithFallbackObservable[In, Out any](f func(ctx context.Context, in In, err error) observable.Observable[Out]) Option {
	if f == nil {
		panic("command: WithFallbackObservable with nil f")
	}
	return optionFunc(func(o *options) { o.fallbackObs = f })
}

// WithCacheKey turns the request cache on for the command: executions of
// the key with the same cache key inside one request context
// (WithRequestContext) run once.
func WithCacheKey[In any](f func(In) string) Option {
	if f == nil {
		panic("command: WithCacheKey with nil f")
	}
	return optionFunc(func(o *options) { o.cacheKey = f })
}

// WithPoolKey runs each call in the pool named by f(in) instead of
// Config.Pool, e.g. one pool per downstream URL. Such pools are made on
// first use and retired after PoolConfig.IdleTimeout without work.
func WithPoolKey[In any](f func(In) string) Option {
	if f == nil {
		panic("command: WithPoolKey with nil f")
	}
	return optionFunc(func(o *options) { o.poolKey = f })
}

// WithIsolation sets the isolation of a new key explicitly, over
// WithConfig's; it is how an ObservableCommand (semaphore-isolated by
// default) asks for a pool.
func WithIsolation(i Isolation) Option {
	if i < DefaultIsolation || i > SemaphoreIsolation {
		panic(fmt.Sprintf("command: WithIsolation: unknown isolation %d", int(i)))
	}
	return optionFunc(func(o *options) { o.isolation = &i })
}

// WithRegistry makes the command share state in r instead of
// DefaultRegistry.
func WithRegistry(r *Registry) Option {
	if r == nil {
		panic("command: WithRegistry with nil registry")
	}
	return optionFunc(func(o *options) { o.registry = r })
}

func buildOptions(kind, key string, opts []Option) *options {
	o := &options{}
	for i, opt := range opts {
		if opt == nil {
			panic(fmt.Sprintf("command: %s(%q): option %d is nil", kind, key, i))
		}
		opt.apply(o)
	}
	if o.registry == nil {
		o.registry = DefaultRegistry
	}
	if o.cacheKey != nil {
		requestScoped.Store(true)
	}
	if o.config != nil {
		if err := o.config.Validate(); err != nil {
			panic(fmt.Sprintf("command: %s(%q): %v", kind, key, err))
		}
	}
	return o
}

// typed asserts that an option's function has the command's types.
func typed[F any](kind, key, option string, v any) F {
	var zero F
	if v == nil {
		return zero
	}
	f, ok := v.(F)
	if !ok {
		panic(fmt.Sprintf("command: %s(%q): %s has type %T, want %T", kind, key, option, v, zero))
	}
	return f
}
