package breaker

import (
	"slices"
	"sync"
)

// Registry holds one Breaker per command key, as Hystrix's
// HystrixCircuitBreaker.Factory does: every command made with the same key
// shares the breaker the first of them created.
//
// The zero Registry is empty and ready to use. A Registry is safe for
// concurrent use; it owns its breakers and closes them on Remove and
// Reset.
type Registry struct {
	opts     []Option
	breakers sync.Map   // key -> *Breaker
	mu       sync.Mutex // serializes creation, so that one breaker is made per key
}

// NewRegistry returns an empty Registry whose breakers are made with opts
// (a WithName in opts is overridden by the key).
func NewRegistry(opts ...Option) *Registry {
	for _, opt := range opts {
		if opt == nil {
			panic("breaker: NewRegistry with nil Option")
		}
	}
	return &Registry{opts: slices.Clone(opts)}
}

// GetOrCreate returns the breaker of key, making it with New(cfg, health)
// if the key has none yet. Concurrent callers with the same key all get
// the one breaker; only one is ever made and subscribed. A breaker that
// exists keeps its configuration (cfg and health are then unused); change
// it with SetConfig. It panics as New does when it has to make a breaker
// from an invalid cfg or a nil health.
func (r *Registry) GetOrCreate(key string, cfg Config, health HealthSource) *Breaker {
	if b, ok := r.breakers.Load(key); ok {
		return b.(*Breaker)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if b, ok := r.breakers.Load(key); ok {
		return b.(*Breaker)
	}
	b := New(cfg, health, append(slices.Clip(r.opts), WithName(key))...)
	r.breakers.Store(key, b)
	return b
}

// Get returns the breaker of key, if there is one.
func (r *Registry) Get(key string) (*Breaker, bool) {
	b, ok := r.breakers.Load(key)
	if !ok {
		return nil, false
	}
	return b.(*Breaker), true
}

// Keys returns the keys that have a breaker, sorted.
func (r *Registry) Keys() []string {
	var keys []string
	r.breakers.Range(func(k, _ any) bool {
		keys = append(keys, k.(string))
		return true
	})
	slices.Sort(keys)
	return keys
}

// Remove closes and forgets the breaker of key; the next GetOrCreate of
// key makes a new one. It reports whether there was one.
func (r *Registry) Remove(key string) bool {
	r.mu.Lock()
	b, ok := r.breakers.LoadAndDelete(key)
	r.mu.Unlock()
	if ok {
		b.(*Breaker).Close()
	}
	return ok
}

// Reset closes and forgets every breaker (Hystrix's Factory.reset).
func (r *Registry) Reset() {
	r.mu.Lock()
	var closing []*Breaker
	r.breakers.Range(func(k, b any) bool {
		r.breakers.Delete(k)
		closing = append(closing, b.(*Breaker))
		return true
	})
	r.mu.Unlock()
	for _, b := range closing {
		b.Close()
	}
}
