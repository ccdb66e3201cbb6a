package command

import "time"

// Scope says which requests a collapser batches together.
type Scope int

const (
	// RequestScope batches the requests of one request context
	// (WithRequestContext), as Hystrix's default.
	RequestScope Scope = iota
	// GlobalScope batches the requests of every caller.
	GlobalScope
)

// CollapserConfig configures a collapser. The zero value of every field
// means Hystrix's default.
type CollapserConfig struct {
	// MaxRequestsInBatch caps a batch; 0 means no cap.
	MaxRequestsInBatch int
	// Delay is how long a batch collects requests; 0 means 10ms.
	Delay time.Duration
	// Scope is RequestScope (the default) or GlobalScope.
	Scope Scope
	// RequestCacheDisabled turns the collapser's request cache off: then a
	// request whose argument is already in the batch fails with
	// ErrDuplicateArgument instead of sharing the response.
	RequestCacheDisabled bool
	// BatchCommandKey is the key of the command that runs the batches; ""
	// means the collapser key + "Batch".
	BatchCommandKey string
}

// DefaultCollapserDelay is how long a batch collects requests unless
// CollapserConfig.Delay says otherwise, as Hystrix's
// timerDelayInMilliseconds.
const DefaultCollapserDelay = 10 * time.Millisecond

// withDefaults returns c with its zero fields set to the defaults, for the
// collapser key.
func (c CollapserConfig) withDefaults(key string) CollapserConfig {
	if c.Delay == 0 {
		c.Delay = DefaultCollapserDelay
	}
	if c.BatchCommandKey == "" {
		c.BatchCommandKey = key + "Batch"
	}
	return c
}

// Validate reports the first field of c that is out of range, in an
// error that names it and matches ErrInvalidConfig.
func (c CollapserConfig) Validate() error {
	switch {
	case c.MaxRequestsInBatch < 0:
		return invalidConfig("command: CollapserConfig.MaxRequestsInBatch: %d is negative", c.MaxRequestsInBatch)
	case c.Delay < 0:
		return invalidConfig("command: CollapserConfig.Delay: %v is negative", c.Delay)
	case c.Scope != RequestScope && c.Scope != GlobalScope:
		return invalidConfig("command: CollapserConfig.Scope: unknown scope %d", int(c.Scope))
	case c.BatchCommandKey != "" && !ValidKey(c.BatchCommandKey):
		return invalidConfig("command: CollapserConfig.BatchCommandKey: %q is not valid UTF-8", c.BatchCommandKey)
	}
	return nil
}

// WithCollapserConfig configures a collapser made by NewCollapser; New
// and NewObservable, which make no collapser, panic if given it.
func WithCollapserConfig(cfg CollapserConfig) Option {
	if err := cfg.Validate(); err != nil {
		panic(err.Error())
	}
	return optionFunc(func(o *options) { o.collapser = &cfg })
}
