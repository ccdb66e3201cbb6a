package command

import (
	"fmt"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/rxhystrix/rxhystrix/breaker"
	"github.com/rxhystrix/rxhystrix/limit"
	"github.com/rxhystrix/rxhystrix/metricsstream"
)

// Isolation is how a command bounds the concurrency of its run.
type Isolation int

const (
	// DefaultIsolation, the zero value, is the default of the command's
	// kind, as in Hystrix: PoolIsolation for a Command (and a collapser's
	// batch command), SemaphoreIsolation for an ObservableCommand. The
	// Config in force for a key that a command has claimed
	// (Registry.Config) always names the isolation it has, so that
	// writing it back changes nothing; a key made by Configure reads
	// PoolIsolation until then (see Registry.Configure).
	DefaultIsolation Isolation = iota
	// PoolIsolation runs run on a worker of the command's pool, so the
	// caller can return at the timeout even when run ignores its context:
	// Hystrix's THREAD.
	PoolIsolation
	// SemaphoreIsolation runs run on the caller's goroutine with a bounded
	// number of permits; the timeout reaches run through its context's
	// deadline.
	SemaphoreIsolation
)

// String returns Hystrix's name of the isolation strategy, or DEFAULT.
func (i Isolation) String() string {
	switch i {
	case DefaultIsolation:
		return "DEFAULT"
	case PoolIsolation:
		return "THREAD"
	case SemaphoreIsolation:
		return "SEMAPHORE"
	}
	return fmt.Sprintf("Isolation(%d)", int(i))
}

// Config is the configuration of a command key. The zero value of every
// field means Hystrix's default. Commands made with the same key share one
// Config: the first seen for a key holds until Configure changes it.
type Config struct {
	// Group names the group of the command; it defaults to the key.
	Group string
	// Pool names the worker pool of a pool-isolated command; it defaults
	// to Group.
	Pool string
	// Isolation is PoolIsolation or SemaphoreIsolation; DefaultIsolation
	// (the zero value) means the default of the command's kind.
	Isolation Isolation
	// Timeout bounds run; 0 means 1s, negative disables the timeout. A
	// timeout so large that its deadline cannot be represented
	// (math.MaxInt64, say) never fires. An ObservableCommand's timeout
	// bounds the wait for its Observable's first value, as Hystrix's
	// does: once it has emitted, the stream runs until it ends, and a
	// failure after its deadline is a FAILURE, not a TIMEOUT. Its context
	// still reports the deadline, since a context's deadline never
	// changes: a stream that calls out past that time (a net.Dialer
	// bounds a dial by it) does so under a context without it, such as
	// context.WithoutCancel's of its own, cancelled by context.AfterFunc
	// when its own ends.
	Timeout time.Duration
	// MaxConcurrentRequests is the number of execution permits under
	// semaphore isolation; 0 means 10. The permits in use are the key's
	// concurrent executions (as in Hystrix, where they coincide): an
	// execution of the key running in a pool, if any, holds one too.
	MaxConcurrentRequests int
	// AdaptiveLimit, when not nil, replaces MaxConcurrentRequests under
	// semaphore isolation with a limit that adapts to the latency of the
	// key's executions (see package limit); MaxConcurrentRequests is then
	// its starting point, clamped into the algorithm's MinLimit and
	// MaxLimit (Gradient2's default MinLimit of 20 starts 10 permits at
	// 20), unless the algorithm sets an InitialLimit. A
	// pool-isolated command's limit is its pool's: see
	// PoolConfig.AdaptiveLimit. Configure can switch it on, off or to
	// another algorithm live; writing back the same algorithm keeps the
	// limit where it is.
	AdaptiveLimit limit.Algorithm
	// Partitions, when not empty, guarantee shares of the execution
	// permits to the executions whose context names a partition
	// (WithPartition), as concurrency-limits' partitioned limiter does.
	// While fewer executions than the permits (MaxConcurrentRequests or
	// the adaptive limit) run, every execution is admitted, whatever its
	// partition: a partition borrows the permits the others leave idle.
	// At the limit, an execution is admitted only if its partition holds
	// fewer than ⌈permits × Share⌉ (at least one) executions, so the
	// executions running may exceed the permits by what the partitions
	// are guaranteed; one that names no partition of the key is refused.
	// A refusal is SEMAPHORE_REJECTED, as at the limit without
	// partitions. The partitions need SemaphoreIsolation, named: a pool's
	// workers serve several keys and are not partitioned. Their counts
	// are in the key's CommandStatus (Partitions) and in Prometheus.
	// Configure can change them live; an execution gives its permit back
	// to the partition that admitted it.
	Partitions []Partition
	// Backlog, when its Size is not 0, lets an execution that finds no
	// permit wait for one, in LIFO order by default, as
	// concurrency-limits' LifoBlockingLimiter does; it needs
	// SemaphoreIsolation, named, and no Partitions. Configure applies it
	// live and wakes the executions waiting, to try again under the new
	// permits.
	Backlog BacklogConfig
	// FallbackMaxConcurrentRequests is the number of concurrent fallbacks;
	// 0 means 10.
	FallbackMaxConcurrentRequests int
	// FallbackDisabled turns the fallback off.
	FallbackDisabled bool
	// RequestCacheDisabled turns the request cache off.
	RequestCacheDisabled bool
	// RequestLogDisabled keeps the command out of the request log.
	RequestLogDisabled bool
	// Breaker configures the circuit breaker.
	Breaker breaker.Config
	// Metrics configures the rolling windows. It is read when the key is
	// first used; Configure does not change it.
	Metrics metricsstream.Config
	// Retry retries failed executions of a Command; off by default.
	Retry RetryConfig
	// Hedge starts executions of a Command beside a slow one; off by
	// default.
	Hedge HedgeConfig
	// RateLimit limits the rate of executions; off by default.
	RateLimit RateLimitConfig
	// Faults injects delays and errors into the key's executions, to
	// test that its resilience holds; off by default.
	Faults FaultConfig
}

