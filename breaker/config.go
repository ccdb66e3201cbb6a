package breaker

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// Defaults applied to zero fields of a [Config]; they are Hystrix's.
const (
	DefaultRequestVolumeThreshold   = 20
	DefaultErrorThresholdPercentage = 50
	DefaultSleepWindow              = 5 * time.Second
	DefaultHalfOpenTrials           = 1
	DefaultSlowCallRatePercentage   = 100
	DefaultMaxThrottlePercentage    = 80
	DefaultThrottleAggression       = 1.0
)

// MaxHalfOpenTrials is the largest Config.HalfOpenTrials a breaker
// accepts.
const MaxHalfOpenTrials = 1<<16 - 1

// Config is the configuration of a [Breaker]: Hystrix's circuitBreaker.*
// properties plus a few opt-in extensions. The zero Config is Hystrix's
// default breaker. Config is a plain value; a Breaker copies it.
type Config struct {
	// Disabled turns the breaker into a no-op (circuitBreaker.enabled =
	// false): every request is allowed, IsOpen is false, results are
	// ignored and the state stays Closed. It wins over ForceOpen and
	// ForceClosed.
	Disabled bool

	// RequestVolumeThreshold is the least number of requests in the
	// rolling window (HealthCounts.Total) that can trip the breaker
	// (circuitBreaker.requestVolumeThreshold). Zero means 20.
	RequestVolumeThreshold int

	// ErrorThresholdPercentage trips the breaker when the error percentage
	// of the rolling window is at least this much, 1 to 100
	// (circuitBreaker.errorThresholdPercentage). Zero means 50.
	ErrorThresholdPercentage int

	// SleepWindow is how long an open breaker rejects every request before
	// it lets a trial through (circuitBreaker.sleepWindowInMilliseconds).
	// Zero means 5s.
	SleepWindow time.Duration

	// ForceOpen rejects every request (circuitBreaker.forceOpen); it wins
	// over ForceClosed. The state machine keeps running underneath.
	ForceOpen bool

	// ForceClosed allows every request (circuitBreaker.forceClosed). The
	// state machine keeps running underneath, as in Hystrix: it may trip,
	// and is open when ForceClosed is turned off again.
	ForceClosed bool

	// HalfOpenTrials is how many concurrent trial requests a HALF_OPEN
	// breaker admits; all of them must succeed to close it and the first
	// failure re-opens it. Beyond Hystrix, opt-in: zero means 1, which is
	// Hystrix's single trial.
	HalfOpenTrials int

	// HalfOpenTrialTimeout bounds how long a HALF_OPEN breaker waits for
	// the result of an admitted trial: once the latest admitted trial has
	// been out for longer than this with a trial still unreported, the
	// breaker re-opens, as if that trial had failed when the bound ran
	// out, and a new sleep window starts. It is a safety net against a
	// caller that never reports (Hystrix can stay HALF_OPEN forever then).
	// Beyond Hystrix: zero means SleepWindow; negative means no bound
	// (Hystrix 1.5.13).
	HalfOpenTrialTimeout time.Duration

	// SlowCallDuration turns on tripping on slow calls: the health source
	// counts executions at least this slow in HealthCounts.Slow, and the
	// breaker trips when their percentage reaches SlowCallRatePercentage
	// (with the same RequestVolumeThreshold). The breaker does not measure
	// latency itself; whoever builds the HealthSource passes this value
	// on. Beyond Hystrix, opt-in: zero turns it off.
	SlowCallDuration time.Duration

	// SlowCallRatePercentage is the slow-call percentage, 1 to 100, that
	// trips the breaker when SlowCallDuration is set. Zero means 100. It
	// must be zero when SlowCallDuration is zero.
	SlowCallRatePercentage int

	// MaxSleepWindow makes the sleep window grow while the breaker's
	// trials fail, up to this bound: each time a HALF_OPEN breaker
	// re-opens, its new window is the one before times
	// SleepWindowMultiplier, and no longer than MaxSleepWindow. A close
	// makes the next trip's window SleepWindow again. A dependency that
	// stays down is then probed less and less often, as resilience4j's
	// exponential wait in the open state and Polly's break-duration
	// generator have it. Beyond Hystrix, opt-in: zero keeps every window
	// SleepWindow, as Hystrix does. It must be zero or at least
	// SleepWindow (5s when SleepWindow is zero).
	MaxSleepWindow time.Duration

	// SleepWindowMultiplier is the factor, more than 1, by which each
	// re-opening lengthens the sleep window when MaxSleepWindow is set.
	// Zero means 2. It must be zero when MaxSleepWindow is zero.
	SleepWindowMultiplier float64

	// SleepWindowJitter adds to each sleep window a random time in
	// [0, SleepWindowJitter), drawn when the breaker opens, so that the
	// breakers of a fleet's instances, opened together by one
	// dependency's failure, do not all send it their trials, and then
	// their traffic, at the same moment, as Envoy jitters the ejection
	// time of its outlier detection. Beyond Hystrix, opt-in: zero adds
	// none.
	SleepWindowJitter time.Duration

	// ConsecutiveFailures trips a Closed breaker as soon as this many
	// executions in a row did not succeed (MarkNonSuccess: failed, timed
	// out, rejected or panicked), at once, without waiting for a health
	// snapshot or for RequestVolumeThreshold executions in the window. A
	// command called a few times a minute never reaches Hystrix's volume
	// threshold, so its breaker never trips on the error percentage; this
	// one does. A success ends the run; a bad request (MarkIgnored) and a
	// cancellation (MarkCancelled) neither count nor end it. gobreaker
	// trips after more than 5 by default, failsafe-go's failure threshold
	// counts the same way. Beyond Hystrix, opt-in: zero turns it off.
	ConsecutiveFailures int

	// ThrottleSuccessPercentage turns on adaptive throttling, Google's
	// client-side throttling as Envoy's admission control filter has it:
	// while the breaker is Closed and the success percentage of the
	// health window is below this value, 1 to 100, it rejects each
	// request with a probability that grows as the success percentage
	// falls (see Config.ThrottleProbability), rather than all or nothing. A
	// dependency that answers half its calls then gets fewer of them,
	// without a trip that would cut its traffic off. Successes are the
	// executions of HealthCounts.Total that are not HealthCounts.Errors;
	// with fewer than RequestVolumeThreshold executions in the window
	// nothing is rejected. The error threshold still trips the breaker;
	// set ErrorThresholdPercentage to 100 for a breaker that throttles a
	// failing dependency and opens only when every call fails. Beyond
	// Hystrix, opt-in: zero turns it off.
	ThrottleSuccessPercentage int

	// ThrottleAggression shapes the rejection probability: 1 makes it
	// rise in proportion as the success percentage falls below
	// ThrottleSuccessPercentage; more than 1 rejects more at a success
	// percentage just below it. Zero means 1. It must be zero when
	// ThrottleSuccessPercentage is zero.
	ThrottleAggression float64

	// MaxThrottlePercentage bounds the rejection probability, 1 to 100,
	// so that some requests still reach the dependency and tell the
	// breaker when it has recovered. Zero means 80, as Envoy's
	// max_rejection_probability. It must be zero when
	// ThrottleSuccessPercentage is zero.
	MaxThrottlePercentage int
}

