package hystrixprops

import (
	"cmp"
	"strconv"
	"time"

	"github.com/rxhystrix/rxhystrix/command"
)

// Command returns the Config of the command key: code, the Config the
// program gives the key, with each field that Hystrix's properties set
// resolved as Hystrix resolves it (see Resolution in the package doc).
// The fields that no property of Hystrix's sets are code's. The Config is
// validated where it is used (command.New, Registry.Configure), as any.
func (p *Properties) Command(key string, code command.Config) command.Config {
	cfg := code
	r := resolver{p.command[key], p.command[defaultKey]}
	cfg.Isolation = resolve(r, "execution.isolation.strategy", code.Isolation, isolationOf)
	cfg.Timeout = r.timeout(code.Timeout)
	cfg.MaxConcurrentRequests = resolve(r, "execution.isolation.semaphore.maxConcurrentRequests", code.MaxConcurrentRequests, atoi)
	cfg.FallbackMaxConcurrentRequests = resolve(r, "fallback.isolation.semaphore.maxConcurrentRequests", code.FallbackMaxConcurrentRequests, atoi)
	cfg.FallbackDisabled = resolve(r, "fallback.enabled", code.FallbackDisabled, isFalse)
	cfg.RequestCacheDisabled = resolve(r, "requestCache.enabled", code.RequestCacheDisabled, isFalse)
	cfg.RequestLogDisabled = resolve(r, "requestLog.enabled", code.RequestLogDisabled, isFalse)
	cfg.Pool = resolve(resolver{own: r.own}, "threadPoolKeyOverride", code.Pool, same)

	b := &cfg.Breaker
	b.Disabled = resolve(r, "circuitBreaker.enabled", code.Breaker.Disabled, isFalse)
	b.RequestVolumeThreshold = resolve(r, "circuitBreaker.requestVolumeThreshold", code.Breaker.RequestVolumeThreshold, atoi)
	b.SleepWindow = resolve(r, "circuitBreaker.sleepWindowInMilliseconds", code.Breaker.SleepWindow, millis)
	b.ErrorThresholdPercentage = resolve(r, "circuitBreaker.errorThresholdPercentage", code.Breaker.ErrorThresholdPercentage, atoi)
	b.ForceOpen = resolve(r, "circuitBreaker.forceOpen", code.Breaker.ForceOpen, isTrue)
	b.ForceClosed = resolve(r, "circuitBreaker.forceClosed", code.Breaker.ForceClosed, isTrue)

	m := &cfg.Metrics
	m.RollingWindow = resolve(r, "metrics.rollingStats.timeInMilliseconds", code.Metrics.RollingWindow, millis)
	m.Buckets = resolve(r, "metrics.rollingStats.numBuckets", code.Metrics.Buckets, atoi)
	m.PercentileDisabled = resolve(r, "metrics.rollingPercentile.enabled", code.Metrics.PercentileDisabled, isFalse)
	m.PercentileWindow = resolve(r, "metrics.rollingPercentile.timeInMilliseconds", code.Metrics.PercentileWindow, millis)
	m.PercentileBuckets = resolve(r, "metrics.rollingPercentile.numBuckets", code.Metrics.PercentileBuckets, atoi)
	m.HealthSnapshotInterval = resolve(r, "metrics.healthSnapshot.intervalInMilliseconds", code.Metrics.HealthSnapshotInterval, millis)
	return cfg
}

// Pool returns the PoolConfig of the pool key: code, with each field that
// Hystrix's properties set resolved as Command resolves a command's.
func (p *Properties) Pool(key string, code command.PoolConfig) command.PoolConfig {
	cfg := code
	r := resolver{p.pool[key], p.pool[defaultKey]}
	cfg.CoreSize = resolve(r, "coreSize", code.CoreSize, atoi)
	cfg.MaxQueueSize = resolve(r, "maxQueueSize", code.MaxQueueSize, atoi)
	cfg.QueueSizeRejectionThreshold = resolve(r, "queueSizeRejectionThreshold", code.QueueSizeRejectionThreshold, atoi)
	// Hystrix's actualMaximumSize: maximumSize (10 unless set), when
	// allowed and larger than the core size (10 unless set). With a
	// queue, Hystrix's executor starts a thread past the core size only
	// when the queue is full, which queueSizeRejectionThreshold (5 unless
	// set) forbids unless it is larger than maxQueueSize (Hystrix issue
	// #1964): the pool then never grows.
	threshold := cmp.Or(cfg.QueueSizeRejectionThreshold, command.DefaultQueueSizeRejectionThreshold)
	grows := cfg.MaxQueueSize <= 0 || threshold > cfg.MaxQueueSize
	if grows && resolve(r, "allowMaximumSizeToDivergeFromCoreSize", false, isTrue) {
		core, maximum := cfg.CoreSize, resolve(r, "maximumSize", 0, atoi)
		if core == 0 {
			core = command.DefaultCoreSize
		}
		if maximum == 0 {
			maximum = defaultMaximumSize
		}
		cfg.CoreSize = max(core, maximum)
	}
	return cfg
}

