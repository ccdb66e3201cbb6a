package command

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rxhystrix/rxhystrix/breaker"
	"github.com/rxhystrix/rxhystrix/clock"
	iclock "github.com/rxhystrix/rxhystrix/internal/clock"
	"github.com/rxhystrix/rxhystrix/internal/timerlist"
	"github.com/rxhystrix/rxhystrix/limit"
	"github.com/rxhystrix/rxhystrix/metricsstream"
	"github.com/rxhystrix/rxhystrix/observable"
)

// Registry holds what commands of the same key share — one breaker, one
// metrics, one pair of semaphores, one Config — and the worker pools by
// pool key, as Hystrix's per-key factories do. The package-level functions
// use DefaultRegistry; a separate Registry (with its own clock, say) keeps
// tests and tenants apart. A Registry is safe for concurrent use.
type Registry struct {
	clock   clock.Clock
	metrics *metricsstream.Registry
	plugins pluginSet

	mu          sync.Mutex // serializes creation, and ConfigurePool with it
	configMu    sync.Mutex // serializes Configure and ConfigureFunc
	keys        sync.Map   // string → *keyState
	pools       sync.Map   // string → *pool
	poolConfigs sync.Map   // string → PoolConfig, from ConfigurePool
	doCmds      sync.Map   // string → *doCommands
	keyPlugins  sync.Map   // string → *pluginSet, from AddKeyHook and AddKeyEventNotifier
	sweep       clock.Timer
	sweepDue    time.Time // when sweep fires
	closed      bool
	timeouts    *timerlist.Set // for the timeouts of subscriptions

	// onCompletion, when set, sees every Completion after the metrics do.
	onCompletion func(*metricsstream.Completion)
	// healthSource, when set, chooses the health source of each key's
	// breaker (see WithHealthSource).
	healthSource HealthSourceFunc
	// tracer, when set, traces every execution (see SetTracer).
	tracer atomic.Pointer[Tracer]
	// breakerOptions are given to each key's breaker before the
	// registry's own (see WithBreakerOptions).
	breakerOptions []breaker.Option
	// rand draws the executions that get injected faults (see WithRand).
	rand func() float64
}

// RegistryOption configures a Registry.
type RegistryOption interface{ applyRegistry(*Registry) }

type registryClockOption struct{ c clock.Clock }

func (o registryClockOption) applyRegistry(r *Registry) { r.clock = o.c }

// WithClock makes the registry, and its metrics, breakers, timeouts and
// pools, read time from c: a clock.Manual, say, in a test that moves time
// itself instead of sleeping. It panics if c is nil.
func WithClock(c clock.Clock) RegistryOption {
	if c == nil {
		panic("command: WithClock with nil clock")
	}
	return registryClockOption{c}
}

type registryBreakerOptions []breaker.Option

func (o registryBreakerOptions) applyRegistry(r *Registry) {
	r.breakerOptions = append(r.breakerOptions, o...)
}

// WithBreakerOptions makes the registry build each key's circuit breaker
// with opts: breaker.WithRand, say, so that a simulation whose breakers
// throttle or jitter their sleep windows repeats itself, or
// breaker.WithTransitionBuffer. The registry's clock and the key's name
// win over a breaker.WithClock or breaker.WithName among them. It panics
// if an option is nil.
func WithBreakerOptions(opts ...breaker.Option) RegistryOption {
	for _, o := range opts {
		if o == nil {
			panic("command: WithBreakerOptions with a nil option")
		}
	}
	return registryBreakerOptions(opts)
}

type registryRandOption func() float64

func (o registryRandOption) applyRegistry(r *Registry) { r.rand = o }

// WithRand makes the registry draw the executions that get injected
// faults (Config.Faults) with r, which returns numbers uniform in [0, 1),
// instead of math/rand/v2's Float64: for a test or a simulation that must
// repeat itself. Executions call r from their own goroutines, so r must
// be safe for concurrent use. It panics if r is nil.
func WithRand(r func() float64) RegistryOption {
	if r == nil {
		panic("command: WithRand with nil function")
	}
	return registryRandOption(r)
}

