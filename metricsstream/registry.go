package metricsstream

import (
	"fmt"
	"iter"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rxhystrix/rxhystrix/clock"
)

// Registry holds the metrics of every command and pool key, as Hystrix's
// per-key factories: the first call for a key creates its metrics with the
// Config it is given, and every later call returns the same metrics (that
// first Config holds). Lookups take no lock.
//
// Keys live as long as the registry unless idle eviction is on (see
// [WithIdleEviction]). A Registry is safe for concurrent use; its zero
// value is not usable, call [NewRegistry].
type Registry struct {
	clock clock.Clock
	idle  time.Duration // 0: never evict

	commands   sync.Map // string -> *CommandMetrics
	pools      sync.Map // string -> *PoolMetrics
	collapsers sync.Map // string -> *CollapserMetrics

	requests fanout[RequestEvents] // the requests ended; see RequestEvents
	panics   atomic.Uint64         // subscribers of requests that panicked

	mu        sync.Mutex // serializes creation and sweeps
	lastSweep time.Time
}

// DefaultRegistry is the registry of the real clock that commands use
// unless they are given another. It never evicts keys.
var DefaultRegistry = NewRegistry(clock.Real)

// Clock returns the clock the registry's metrics read time from. The
// dashboard stream ([Handler]) ticks on it.
func (r *Registry) Clock() clock.Clock { return r.clock }

// RegistryOption configures a Registry.
type RegistryOption interface{ apply(*Registry) }

type idleEviction time.Duration

func (d idleEviction) apply(r *Registry) { r.idle = time.Duration(d) }

// WithIdleEviction makes the registry forget the metrics of keys idle for
// at least d: nothing recorded for d (to the nearest rolling bucket), no
// execution or pooled command running, nobody subscribed to their streams.
// Eviction is lazy: creating the metrics of a new key sweeps the registry
// when the last sweep is more than d/2 old, and [Registry.EvictIdle]
// sweeps on demand; no timer or goroutine runs for it. Evicted metrics
// that are used again come back into the registry, unless the key was
// given new metrics meanwhile, in which case they record unseen: callers
// that keep a *CommandMetrics across idle periods should get it again
// from the registry. d <= 0 turns eviction off, the default, as Hystrix
// never forgets a key.
func WithIdleEviction(d time.Duration) RegistryOption { return idleEviction(max(d, 0)) }

// NewRegistry returns an empty registry whose metrics read time from c. It
// panics if c is nil.
func NewRegistry(c clock.Clock, opts ...RegistryOption) *Registry {
	if c == nil {
		panic("metricsstream: NewRegistry with nil clock")
	}
	r := &Registry{clock: c}
	for _, o := range opts {
		o.apply(r)
	}
	r.lastSweep = c.Now()
	return r
}