// Collapser returns the CollapserConfig of the collapser key: code, with
// each field that Hystrix's properties set resolved as Command resolves a
// command's. A collapser's configuration is read when it is made, so
// there is no Configure of it.
func (p *Properties) Collapser(key string, code command.CollapserConfig) command.CollapserConfig {
	cfg := code
	r := resolver{p.collapser[key], p.collapser[defaultKey]}
	cfg.MaxRequestsInBatch = resolve(r, "maxRequestsInBatch", code.MaxRequestsInBatch, atoi)
	cfg.Delay = resolve(r, "timerDelayInMilliseconds", code.Delay, millis)
	cfg.RequestCacheDisabled = resolve(r, "requestCache.enabled", code.RequestCacheDisabled, isFalse)
	return cfg
}

// Configure puts the properties of key in force in r, live: the fields of
// the key's Config that Hystrix's properties set become those of
// Command(key, code), and the others stay as they are
// (Registry.ConfigureFunc), so that what was set to the key at run time
// (injected faults, a rate limit) stays. A key that has no command yet is
// made with Command(key, code), its metrics windows included. code is the
// Config the program gives the key, as to Command. It returns
// Registry.ConfigureFunc's error: a Config that is not valid.
func (p *Properties) Configure(r *command.Registry, key string, code command.Config) error {
	resolved := p.Command(key, code)
	return r.ConfigureFunc(key, func(cfg *command.Config) {
		// Whether the key is new is told by the Config ConfigureFunc
		// gives, not by asking the registry again: a command made in
		// between (command.New does not wait for ConfigureFunc) would
		// make the key known while cfg is still the zero Config of an
		// unknown key, and the fields below set on it would put in
		// force a Config without the code's Group, Retry, Hedge, ....
		// A Config in force has its defaults, its Group at least.
		if cfg.Group == "" {
			*cfg = resolved // a new key, made with its metrics windows
			return
		}
		cfg.Isolation, cfg.Timeout, cfg.Pool = resolved.Isolation, resolved.Timeout, resolved.Pool
		cfg.MaxConcurrentRequests = resolved.MaxConcurrentRequests
		cfg.FallbackMaxConcurrentRequests = resolved.FallbackMaxConcurrentRequests
		cfg.FallbackDisabled = resolved.FallbackDisabled
		cfg.RequestCacheDisabled, cfg.RequestLogDisabled = resolved.RequestCacheDisabled, resolved.RequestLogDisabled
		b, rb := &cfg.Breaker, &resolved.Breaker
		b.Disabled, b.RequestVolumeThreshold, b.SleepWindow = rb.Disabled, rb.RequestVolumeThreshold, rb.SleepWindow
		b.ErrorThresholdPercentage, b.ForceOpen, b.ForceClosed = rb.ErrorThresholdPercentage, rb.ForceOpen, rb.ForceClosed
	})
}

// ConfigurePool puts the properties of the pool key in force in r, live:
// r.ConfigurePool(key, Pool(key, code)).
func (p *Properties) ConfigurePool(r *command.Registry, key string, code command.PoolConfig) error {
	return r.ConfigurePool(key, p.Pool(key, code))
}

// defaultMaximumSize is Hystrix's maximumSize unless set.
const defaultMaximumSize = 10

// resolver holds the properties of one key, own, and those of the
// default level.
type resolver struct{ own, defaults map[string]string }

// resolve resolves one field whose value in code is code, and which the
// property name sets through parse: the key's own property, else code
// when it is not zero, else the default property, else zero (Hystrix's
// default).
func resolve[T comparable](r resolver, name string, code T, parse func(string) T) T {
	if v, ok := r.own[name]; ok {
		return parse(v)
	}
	var zero T
	if code != zero {
		return code
	}
	if v, ok := r.defaults[name]; ok {
		return parse(v)
	}
	return zero
}

// timeout resolves Config.Timeout from Hystrix's two properties: whether
// the timeout is enabled (a negative code timeout says it is not), and
// its length.
func (r resolver) timeout(code time.Duration) time.Duration {
	disabled := resolve(r, "execution.timeout.enabled", code < 0, isFalse)
	if disabled {
		return -1
	}
	return resolve(r, "execution.isolation.thread.timeoutInMilliseconds", max(code, 0), millis)
}

// The parsers of values that check has taken.

func atoi(v string) int {
	n, _ := strconv.Atoi(v)
	return n
}

func millis(v string) time.Duration { return time.Duration(atoi(v)) * time.Millisecond }

func isTrue(v string) bool {
	b, _ := parseBool(v)
	return b
}

func isFalse(v string) bool { return !isTrue(v) }

func same(v string) string { return v }

func isolationOf(v string) command.Isolation {
	if v == "SEMAPHORE" {
		return command.SemaphoreIsolation
	}
	return command.PoolIsolation
}
