package command

import (
	"errors"
	"fmt"
)

// ErrInvalidConfig is found (with errors.Is) in every error of
// [Config.Validate], [PoolConfig.Validate] and [CollapserConfig.Validate],
// and so of [Registry.Configure] and [Registry.ConfigurePool] given a
// configuration they refuse. The message names the field and its value.
// An error from a nested configuration (Config.Breaker, Config.Metrics,
// an AdaptiveLimit, Config.Retry.Backoff) also matches that package's own
// error, such as breaker.ErrInvalidConfig or observable.ErrInvalidPolicy.
var ErrInvalidConfig = errors.New("command: invalid config")

// invalidConfig returns the error of a field with an impossible value:
// the message is format's, and the error matches ErrInvalidConfig and
// whatever an argument given to %w matches.
func invalidConfig(format string, args ...any) error {
	return &configError{fmt.Errorf(format, args...)}
}

// configError is an error of a Validate of this package. It keeps the
// message of its cause, which names the field, rather than put
// ErrInvalidConfig's text in front of it.
type configError struct{ cause error }

func (e *configError) Error() string   { return e.cause.Error() }
func (e *configError) Unwrap() []error { return []error{ErrInvalidConfig, e.cause} }