// NewRegistry returns an empty Registry on the real clock unless an option
// says otherwise.
func NewRegistry(opts ...RegistryOption) *Registry {
	r := &Registry{clock: clock.Real, rand: rand.Float64}
	for _, o := range opts {
		o.applyRegistry(r)
	}
	if r.metrics == nil {
		r.metrics = metricsstream.NewRegistry(r.clock)
	}
	r.timeouts = timerlist.NewSet(r.clock)
	return r
}

// registryMetricsOption makes a registry record into metrics of its own
// choosing, which must read the registry's clock.
type registryMetricsOption struct{ m *metricsstream.Registry }

func (o registryMetricsOption) applyRegistry(r *Registry) { r.metrics = o.m }

// DefaultRegistry is the registry of the package-level functions and of
// commands made without WithRegistry. Its metrics are
// metricsstream.DefaultRegistry, which metricsstream.Handler (the dashboard
// stream) reads when given no registry.
var DefaultRegistry = NewRegistry(registryMetricsOption{metricsstream.DefaultRegistry})

// Metrics returns the registry's metrics, for the dashboard stream and
// the Prometheus collector.
func (r *Registry) Metrics() *metricsstream.Registry { return r.metrics }

// Clock returns the registry's clock.
func (r *Registry) Clock() clock.Clock { return r.clock }

// now reads the registry's clock in Unix nanoseconds (see clock.UnixNano),
// the unit in which executions time themselves.
func (r *Registry) now() int64 { return iclock.UnixNano(r.clock) }

// keyState is what the commands of one key share.
type keyState struct {
	key         string
	registry    *Registry
	config      atomic.Pointer[Config]
	metrics     *metricsstream.CommandMetrics
	breaker     *breaker.Breaker
	fallbackSem *semaphore
	plugins     *pluginSet
	// errs caches the errors whose every field is fixed for the key, by
	// failure type and fallback error (missing, disabled, rejected).
	errs [numFailureTypes][3]atomic.Pointer[Error]
	// defaultIsolation is what DefaultIsolation means for the key:
	// SemaphoreIsolation for keys made by NewObservable, PoolIsolation
	// otherwise. It is read and, for a key made by Configure, claimed
	// by its first command (claimKind), under the registry's configMu.
	defaultIsolation Isolation
	// kindPending says the key was made by Configure and no command has
	// claimed it yet: what DefaultIsolation means waits for the kind of
	// its first command. rawIsolation is the Isolation the last Configure
	// named meanwhile (under configMu).
	kindPending  atomic.Bool
	rawIsolation Isolation
	// pool is the pool named by the key's Config.Pool when last looked
	// up, which saves busy keys a lookup by name per execution.
	pool atomic.Pointer[pool]
	// limiter is the adaptive limit of Config.AdaptiveLimit, if any; it
	// is stored before the Config that names it.
	limiter atomic.Pointer[limit.Limiter]
	// partitions are the partitions the key's Configs have named, in
	// the order they were first named (see partition.go).
	partitions atomic.Pointer[[]*partition]
	// tokens is the key's token bucket while Config.RateLimit is on.
	tokens atomic.Pointer[rateLimiter]
	// bucket is the limiter tokens holds while the limit is on, kept
	// while it is off; set under the registry's configMu, or before the
	// key is published.
	bucket *rateLimiter
	// retrying counts the key's retries and hedges in flight, for the
	// retry budget.
	retrying atomic.Int64
	// lastHedgePolicy and lastRetryPolicy are the hedge and retry
	// policies of the key's Config when last asked for (see
	// keyState.hedgePolicy and keyState.retryPolicy).
	lastHedgePolicy atomic.Pointer[ofConfig[observable.HedgePolicy]]
	lastRetryPolicy atomic.Pointer[ofConfig[observable.RetryPolicy]]
	// backlog holds the executions waiting for a permit (Config.Backlog).
	backlog backlog
	// faults counts the faults injected into the key's executions, by
	// kind (see faults.go).
	faults [numFaultKinds]atomic.Int64
}

