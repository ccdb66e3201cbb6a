package metricsstream

import (
	"errors"
	"fmt"
	"time"
)

// ErrInvalidConfig is wrapped by the error [Config.Validate] returns; the
// message names the offending field.
var ErrInvalidConfig = errors.New("metricsstream: invalid config")

// The defaults of [Config], Hystrix's (section 4.1 of its properties).
const (
	DefaultRollingWindow          = 10 * time.Second       // metrics.rollingStats.timeInMilliseconds
	DefaultBuckets                = 10                     // metrics.rollingStats.numBuckets
	DefaultHealthSnapshotInterval = 500 * time.Millisecond // metrics.healthSnapshot.intervalInMilliseconds
	DefaultPercentileWindow       = 60 * time.Second       // metrics.rollingPercentile.timeInMilliseconds
	DefaultPercentileBuckets      = 6                      // metrics.rollingPercentile.numBuckets
)

// MaxBuckets is the most buckets [Config] may cut a window into: the
// rolling window into Buckets or into health buckets of
// HealthSnapshotInterval, the percentile window into PercentileBuckets.
// Metrics hold every bucket of a window in memory; 10,000 allows Hystrix's
// millisecond granularity over its default 10s window.
const MaxBuckets = 10_000

// MaxWindow is the longest RollingWindow and PercentileWindow [Config]
// accepts. Bucket boundaries are counted in nanoseconds from the metrics'
// creation; a window of a century or more would overflow them after its
// first buckets and make its streams tick without pause.
const MaxWindow = 365 * 24 * time.Hour

// Config sets the windows of a command's metrics. The zero value is
// Hystrix's defaults; a zero field takes its default. Windows are read
// once, when the metrics of a key are created, as in Hystrix.
type Config struct {
	// RollingWindow is the window of the rolling counts, the rolling
	// maximum concurrency and the health counts. 0 means 10s.
	RollingWindow time.Duration
	// Buckets is how many buckets RollingWindow is cut into; a rolling
	// count is the sum of the last Buckets closed buckets. 0 means 10.
	Buckets int
	// HealthSnapshotInterval is the bucket of the health counts and the
	// period of [CommandMetrics.HealthStream]; the health window holds
	// RollingWindow/HealthSnapshotInterval buckets (rounded down, at least
	// one). 0 means 500ms.
	HealthSnapshotInterval time.Duration
	// PercentileWindow is the window of the latency distributions. 0 means
	// 60s.
	PercentileWindow time.Duration
	// PercentileBuckets is how many buckets PercentileWindow is cut into.
	// 0 means 6.
	PercentileBuckets int
	// PercentileDisabled turns latency recording off: the distributions
	// stay empty and their percentiles and means read 0.
	PercentileDisabled bool
	// SlowCallDuration makes executions whose execution latency is at
	// least this long count in [HealthCounts.Slow]. 0 turns it off.
	// [CommandMetrics.SetSlowCallDuration] changes it live.
	SlowCallDuration time.Duration
	// HealthWindowCalls makes the health counts those of the latest
	// HealthWindowCalls executions that count in health, however long
	// ago they ended, instead of those of the rolling window:
	// resilience4j's count-based sliding window (its default, of 100
	// calls). A command called a few times a minute then has a window
	// of its latest calls to judge, where Hystrix's 10 seconds hold one
	// or two. The health stream still ticks every
	// HealthSnapshotInterval, and the rolling counts stay time-based.
	// Each execution then also adds to a counter of the key's, a write
	// shared by all its callers. [CommandMetrics.HealthBuckets], which
	// package fleet sums, stay time-based. 0 (the default) keeps
	// Hystrix's time window; at most [MaxHealthWindowCalls].
	HealthWindowCalls int
}

