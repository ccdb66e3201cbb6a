package limit

import (
	"errors"
	"fmt"
)

// Algorithm is the configuration of an adaptive limit: a [Vegas], a
// [Gradient2] or an [AIMD]. The zero value of each field means the
// algorithm's default. Algorithms are comparable values: two equal
// configurations are the same algorithm, which is how the command
// package tells a live change of algorithm from a configuration written
// back unchanged. Pass one as a value (Vegas{...}): the command package
// refuses a pointer to one, which would compare by address.
type Algorithm interface {
	// Name is the algorithm's name: "vegas", "gradient2" or "aimd".
	Name() string
	// Validate reports the fields that hold impossible values; each is
	// a *ConfigError, and errors.Is(err, ErrInvalidConfig) holds.
	Validate() error
	// estimator returns the algorithm's state, with defaults filled in.
	estimator() estimator
}

// estimator is the state of an algorithm: update returns the limit that
// follows limit after a sample, clamped into the algorithm's bounds.
type estimator interface {
	update(limit float64, s Sample) float64
	bounds() (min, max int)
	initial() int
}

// ErrInvalidConfig is the error every [ConfigError] matches with
// errors.Is.
var ErrInvalidConfig = errors.New("limit: invalid config")

// ConfigError reports a field of an algorithm's configuration with an
// impossible value.
type ConfigError struct {
	Field  string // the field's name with its type's, e.g. "Vegas.MaxLimit"
	Value  any    // its value
	Reason string // what is wrong, e.g. "must not be negative"
}

// Error names the field, its value and what is wrong, e.g.
// "limit: AIMD.BackoffRatio is 1.5: must be in [0.5, 1)".
func (e *ConfigError) Error() string {
	return fmt.Sprintf("limit: %s is %v: %s", e.Field, e.Value, e.Reason)
}

// Unwrap returns ErrInvalidConfig.
func (e *ConfigError) Unwrap() error { return ErrInvalidConfig }

// checker collects the ConfigErrors of one configuration.
type checker struct {
	kind string
	errs []error
}

func (c *checker) bad(field string, value any, reason string) {
	c.errs = append(c.errs, &ConfigError{Field: c.kind + "." + field, Value: value, Reason: reason})
}

func (c *checker) notNegative(field string, v int) {
	if v < 0 {
		c.bad(field, v, "must not be negative")
	}
}

// bounds checks the limits common to every algorithm, given the bounds
// with their defaults.
func (c *checker) bounds(initial, minLimit, maxLimit int, rawMin, rawMax int) {
	c.notNegative("InitialLimit", initial)
	c.notNegative("MinLimit", rawMin)
	c.notNegative("MaxLimit", rawMax)
	if rawMin < 0 || rawMax < 0 {
		return
	}
	if minLimit > maxLimit {
		c.bad("MinLimit", minLimit, fmt.Sprintf("must not exceed MaxLimit (%d)", maxLimit))
		return
	}
	if initial > 0 && (initial < minLimit || initial > maxLimit) {
		c.bad("InitialLimit", initial, fmt.Sprintf("must be in [MinLimit, MaxLimit] = [%d, %d]", minLimit, maxLimit))
	}
}

func (c *checker) err() error { return errors.Join(c.errs...) }

// orDefault returns v, or def when v is zero.
func orDefault[T int | float64](v, def T) T {
	if v == 0 {
		return def
	}
	return v
}

// clamp returns v within [lo, hi]. Two comparisons, where the built-in
// min and max of floats also order zeros and NaNs, which no estimate
// holds: clamp was 3 % of bench/peers rxhystrix-semaphore-gradient2.
func clamp(v, lo, hi float64) float64 {
	if v < lo {
		return lo
	}
	if v > hi {
		return hi
	}
	return v
}