// DefaultSleepWindowMultiplier is the Config.SleepWindowMultiplier that
// zero stands for when Config.MaxSleepWindow is set: each failed trial
// doubles the sleep window.
const DefaultSleepWindowMultiplier = 2

// ErrInvalidConfig is the error every [ConfigError] matches with
// errors.Is.
var ErrInvalidConfig = errors.New("breaker: invalid config")

// ConfigError reports a Config field with an impossible value.
type ConfigError struct {
	Field  string // the field's name, e.g. "ErrorThresholdPercentage"
	Value  any    // its value
	Reason string // what is wrong, e.g. "must be between 0 and 100"
}

// Error names the field, its value and what is wrong, e.g.
// "breaker: Config.SleepWindow is -1s: must not be negative".
func (e *ConfigError) Error() string {
	return fmt.Sprintf("breaker: Config.%s is %v: %s", e.Field, e.Value, e.Reason)
}

// Unwrap returns ErrInvalidConfig.
func (e *ConfigError) Unwrap() error { return ErrInvalidConfig }

// Validate reports the fields of c that hold impossible values: negative
// counts or durations (HalfOpenTrialTimeout excepted), percentages over
// 100, more than MaxHalfOpenTrials trials, a SlowCallRatePercentage without
// a SlowCallDuration, a MaxSleepWindow shorter than the sleep window, a
// SleepWindowMultiplier that is not more than 1 or comes without a
// MaxSleepWindow, a negative SleepWindowJitter, a throttle aggression that
// is not a positive finite number, or a throttle aggression or maximum
// without ThrottleSuccessPercentage. It returns nil for a valid Config;
// otherwise each problem is a *ConfigError (joined with errors.Join when
// there are several), and errors.Is(err, ErrInvalidConfig) holds.
func (c Config) Validate() error {
	var errs []error
	bad := func(field string, value any, reason string) {
		errs = append(errs, &ConfigError{Field: field, Value: value, Reason: reason})
	}
	if c.RequestVolumeThreshold < 0 {
		bad("RequestVolumeThreshold", c.RequestVolumeThreshold, "must not be negative")
	}
	if c.ErrorThresholdPercentage < 0 || c.ErrorThresholdPercentage > 100 {
		bad("ErrorThresholdPercentage", c.ErrorThresholdPercentage, "must be between 0 and 100")
	}
	if c.SleepWindow < 0 {
		bad("SleepWindow", c.SleepWindow, "must not be negative")
	}
	if c.HalfOpenTrials < 0 || c.HalfOpenTrials > MaxHalfOpenTrials {
		bad("HalfOpenTrials", c.HalfOpenTrials, fmt.Sprintf("must be between 0 and %d", MaxHalfOpenTrials))
	}
	if c.SlowCallDuration < 0 {
		bad("SlowCallDuration", c.SlowCallDuration, "must not be negative")
	}
	if c.ConsecutiveFailures < 0 {
		bad("ConsecutiveFailures", c.ConsecutiveFailures, "must not be negative")
	}
	if c.SlowCallRatePercentage < 0 || c.SlowCallRatePercentage > 100 {
		bad("SlowCallRatePercentage", c.SlowCallRatePercentage, "must be between 0 and 100")
	} else if c.SlowCallRatePercentage != 0 && c.SlowCallDuration == 0 {
		bad("SlowCallRatePercentage", c.SlowCallRatePercentage, "is set but SlowCallDuration is zero")
	}
	sleepWindow := c.SleepWindow
	if sleepWindow == 0 {
		sleepWindow = DefaultSleepWindow
	}
	switch {
	case c.MaxSleepWindow < 0:
		bad("MaxSleepWindow", c.MaxSleepWindow, "must not be negative")
	case c.MaxSleepWindow != 0 && c.MaxSleepWindow < sleepWindow:
		bad("MaxSleepWindow", c.MaxSleepWindow, fmt.Sprintf("must be zero or at least the sleep window, %v", sleepWindow))
	}
	if c.SleepWindowJitter < 0 {
		bad("SleepWindowJitter", c.SleepWindowJitter, "must not be negative")
	}
	switch m := c.SleepWindowMultiplier; {
	case m == 0:
	case !(m > 1) || math.IsInf(m, 1):
		bad("SleepWindowMultiplier", m, "must be zero or a finite number more than 1")
	case c.MaxSleepWindow == 0:
		bad("SleepWindowMultiplier", m, "is set but MaxSleepWindow is zero")
	}
	c.validateThrottle(bad)
	return errors.Join(errs...)
}