// Default values, as Hystrix's.
const (
	DefaultTimeout                       = time.Second
	DefaultMaxConcurrentRequests         = 10
	DefaultFallbackMaxConcurrentRequests = 10
)

// Validate reports the first field of c that is out of range, in an
// error that names it and matches ErrInvalidConfig.
func (c Config) Validate() error {
	if !utf8.ValidString(c.Group) {
		return invalidConfig("command: Config.Group: %q is not valid UTF-8", c.Group)
	}
	if !utf8.ValidString(c.Pool) {
		return invalidConfig("command: Config.Pool: %q is not valid UTF-8", c.Pool)
	}
	if c.Isolation < DefaultIsolation || c.Isolation > SemaphoreIsolation {
		return invalidConfig("command: Config.Isolation: unknown value %d", int(c.Isolation))
	}
	if c.MaxConcurrentRequests < 0 {
		return invalidConfig("command: Config.MaxConcurrentRequests: %d is negative", c.MaxConcurrentRequests)
	}
	if c.FallbackMaxConcurrentRequests < 0 {
		return invalidConfig("command: Config.FallbackMaxConcurrentRequests: %d is negative", c.FallbackMaxConcurrentRequests)
	}
	if c.AdaptiveLimit != nil {
		if err := validateAlgorithm(c.AdaptiveLimit); err != nil {
			return invalidConfig("command: Config.AdaptiveLimit: %w", err)
		}
	}
	if err := c.validatePartitions(); err != nil {
		return err
	}
	if err := c.validateBacklog(); err != nil {
		return err
	}
	if err := c.Breaker.Validate(); err != nil {
		return invalidConfig("command: Config.Breaker: %w", err)
	}
	if err := c.Metrics.Validate(); err != nil {
		return invalidConfig("command: Config.Metrics: %w", err)
	}
	if err := c.Retry.validate(); err != nil {
		return err
	}
	if err := c.Hedge.validate(); err != nil {
		return err
	}
	if err := c.RateLimit.validate(); err != nil {
		return err
	}
	return c.Faults.validate()
}

