// Package keyedcommand makes the commands of a client's keys on first
// use, for the packages that put a transport's calls under commands
// (httpcommand, grpccommand): one command per key, configured by the
// program's functions when the key is first seen, each key in a worker
// pool the caller names unless its Config names one; and, for the
// guards that serve a server's incoming calls as commands, the handshake
// ([Inbound]) by which the server's goroutine waits for the handler that
// a command's run called, and their configuration ([GuardConfig]); and
// the request log as both send it in a header or trailer ([LogText]).
package keyedcommand

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/rxhystrix/rxhystrix/command"
)

// Set holds the commands of a client's keys. Fill its exported fields
// before the first Get; Get is safe for concurrent use.
type Set[In, Out any] struct {
	// Package prefixes the errors of Get ("httpcommand").
	Package string
	// Registry is where the commands are made; nil means
	// command.DefaultRegistry.
	Registry *command.Registry
	// Run is every command's run.
	Run func(context.Context, In) (Out, error)
	// Config, if not nil, gives a key's configuration.
	Config func(key string) command.Config
	// PoolConfig, if not nil, gives the configuration of a key's pool.
	PoolConfig func(key string) command.PoolConfig
	// Fallback, if not nil, is every command's fallback.
	Fallback func(ctx context.Context, in In, err error) (Out, error)
	// BadRequests, if not nil, picks the errors of Run that are bad
	// requests, and those injected in its place (command.Config.Faults):
	// every command's command.Command.WithBadRequests.
	BadRequests func(error) bool

	// made holds the commands by key: Get reads it without a lock, so
	// that a key's first use, which reads its Config under mu, holds up
	// no call of the keys already made.
	made sync.Map // string → *command.Command[In, Out]

	mu    sync.Mutex      // serializes the making of commands
	pools map[string]bool // the pools this set configured, under mu
}

// Get returns the command of key, made on its first use: its Config and
// PoolConfig are read then, and hold as the registry's first seen for
// the key. Config.Pool defaults to pool. A pool that keys share is
// configured by PoolConfig at the first use of the first of them only,
// so that a change made since (Registry.ConfigurePool) holds. An invalid
// configuration is an error naming the key that wraps
// command.ErrInvalidConfig.
func (s *Set[In, Out]) Get(key, pool string) (*command.Command[In, Out], error) {
	if c, ok := s.made.Load(key); ok {
		return c.(*command.Command[In, Out]), nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.made.Load(key); ok {
		return c.(*command.Command[In, Out]), nil
	}
	var cfg command.Config
	if s.Config != nil {
		cfg = s.Config(key)
	}
	if cfg.Pool == "" {
		cfg.Pool = pool // a pool per downstream, even when keys share a group
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("%s: config of %q: %w", s.Package, key, err)
	}
	registry := s.registry()
	if s.PoolConfig != nil && !s.pools[cfg.Pool] {
		if err := registry.ConfigurePool(cfg.Pool, s.PoolConfig(key)); err != nil {
			return nil, fmt.Errorf("%s: pool config of %q: %w", s.Package, key, err)
		}
	}
	c := command.New(key, s.Run, command.WithRegistry(registry), command.WithConfig(cfg))
	if s.BadRequests != nil {
		c = c.WithBadRequests(s.BadRequests)
	}
	if s.Fallback != nil {
		c = c.WithFallback(s.Fallback)
	}
	if s.pools == nil {
		s.pools = make(map[string]bool)
	}
	s.pools[cfg.Pool] = true
	s.made.Store(key, c)
	return c, nil
}

// registry returns the set's Registry, or command.DefaultRegistry.
func (s *Set[In, Out]) registry() *command.Registry {
	if s.Registry == nil {
		return command.DefaultRegistry
	}
	return s.Registry
}

// RetryAfter is command.Registry.RetryAfter of the set's registry: how
// long until the command whose call err refused would admit another, for
// a guard's answer to the call.
func (s *Set[In, Out]) RetryAfter(err error) (time.Duration, bool) {
	return s.registry().RetryAfter(err)
}