// withDefaults returns c with its zero fields replaced by the values they
// stand for. c must be valid.
func (c Config) withDefaults() Config {
	if c.RequestVolumeThreshold == 0 {
		c.RequestVolumeThreshold = DefaultRequestVolumeThreshold
	}
	if c.ErrorThresholdPercentage == 0 {
		c.ErrorThresholdPercentage = DefaultErrorThresholdPercentage
	}
	if c.SleepWindow == 0 {
		c.SleepWindow = DefaultSleepWindow
	}
	if c.HalfOpenTrials == 0 {
		c.HalfOpenTrials = DefaultHalfOpenTrials
	}
	if c.HalfOpenTrialTimeout == 0 {
		c.HalfOpenTrialTimeout = c.SleepWindow
	}
	if c.SlowCallDuration > 0 && c.SlowCallRatePercentage == 0 {
		c.SlowCallRatePercentage = DefaultSlowCallRatePercentage
	}
	if c.MaxSleepWindow != 0 && c.SleepWindowMultiplier == 0 {
		c.SleepWindowMultiplier = DefaultSleepWindowMultiplier
	}
	if c.ThrottleSuccessPercentage != 0 {
		if c.ThrottleAggression == 0 {
			c.ThrottleAggression = DefaultThrottleAggression
		}
		if c.MaxThrottlePercentage == 0 {
			c.MaxThrottlePercentage = DefaultMaxThrottlePercentage
		}
	}
	return c
}

// sleepWindowAfter returns the sleep window of an opening that follows
// reopens re-openings from HALF_OPEN since the breaker last closed: each
// multiplies the window before it by SleepWindowMultiplier, up to
// MaxSleepWindow. c has its defaults. The loop ends as soon as the
// window stops growing, at MaxSleepWindow at the latest: however long the
// dependency stays down, it runs no more often than it takes the
// multiplier to reach MaxSleepWindow from SleepWindow.
func (c *Config) sleepWindowAfter(reopens int) time.Duration {
	w := c.SleepWindow
	for range reopens {
		next := c.MaxSleepWindow
		if f := float64(w) * c.SleepWindowMultiplier; f < float64(next) {
			next = time.Duration(f)
		}
		if next <= w {
			break
		}
		w = next
	}
	return w
}

// sleepWindowOf returns the sleep window of an opening that follows
// reopens re-openings from HALF_OPEN, with jitter, uniform in [0, 1),
// the share of SleepWindowJitter drawn for it. A window too long to add
// the jitter to stays as it is.
func (c *Config) sleepWindowOf(reopens int, jitter float64) time.Duration {
	w := c.sleepWindowAfter(reopens)
	if j := time.Duration(jitter * float64(c.SleepWindowJitter)); j > 0 && w+j > w {
		w += j
	}
	return w
}

// mode returns the word's mode bits for c: Disabled wins over ForceOpen,
// which wins over ForceClosed; a breaker that is not disabled counts runs
// of failures when ConsecutiveFailures is set.
func (c Config) mode() uint64 {
	if c.Disabled {
		return disabledBit | allowAllBit
	}
	var m uint64
	if c.ConsecutiveFailures > 0 {
		m = countsRunBit
	}
	switch {
	case c.ForceOpen:
		m |= forcedOpenBit
	case c.ForceClosed:
		m |= allowAllBit
	}
	return m
}