// Validate reports the first field of c that is negative, is a window
// longer than [MaxWindow], makes a bucket empty, cuts a window into more
// than [MaxBuckets] buckets or asks for a window of more than
// [MaxHealthWindowCalls] calls, in an error that names it and wraps
// [ErrInvalidConfig]. Zero fields are valid: they take their defaults.
func (c Config) Validate() error {
	switch {
	case c.RollingWindow < 0:
		return invalid("RollingWindow", c.RollingWindow, "is negative")
	case c.Buckets < 0:
		return invalid("Buckets", c.Buckets, "is negative")
	case c.HealthSnapshotInterval < 0:
		return invalid("HealthSnapshotInterval", c.HealthSnapshotInterval, "is negative")
	case c.PercentileWindow < 0:
		return invalid("PercentileWindow", c.PercentileWindow, "is negative")
	case c.PercentileBuckets < 0:
		return invalid("PercentileBuckets", c.PercentileBuckets, "is negative")
	case c.SlowCallDuration < 0:
		return invalid("SlowCallDuration", c.SlowCallDuration, "is negative")
	case c.HealthWindowCalls < 0:
		return invalid("HealthWindowCalls", c.HealthWindowCalls, "is negative")
	case c.HealthWindowCalls > MaxHealthWindowCalls:
		return invalid("HealthWindowCalls", c.HealthWindowCalls, fmt.Sprintf("is more than MaxHealthWindowCalls (%d)", MaxHealthWindowCalls))
	}
	d := c.withDefaults()
	switch {
	case d.RollingWindow > MaxWindow:
		return invalid("RollingWindow", d.RollingWindow, fmt.Sprintf("is longer than MaxWindow (%v)", MaxWindow))
	case d.PercentileWindow > MaxWindow:
		return invalid("PercentileWindow", d.PercentileWindow, fmt.Sprintf("is longer than MaxWindow (%v)", MaxWindow))
	case d.RollingWindow < time.Duration(d.Buckets):
		return invalid("Buckets", d.Buckets, fmt.Sprintf("cuts RollingWindow %v into empty buckets", d.RollingWindow))
	case d.Buckets > MaxBuckets:
		return invalid("Buckets", d.Buckets, fmt.Sprintf("is more than MaxBuckets (%d)", MaxBuckets))
	case d.HealthSnapshotInterval > d.RollingWindow:
		return invalid("HealthSnapshotInterval", d.HealthSnapshotInterval, fmt.Sprintf("is longer than RollingWindow %v", d.RollingWindow))
	case d.RollingWindow/d.HealthSnapshotInterval > MaxBuckets:
		return invalid("HealthSnapshotInterval", d.HealthSnapshotInterval, fmt.Sprintf("cuts RollingWindow %v into %d buckets, more than MaxBuckets (%d)",
			d.RollingWindow, d.RollingWindow/d.HealthSnapshotInterval, MaxBuckets))
	case d.PercentileWindow < time.Duration(d.PercentileBuckets):
		return invalid("PercentileBuckets", d.PercentileBuckets, fmt.Sprintf("cuts PercentileWindow %v into empty buckets", d.PercentileWindow))
	case d.PercentileBuckets > MaxBuckets:
		return invalid("PercentileBuckets", d.PercentileBuckets, fmt.Sprintf("is more than MaxBuckets (%d)", MaxBuckets))
	}
	return nil
}

// validateWithoutHealth is Validate for metrics that keep no health
// counts (a pool's, a collapser's): HealthSnapshotInterval, which only
// health counts use, is not held against RollingWindow.
func (c Config) validateWithoutHealth() error {
	c.HealthSnapshotInterval = c.withDefaults().RollingWindow
	return c.Validate()
}

func invalid(field string, value any, problem string) error {
	return fmt.Errorf("%w: Config.%s (%v) %s", ErrInvalidConfig, field, value, problem)
}

// withDefaults returns c with its zero fields set to their defaults.
func (c Config) withDefaults() Config {
	if c.RollingWindow == 0 {
		c.RollingWindow = DefaultRollingWindow
	}
	if c.Buckets == 0 {
		c.Buckets = DefaultBuckets
	}
	if c.HealthSnapshotInterval == 0 {
		c.HealthSnapshotInterval = DefaultHealthSnapshotInterval
	}
	if c.PercentileWindow == 0 {
		c.PercentileWindow = DefaultPercentileWindow
	}
	if c.PercentileBuckets == 0 {
		c.PercentileBuckets = DefaultPercentileBuckets
	}
	return c
}

// rollingBucket is the width of a rolling-count bucket.
func (c Config) rollingBucket() time.Duration { return c.RollingWindow / time.Duration(c.Buckets) }

// healthBuckets is how many health buckets the rolling window holds.
func (c Config) healthBuckets() int { return int(c.RollingWindow / c.HealthSnapshotInterval) }

// percentileBucket is the width of a latency bucket.
func (c Config) percentileBucket() time.Duration {
	return c.PercentileWindow / time.Duration(c.PercentileBuckets)
}