// namedPool returns the pool name, the key's Config.Pool, from the key's
// last lookup if it still serves.
func (k *keyState) namedPool(name string) *pool {
	if p := k.pool.Load(); p != nil && p.key == name && !p.retired() {
		return p
	}
	p := k.registry.pool(name, false)
	k.pool.Store(p)
	return p
}

// state returns the shared state of key, made with cfg if it is new.
func (r *Registry) state(key string, cfg Config) *keyState {
	return r.stateWithDefault(key, cfg, PoolIsolation)
}

// stateWithDefault is state for a kind of command whose default isolation
// is isolation. A key that Configure made before any command claims
// isolation as its default.
func (r *Registry) stateWithDefault(key string, cfg Config, isolation Isolation) *keyState {
	k := r.stateOrNew(key, cfg, isolation, false)
	if k.kindPending.Load() {
		r.claimKind(k, isolation)
	}
	return k
}

// claimKind makes isolation what DefaultIsolation means for k, a key made
// by Configure, unless another command has claimed it first; the Config
// in force, if it left Isolation to the default, takes it.
func (r *Registry) claimKind(k *keyState, isolation Isolation) {
	r.configMu.Lock()
	defer r.configMu.Unlock()
	if !k.kindPending.Load() {
		return
	}
	k.defaultIsolation = isolation
	if k.rawIsolation == DefaultIsolation {
		cfg := *k.config.Load()
		cfg.Isolation = isolation
		k.config.Store(&cfg)
	}
	k.kindPending.Store(false)
}

