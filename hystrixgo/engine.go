package hystrix

import (
	"strconv"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/rxhystrix/rxhystrix/command"
)

// engine is the package's state on one command.Registry: the settings by
// name, the commands of each name (kept across Flush) and the live
// circuits (forgotten by Flush).
type engine struct {
	reg *command.Registry

	settingsMu sync.RWMutex
	settings   map[string]*Settings

	mu       sync.Mutex       // makes cores and circuits
	cores    map[string]*core // by name; guarded by mu
	circuits sync.Map         // name → *CircuitBreaker
}

func newEngine(reg *command.Registry) *engine {
	return &engine{reg: reg, settings: map[string]*Settings{}, cores: map[string]*core{}}
}

// std is the engine of the package-level functions: on
// command.DefaultRegistry, so that every name is also a command of
// rxhystrix's own stream, dashboard and Prometheus collector. Tests swap
// it for one on a registry of their own.
var std atomic.Pointer[engine]

func init() { std.Store(newEngine(command.DefaultRegistry)) }

func current() *engine { return std.Load() }

// keyOf returns the command key of a name. rxhystrix keys are non-empty
// UTF-8; any other name (hystrix-go takes "") is used quoted, and so is a
// name that starts with a quote mark, so that no two names share a key
// (the name `""` would otherwise be the empty name's).
func keyOf(name string) string {
	if name != "" && utf8.ValidString(name) && name[0] != '"' {
		return name
	}
	return strconv.Quote(name)
}

// settingsFor returns the settings of name, giving it the defaults if it
// has none, as hystrix-go does on a name's first use.
func (e *engine) settingsFor(name string) *Settings {
	e.settingsMu.RLock()
	s := e.settings[name]
	e.settingsMu.RUnlock()
	if s != nil {
		return s
	}
	e.settingsMu.Lock()
	if s = e.settings[name]; s == nil {
		s = settingsOf(CommandConfig{})
		e.settings[name] = s
	}
	e.settingsMu.Unlock()
	return s
}

// configure stores s for name and applies it to the name's command key.
func (e *engine) configure(name string, s *Settings) {
	key := keyOf(name)
	cfg, pool := commandConfig(key, s)
	if err := cfg.Validate(); err != nil {
		logf("hystrix: ConfigureCommand(%q): %v", name, err)
		return
	}
	if err := pool.Validate(); err != nil {
		logf("hystrix: ConfigureCommand(%q): %v", name, err)
		return
	}
	// Under mu, which makes cores: a core made meanwhile would otherwise
	// size its pool by the settings before these, after this call sized
	// it by these; and of two calls for one name, the pool and the
	// command could each keep a different one's.
	e.mu.Lock()
	defer e.mu.Unlock()
	e.settingsMu.Lock()
	e.settings[name] = s
	e.settingsMu.Unlock()
	if err := e.reg.ConfigurePool(key, pool); err != nil {
		logf("hystrix: ConfigureCommand(%q): %v", name, err)
	}
	err := e.reg.ConfigureFunc(key, func(c *command.Config) {
		faults := c.Faults // hystrix-go has no such setting: a game day outlives a reconfiguration
		*c = cfg
		c.Faults = faults
	})
	if err != nil {
		logf("hystrix: ConfigureCommand(%q): %v", name, err)
	}
	if c := e.cores[name]; c != nil {
		c.maxConcurrent.Store(int64(s.MaxConcurrentRequests))
	}
}
