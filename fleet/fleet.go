package fleet

import (
	"fmt"
	"slices"
	"sync"

	"github.com/rxhystrix/rxhystrix/breaker"
	"github.com/rxhystrix/rxhystrix/clock"
	"github.com/rxhystrix/rxhystrix/command"
)

// Fleet is this instance's membership of a fleet: it makes the health
// sources of the command keys that opted in and stops them on Close. Give
// its HealthSource method to command.WithHealthSource:
//
//	f, err := fleet.New(fleet.Config{Client: rdb, Instance: host, Keys: []string{"GetUser"}})
//	reg := command.NewRegistry(command.WithHealthSource(f.HealthSource))
//
// A Fleet is safe for concurrent use.
type Fleet struct {
	cfg   Config // with defaults applied
	store store

	// afterExchange, when set, is called after each exchange of every
	// source, with the source's lock held.
	afterExchange func(*Source)

	mu      sync.Mutex
	sources map[string]*Source
	closed  bool
}

// New returns a Fleet configured by cfg, or cfg.Validate's error.
func New(cfg Config) (*Fleet, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	return newFleet(cfg, redisStore{client: cfg.Client, prefix: cfg.Prefix}), nil
}

// newFleet returns a Fleet that meets the others in s; cfg has its
// defaults.
func newFleet(cfg Config, s store) *Fleet {
	cfg.Keys = slices.Clone(cfg.Keys)
	return &Fleet{cfg: cfg, store: s, sources: make(map[string]*Source)}
}

// HealthSource is a command.HealthSourceFunc: for a key among
// Config.Keys it returns the key's fleet Source, which starts exchanging
// with Redis at once; for any other key it returns nil, so that the key
// keeps its own metrics. It panics if called twice for one key (a key has
// one breaker per registry: give a Fleet to one registry) or after Close.
func (f *Fleet) HealthSource(k command.KeyHealth) breaker.HealthSource {
	if !slices.Contains(f.cfg.Keys, k.Key) {
		return nil
	}
	if k.Metrics == nil {
		panic(fmt.Sprintf("fleet: HealthSource for %q without Metrics", k.Key))
	}
	c := k.Clock
	if c == nil {
		c = clock.Real
	}
	cfg := k.Breaker
	if cfg == nil {
		cfg = func() breaker.Config { return breaker.Config{} }
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case f.closed:
		panic(fmt.Sprintf("fleet: HealthSource for %q after Close", k.Key))
	case f.sources[k.Key] != nil:
		panic(fmt.Sprintf("fleet: HealthSource for %q twice", k.Key))
	}
	s := newSource(f, k.Key, k.Metrics, cfg, c)
	f.sources[k.Key] = s
	return s
}

// Source returns the Source of key, nil if none was made.
func (f *Fleet) Source(key string) *Source {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.sources[key]
}

// Stats returns the Stats of every Source by key.
func (f *Fleet) Stats() map[string]Stats {
	f.mu.Lock()
	defer f.mu.Unlock()
	m := make(map[string]Stats, len(f.sources))
	for k, s := range f.sources {
		m[k] = s.Stats()
	}
	return m
}

// Close stops every Source's goroutine and waits for them; their
// breakers keep the last snapshot they were sent. It does not close
// Config.Client. Close is idempotent.
func (f *Fleet) Close() {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return
	}
	f.closed = true
	sources := make([]*Source, 0, len(f.sources))
	for _, s := range f.sources {
		sources = append(sources, s)
	}
	f.mu.Unlock()
	for _, s := range sources {
		s.close()
	}
}