// Command returns the metrics of the command key, creating them with cfg
// if the key has none. It panics if key is empty or, when it creates the
// metrics, if cfg is invalid (see [Config.Validate]).
func (r *Registry) Command(key string, cfg Config) *CommandMetrics {
	if m, ok := r.commands.Load(key); ok {
		return m.(*CommandMetrics)
	}
	if key == "" {
		panic("metricsstream: Registry.Command with empty key")
	}
	if err := cfg.Validate(); err != nil {
		panic(fmt.Sprintf("metricsstream: Registry.Command(%q): %v", key, err))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if m, ok := r.commands.Load(key); ok {
		return m.(*CommandMetrics)
	}
	r.sweepIfDueLocked()
	m := newCommandMetrics(key, cfg, r.clock, r)
	r.commands.Store(key, m)
	return m
}

// LookupCommand returns the metrics of the command key, if it has any.
func (r *Registry) LookupCommand(key string) (*CommandMetrics, bool) {
	m, ok := r.commands.Load(key)
	if !ok {
		return nil, false
	}
	return m.(*CommandMetrics), true
}

// Commands iterates over the metrics of every command key, in no
// particular order. Keys created or evicted during the iteration may or
// may not be visited.
func (r *Registry) Commands() iter.Seq[*CommandMetrics] {
	return func(yield func(*CommandMetrics) bool) {
		r.commands.Range(func(_, m any) bool { return yield(m.(*CommandMetrics)) })
	}
}

// Pool returns the metrics of the worker pool key, creating them with cfg
// (of which only RollingWindow and Buckets apply) if the key has none. It
// panics as [Registry.Command] does, but for a HealthSnapshotInterval
// longer than RollingWindow: pools keep no health counts.
func (r *Registry) Pool(key string, cfg Config) *PoolMetrics {
	if p, ok := r.pools.Load(key); ok {
		return p.(*PoolMetrics)
	}
	if key == "" {
		panic("metricsstream: Registry.Pool with empty key")
	}
	if err := cfg.validateWithoutHealth(); err != nil {
		panic(fmt.Sprintf("metricsstream: Registry.Pool(%q): %v", key, err))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if p, ok := r.pools.Load(key); ok {
		return p.(*PoolMetrics)
	}
	r.sweepIfDueLocked()
	p := newPoolMetrics(key, cfg, r.clock, r)
	r.pools.Store(key, p)
	return p
}

// LookupPool returns the metrics of the pool key, if it has any.
func (r *Registry) LookupPool(key string) (*PoolMetrics, bool) {
	p, ok := r.pools.Load(key)
	if !ok {
		return nil, false
	}
	return p.(*PoolMetrics), true
}

// Pools iterates over the metrics of every pool key, in no particular
// order.
func (r *Registry) Pools() iter.Seq[*PoolMetrics] {
	return func(yield func(*PoolMetrics) bool) {
		r.pools.Range(func(_, p any) bool { return yield(p.(*PoolMetrics)) })
	}
}

// ForgetPool forgets the metrics of the pool key at once, as idle eviction
// would: the owner of a pool calls it when it retires the pool, so that
// the pool's metrics leave the registry (and the dashboard stream) with
// it. Metrics that are used again afterwards come back, as evicted ones
// do (see [WithIdleEviction]). It reports whether the key had metrics.
func (r *Registry) ForgetPool(key string) bool {
	v, ok := r.pools.Load(key)
	if !ok {
		return false
	}
	p := v.(*PoolMetrics)
	p.evicted.Store(true)
	if !r.pools.CompareAndDelete(key, p) {
		return false
	}
	keepIfUsed(&r.pools, key, p, &p.evicted)
	return true
}

// keepIfUsed puts back metrics v just deleted from m under key k if
// they were used between being marked evicted and being deleted: their
// recorder cleared the mark (see reattachCommand) while they were still
// in the registry, so it put nothing back, and no later use would,
// leaving metrics in use out of the registry for good. Metrics given to
// the key meanwhile win, as they do over a reattach. It reports whether
// v was used.
func keepIfUsed(m *sync.Map, k, v any, evicted *atomic.Bool) bool {
	if evicted.Load() {
		return false
	}
	m.LoadOrStore(k, v)
	return true
}

// EvictIdle forgets the metrics of every key idle for the registry's idle
// time (see [WithIdleEviction]) and returns how many it forgot. It does
// nothing when eviction is off.
func (r *Registry) EvictIdle() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sweepLocked()
}

func (r *Registry) sweepIfDueLocked() {
	if r.idle > 0 && r.clock.Since(r.lastSweep) >= r.idle/2 {
		r.sweepLocked()
	}
}

func (r *Registry) sweepLocked() int {
	if r.idle <= 0 {
		return 0
	}
	now := r.clock.Now()
	r.lastSweep = now
	evicted := 0
	r.commands.Range(func(k, v any) bool {
		m := v.(*CommandMetrics)
		if m.idle(now, r.idle) {
			m.evicted.Store(true)
			if r.commands.CompareAndDelete(k, m) {
				if !keepIfUsed(&r.commands, k, m, &m.evicted) {
					evicted++
				}
			}
		}
		return true
	})
	r.pools.Range(func(k, v any) bool {
		p := v.(*PoolMetrics)
		if p.idle(now, r.idle) {
			p.evicted.Store(true)
			if r.pools.CompareAndDelete(k, p) {
				if !keepIfUsed(&r.pools, k, p, &p.evicted) {
					evicted++
				}
			}
		}
		return true
	})
	return evicted
}

// reattachCommand puts evicted metrics that are used again back in the
// registry, unless their key has new metrics already.
func (r *Registry) reattachCommand(m *CommandMetrics) {
	if m.evicted.CompareAndSwap(true, false) {
		r.commands.LoadOrStore(m.key, m)
	}
}

func (r *Registry) reattachPool(p *PoolMetrics) {
	if p.evicted.CompareAndSwap(true, false) {
		r.pools.LoadOrStore(p.key, p)
	}
}
