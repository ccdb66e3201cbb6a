package command

import (
	"fmt"
)

// Option configures a command, an observable command or a collapser: the
// settings that do not depend on the command's types. The functions that
// do (a fallback, a cache key, a pool key) are given with the methods of
// the same names, whose types the compiler checks:
//
//	getUser := command.New("GetUser", fetchUser, command.WithConfig(cfg)).
//		WithFallback(anonymousUser)
type Option interface{ apply(*options) }

type options struct {
	config    *Config
	registry  *Registry
	collapser *CollapserConfig
}

type optionFunc func(*options)

func (f optionFunc) apply(o *options) { f(o) }

// WithConfig sets the configuration of the command's key, if the key has
// none yet (the first Config seen for a key holds until Configure changes
// it). New panics if cfg is invalid, naming the field.
func WithConfig(cfg Config) Option {
	return optionFunc(func(o *options) { o.config = &cfg })
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
	if o.collapser != nil && kind != "NewCollapser" {
		panic(fmt.Sprintf("command: %s(%q): WithCollapserConfig configures a collapser: give it to NewCollapser", kind, key))
	}
	if o.registry == nil {
		o.registry = DefaultRegistry
	}
	if o.config != nil {
		if err := o.config.Validate(); err != nil {
			panic(fmt.Sprintf("command: %s(%q): %v", kind, key, err))
		}
	}
	return o
}