// stateOrNew returns the shared state of key, made with cfg and the
// default isolation if it is new; pending says a Configure makes it,
// before any command claims its kind.
func (r *Registry) stateOrNew(key string, cfg Config, isolation Isolation, pending bool) *keyState {
	if k, ok := r.keys.Load(key); ok {
		return k.(*keyState)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if k, ok := r.keys.Load(key); ok {
		return k.(*keyState)
	}
	raw := cfg.Isolation
	cfg = cfg.withDefaults(key, isolation)
	k := &keyState{
		key:              key,
		registry:         r,
		defaultIsolation: isolation,
		rawIsolation:     raw,
		plugins:          r.pluginsOf(key),
		fallbackSem:      newSemaphore(cfg.FallbackMaxConcurrentRequests),
	}
	k.kindPending.Store(pending)
	k.limiter.Store(nextLimiter(nil, cfg.AdaptiveLimit, cfg.MaxConcurrentRequests))
	if err := k.addPartitions(cfg.Partitions); err != nil {
		panic(err) // a new key has no names yet, and Validate allows no more than MaxPartitions
	}
	k.config.Store(&cfg)
	metricsCfg := cfg.Metrics
	if metricsCfg.SlowCallDuration == 0 {
		metricsCfg.SlowCallDuration = cfg.Breaker.SlowCallDuration
	}
	k.metrics = r.metrics.Command(key, metricsCfg)
	k.setRateLimit(cfg.RateLimit)
	opts := append(slices.Clip(r.breakerOptions), breaker.WithClock(r.clock), breaker.WithName(key))
	k.breaker = breaker.New(cfg.Breaker, r.healthSourceOf(k), opts...)
	if r.closed {
		// Close has closed the breakers of the keys it found; a key made
		// since is closed as they are.
		k.breaker.Close()
	}
	k.metrics.SetStatusProvider(k)
	r.keys.Store(key, k)
	return k
}

// CommandStatus reports the key's group, pool, breaker and properties to
// its metrics, for the dashboard stream.
func (k *keyState) CommandStatus() metricsstream.CommandStatus {
	cfg := k.config.Load()
	bc := k.breaker.Config() // with the breaker's defaults filled in
	state := circuitState(&bc, k.breaker)
	permits, _ := k.permits(cfg)
	st := metricsstream.CommandStatus{
		Group:                     cfg.Group,
		Pool:                      cfg.Pool,
		CircuitBreakerOpen:        circuitOpen(state),
		CircuitBreakerState:       state,
		CircuitBreakerSleepWindow: k.breaker.SleepWindow(),
		CircuitBreakerThrottle:    k.breaker.ThrottleProbability(),
		Properties: metricsstream.CommandProperties{
			CircuitBreakerEnabled:         !cfg.Breaker.Disabled,
			RequestVolumeThreshold:        bc.RequestVolumeThreshold,
			SleepWindow:                   bc.SleepWindow,
			MaxSleepWindow:                bc.MaxSleepWindow,
			SleepWindowMultiplier:         bc.SleepWindowMultiplier,
			SleepWindowJitter:             bc.SleepWindowJitter,
			ErrorThresholdPercentage:      bc.ErrorThresholdPercentage,
			ConsecutiveFailures:           bc.ConsecutiveFailures,
			ThrottleSuccessPercentage:     bc.ThrottleSuccessPercentage,
			ThrottleAggression:            bc.ThrottleAggression,
			MaxThrottlePercentage:         bc.MaxThrottlePercentage,
			ForceOpen:                     bc.ForceOpen,
			ForceClosed:                   bc.ForceClosed,
			Isolation:                     cfg.Isolation.String(),
			Timeout:                       max(cfg.Timeout, 0),
			TimeoutEnabled:                cfg.Timeout > 0,
			InterruptOnTimeout:            true,
			MaxConcurrentRequests:         permits,
			AdaptiveLimit:                 k.adaptiveLimitName(cfg),
			FallbackEnabled:               !cfg.FallbackDisabled,
			FallbackMaxConcurrentRequests: cfg.FallbackMaxConcurrentRequests,
			RequestCacheEnabled:           !cfg.RequestCacheDisabled,
			RequestLogEnabled:             !cfg.RequestLogDisabled,
		},
	}
	if len(cfg.Partitions) != 0 {
		st.Partitions = k.partitionStatus(cfg, int64(st.Properties.MaxConcurrentRequests))
	}
	if b := cfg.Backlog; b.Size > 0 {
		st.Backlog = k.backlog.status(b)
	}
	st.Faults = k.faultStatus(cfg)
	return st
}

// circuitState names the state of b, whose Config with the defaults is
// bc: the settings that override the state machine first, as the
// breaker applies them.
func circuitState(bc *breaker.Config, b *breaker.Breaker) string {
	switch {
	case bc.Disabled:
		return metricsstream.CircuitDisabled
	case bc.ForceOpen:
		return metricsstream.CircuitForcedOpen
	case bc.ForceClosed:
		return metricsstream.CircuitForcedClosed
	}
	switch b.State() {
	case breaker.Open:
		return metricsstream.CircuitOpen
	case breaker.HalfOpen:
		return metricsstream.CircuitHalfOpen
	}
	return metricsstream.CircuitClosed
}

// circuitOpen reports whether a breaker in state is open as Hystrix's
// isOpen says: open, half open or forced open.
func circuitOpen(state string) bool {
	switch state {
	case metricsstream.CircuitOpen, metricsstream.CircuitHalfOpen, metricsstream.CircuitForcedOpen:
		return true
	}
	return false
}

// permits returns the execution permits of the key under semaphore
// isolation with cfg, its Config: its adaptive limit's, when it has one,
// and that limiter, which an execution admitted by it samples.
func (k *keyState) permits(cfg *Config) (int, *limit.Limiter) {
	if l := k.limiterFor(cfg); l != nil {
		return l.Limit(), l
	}
	return cfg.MaxConcurrentRequests, nil
}

// adaptiveLimitName names the algorithm of the key's permits, or is ""
// for a fixed count.
func (k *keyState) adaptiveLimitName(cfg *Config) string {
	if l := k.limiterFor(cfg); l != nil {
		return l.Algorithm().Name()
	}
	return ""
}

// limiterFor returns the key's adaptive limit if cfg, its Config, names
// one under semaphore isolation; under pool isolation the pool's limit
// rules.
func (k *keyState) limiterFor(cfg *Config) *limit.Limiter {
	if cfg.AdaptiveLimit == nil || cfg.Isolation != SemaphoreIsolation {
		return nil
	}
	return k.limiter.Load()
}

// Configure changes the configuration of the commands of key, live: the
// timeout, the permits, the breaker's thresholds and force flags and the
// fallback switches, the retries, hedges, rate limit and injected faults
// apply to the next execution. Metrics windows are kept.
// A key that has no command yet takes cfg as its first Config; its
// DefaultIsolation means the default of the kind of its first command
// (PoolIsolation for New, SemaphoreIsolation for NewObservable), and
// until one comes, Config reports PoolIsolation. An empty key or one
// that is not valid UTF-8 is an error that is ErrInvalidKey.
//
// Calls of Configure and ConfigureFunc take effect one after another: the
// key's breaker, semaphores, rate limit and Config are all of the same
// call.
func (r *Registry) Configure(key string, cfg Config) error {
	if err := checkKey("key", key); err != nil {
		return fmt.Errorf("command: Configure: %w", err)
	}
	r.configMu.Lock()
	defer r.configMu.Unlock()
	return r.configureLocked(key, cfg)
}

// ConfigureFunc changes the configuration of key by change, live: change
// is given a copy of the Config in force (the zero Config for a key that
// is not known yet; for a key made by Configure that no command has
// claimed, that Configure's Config, its isolation as it was given), and
// what it leaves there is put in force as by Configure. No other
// Configure or ConfigureFunc of the registry runs in between, so that two
// callers that each change a field of their own (an operator's injected
// faults, a configuration source's timeout) do not undo each other's
// change, as a Config followed by a Configure may. change must not
// configure the registry itself. An empty key or one that is not valid
// UTF-8 is an error that is ErrInvalidKey, and change is not called.
func (r *Registry) ConfigureFunc(key string, change func(*Config)) error {
	if err := checkKey("key", key); err != nil {
		return fmt.Errorf("command: ConfigureFunc: %w", err)
	}
	r.configMu.Lock()
	defer r.configMu.Unlock()
	cfg, _ := r.Config(key)
	if k, ok := r.keys.Load(key); ok && k.(*keyState).kindPending.Load() {
		// No command has claimed the key: the isolation Configure named,
		// DefaultIsolation included, until one does.
		cfg.Isolation = k.(*keyState).rawIsolation
	}
	change(&cfg)
	return r.configureLocked(key, cfg)
}

// configureLocked is Configure, under r.configMu.
func (r *Registry) configureLocked(key string, cfg Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	k := r.stateOrNew(key, cfg, PoolIsolation, true)
	if err := k.addPartitions(cfg.Partitions); err != nil {
		return err
	}
	if k.kindPending.Load() {
		k.rawIsolation = cfg.Isolation
	}
	cfg = cfg.withDefaults(key, k.defaultIsolation)
	cfg.Metrics = k.config.Load().Metrics
	k.fallbackSem.limit.Store(int64(cfg.FallbackMaxConcurrentRequests))
	k.breaker.SetConfig(cfg.Breaker)
	if cfg.Metrics.SlowCallDuration == 0 {
		// The metrics count slow calls by the breaker's threshold, as
		// when the key was made, unless Metrics names one of its own.
		k.metrics.SetSlowCallDuration(cfg.Breaker.SlowCallDuration)
	}
	k.setRateLimit(cfg.RateLimit)
	k.limiter.Store(nextLimiter(k.limiter.Load(), cfg.AdaptiveLimit, cfg.MaxConcurrentRequests))
	k.config.Store(&cfg)
	k.backlog.wakeAll()
	return nil
}

// Config returns the configuration in force for key, and whether the key
// is known. Its top-level defaults are filled in (the isolation, group,
// pool, timeout and permits); the nested configurations (Breaker,
// Metrics, Retry, Hedge and the others) keep their zero fields, which
// mean their defaults. Until a command claims a key made by Configure,
// its isolation reads PoolIsolation (see Configure); ConfigureFunc
// changes such a key's fields without choosing an isolation.
func (r *Registry) Config(key string) (Config, bool) {
	k, ok := r.keys.Load(key)
	if !ok {
		return Config{}, false
	}
	// A copy that shares no array with the Config in force, which the
	// caller (ConfigureFunc's change, say) may change in place.
	cfg := *k.(*keyState).config.Load()
	cfg.Partitions = slices.Clone(cfg.Partitions)
	return cfg, true
}

// Breaker returns the circuit breaker of key, or nil for an unknown key.
func (r *Registry) Breaker(key string) *breaker.Breaker {
	if k, ok := r.keys.Load(key); ok {
		return k.(*keyState).breaker
	}
	return nil
}

// AddHook registers h for every command of the registry. It panics if h
// is nil.
func (r *Registry) AddHook(h ExecutionHook) { r.plugins.addHook(h) }

// AddEventNotifier registers n for every command of the registry. It
// panics if n is nil.
func (r *Registry) AddEventNotifier(n EventNotifier) { r.plugins.addNotifier(n) }

// AddKeyHook registers h for the commands of key. It does not make the
// key: the first Config seen for the key is still the one its first
// command gives. It panics if h is nil.
func (r *Registry) AddKeyHook(key string, h ExecutionHook) { r.pluginsOf(key).addHook(h) }

// AddKeyEventNotifier registers n for the commands of key. Like
// AddKeyHook, it does not make the key, and panics if n is nil.
func (r *Registry) AddKeyEventNotifier(key string, n EventNotifier) {
	r.pluginsOf(key).addNotifier(n)
}

// pluginsOf returns the plugins of key, which its state shares once made.
func (r *Registry) pluginsOf(key string) *pluginSet {
	if p, ok := r.keyPlugins.Load(key); ok {
		return p.(*pluginSet)
	}
	p, _ := r.keyPlugins.LoadOrStore(key, new(pluginSet))
	return p.(*pluginSet)
}

// ConfigurePool changes the pool named key live (CoreSize and
// QueueSizeRejectionThreshold; MaxQueueSize is fixed when the pool is
// made), or sets the configuration it will be made with. An empty key or
// one that is not valid UTF-8 is an error that is ErrInvalidKey.
func (r *Registry) ConfigurePool(key string, cfg PoolConfig) error {
	if err := checkKey("pool key", key); err != nil {
		return fmt.Errorf("command: ConfigurePool: %w", err)
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	// Under r.mu, which makes pools: a pool made meanwhile would
	// otherwise be made with the configuration before this one.
	r.mu.Lock()
	defer r.mu.Unlock()
	r.poolConfigs.Store(key, cfg)
	if p, ok := r.pools.Load(key); ok {
		p := p.(*pool)
		p.configure(cfg)
		// The IdleTimeout in force: 0 means DefaultPoolIdleTimeout.
		if idle := p.config.Load().IdleTimeout; p.perCall && idle > 0 {
			// An IdleTimeout that is new or shorter may be due before
			// the sweep armed, or there may be none.
			idleFor := time.Duration(r.clock.Now().UnixNano() - p.lastUsed.Load())
			r.armSweepLocked(max(idle-idleFor, time.Nanosecond))
		}
	}
	return nil
}

// pool returns the pool named key, making it on first use. A pool made
// for a per-call key is retired once idle for its IdleTimeout.
func (r *Registry) pool(key string, perCall bool) *pool {
	if p, ok := r.pools.Load(key); ok && !p.(*pool).retired() {
		if p := p.(*pool); perCall || !p.perCall || p.named.Load() {
			return p
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	// The sweep retires and removes a pool under r.mu: one found here is
	// live.
	if p, ok := r.pools.Load(key); ok {
		p := p.(*pool)
		if !perCall {
			// A per-call pool that Config.Pool names too is a named
			// pool from now on: never retired.
			p.named.Store(true)
		}
		return p
	}
	var cfg PoolConfig
	if c, ok := r.poolConfigs.Load(key); ok {
		cfg = c.(PoolConfig)
	}
	pm := r.metrics.Pool(key, metricsstream.Config{})
	p := newPool(key, cfg, perCall, r.clock, pm)
	pm.SetStatusProvider(p)
	r.pools.Store(key, p)
	if perCall && p.config.Load().IdleTimeout > 0 {
		r.armSweepLocked(p.config.Load().IdleTimeout)
	}
	return p
}

// submit submits t to p, or to the pool that succeeds p under its key if
// p was retired since the caller looked it up, so that no task ever runs
// in a retired pool beside its successor. It returns the pool that took
// t, and false if that pool rejected it.
func (r *Registry) submit(p *pool, t task, now int64) (*pool, bool) {
	for {
		switch p.submit(t, now) {
		case submitAccepted:
			return p, true
		case submitRejected:
			return p, false
		}
		p = r.pool(p.key, p.perCall)
	}
}

// armSweepLocked schedules a sweep of idle per-call pools after, unless
// one is due no later: a pool of a shorter IdleTimeout than those before
// it brings the sweep forward. A sweep that is firing already finds the
// pools made meanwhile and schedules the next one for them.
func (r *Registry) armSweepLocked(after time.Duration) {
	if r.closed {
		return
	}
	due := r.clock.Now().Add(after)
	if r.sweep != nil {
		if !due.Before(r.sweepDue) || !r.sweep.Stop() {
			return
		}
		r.sweep = nil
	}
	r.sweepDue = due
	r.sweep = r.clock.AfterFunc(after, r.sweepPools)
}

// sweepPools retires per-call pools idle for their IdleTimeout and
// re-arms itself while per-call pools remain.
func (r *Registry) sweepPools() {
	now := r.clock.Now().UnixNano()
	next := time.Duration(0)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sweep = nil
	r.pools.Range(func(key, v any) bool {
		p := v.(*pool)
		cfg := p.config.Load()
		if !p.perCall || p.named.Load() || cfg.IdleTimeout <= 0 {
			return true
		}
		idleFor := time.Duration(now - p.lastUsed.Load())
		if idleFor >= cfg.IdleTimeout && p.retire() {
			r.pools.Delete(key)
			r.metrics.ForgetPool(p.key)
			return true
		}
		wait := cfg.IdleTimeout - idleFor
		if wait <= 0 {
			wait = cfg.IdleTimeout
		}
		if next == 0 || wait < next {
			next = wait
		}
		return true
	})
	if next > 0 {
		r.armSweepLocked(next)
	}
}

// PoolCount reports how many pools the registry holds.
func (r *Registry) PoolCount() int {
	n := 0
	r.pools.Range(func(any, any) bool { n++; return true })
	return n
}

// Close stops the registry's breakers' subscriptions and its pool sweep;
// commands of a closed registry still run, but their breakers no longer
// trip. It exists so that tests and short-lived registries leave no
// ticker behind.
func (r *Registry) Close() {
	r.mu.Lock()
	r.closed = true
	if r.sweep != nil {
		r.sweep.Stop()
		r.sweep = nil
	}
	r.mu.Unlock()
	r.keys.Range(func(_, v any) bool {
		v.(*keyState).breaker.Close()
		return true
	})
}

// Configure changes the configuration of key in DefaultRegistry, live:
// it is DefaultRegistry.Configure. As every function that changes
// configuration at run time, it returns an error naming what is wrong;
// the constructors and options (New, WithConfig, ...) panic instead, as
// regexp.MustCompile does, since what they are given is fixed in the
// program.
func Configure(key string, cfg Config) error { return DefaultRegistry.Configure(key, cfg) }

// ConfigureFunc changes the configuration of key in DefaultRegistry by
// change, live: it is DefaultRegistry.ConfigureFunc.
func ConfigureFunc(key string, change func(*Config)) error {
	return DefaultRegistry.ConfigureFunc(key, change)
}

// ConfigurePool changes the pool key of DefaultRegistry, live: it is
// DefaultRegistry.ConfigurePool, and returns an error naming what is
// wrong, as Configure does.
func ConfigurePool(key string, cfg PoolConfig) error { return DefaultRegistry.ConfigurePool(key, cfg) }