// withDefaults returns c with its zero fields set to the defaults, for the
// command key whose kind's isolation is isolation. Its Partitions are a
// copy of c's: the Config a key keeps shares no array with its caller's,
// whose changes would bypass Validate.
func (c Config) withDefaults(key string, isolation Isolation) Config {
	c.Partitions = slices.Clone(c.Partitions)
	if c.Isolation == DefaultIsolation {
		c.Isolation = isolation
	}
	if c.Group == "" {
		c.Group = key
	}
	if c.Pool == "" {
		c.Pool = c.Group
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.MaxConcurrentRequests == 0 {
		c.MaxConcurrentRequests = DefaultMaxConcurrentRequests
	}
	if c.FallbackMaxConcurrentRequests == 0 {
		c.FallbackMaxConcurrentRequests = DefaultFallbackMaxConcurrentRequests
	}
	return c
}

// PoolConfig is the configuration of a worker pool. The zero value of every
// field means Hystrix's default.
type PoolConfig struct {
	// CoreSize is the number of workers, the most runs in flight; 0 means
	// 10.
	CoreSize int
	// MaxQueueSize is the capacity of the queue of runs waiting for a
	// worker; zero or negative means no queue (Hystrix's SynchronousQueue):
	// a run that finds every worker busy is rejected.
	MaxQueueSize int
	// QueueSizeRejectionThreshold rejects a run when this many wait in the
	// queue, even below MaxQueueSize; it can change live, MaxQueueSize
	// cannot. 0 means 5.
	QueueSizeRejectionThreshold int
	// AdaptiveLimit, when not nil, replaces CoreSize with a limit on the
	// workers that adapts to the latency of the pool's executions (see
	// package limit): CoreSize is then its starting point, clamped into
	// the algorithm's MinLimit and MaxLimit, unless the algorithm sets an
	// InitialLimit, and the algorithm's MaxLimit bounds
	// the workers. The queue works in front of it as in front of
	// CoreSize. ConfigurePool can switch it on, off or to another
	// algorithm live; writing back the same algorithm keeps the limit
	// where it is.
	AdaptiveLimit limit.Algorithm
	// IdleTimeout retires a pool made for a per-call pool key (WithPoolKey)
	// when it has had no work for this long; 0 means one minute, negative
	// keeps it for ever. Pools named by Config.Pool are never retired.
	IdleTimeout time.Duration
}

// Pool defaults, as Hystrix's.
const (
	DefaultCoreSize                    = 10
	DefaultQueueSizeRejectionThreshold = 5
	DefaultPoolIdleTimeout             = time.Minute
)

// Validate reports the first field of c that is out of range, in an
// error that names it and matches ErrInvalidConfig.
func (c PoolConfig) Validate() error {
	if c.CoreSize < 0 {
		return invalidConfig("command: PoolConfig.CoreSize: %d is negative", c.CoreSize)
	}
	if c.QueueSizeRejectionThreshold < 0 {
		return invalidConfig("command: PoolConfig.QueueSizeRejectionThreshold: %d is negative", c.QueueSizeRejectionThreshold)
	}
	if c.AdaptiveLimit != nil {
		if err := validateAlgorithm(c.AdaptiveLimit); err != nil {
			return invalidConfig("command: PoolConfig.AdaptiveLimit: %w", err)
		}
	}
	return nil
}

func (c PoolConfig) withDefaults() PoolConfig {
	if c.CoreSize == 0 {
		c.CoreSize = DefaultCoreSize
	}
	if c.QueueSizeRejectionThreshold == 0 {
		c.QueueSizeRejectionThreshold = DefaultQueueSizeRejectionThreshold
	}
	if c.MaxQueueSize < 0 {
		c.MaxQueueSize = 0
	}
	if c.IdleTimeout == 0 {
		c.IdleTimeout = DefaultPoolIdleTimeout
	}
	return c
}

// queueLimit is how many runs may wait in the queue.
func (c PoolConfig) queueLimit() int {
	if c.MaxQueueSize <= 0 {
		return 0
	}
	return min(c.MaxQueueSize, c.QueueSizeRejectionThreshold)
}
