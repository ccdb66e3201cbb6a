// Package registrytest runs a command.Registry on a manual clock, for
// the tests of the packages that make commands for a program
// (httpcommand, grpccommand): the clock is advanced by the test, each
// TIMEOUT is told as the command records it, and a key's events are read
// once their buckets have closed.
package registrytest

import (
	"testing"
	"time"

	"github.com/rxhystrix/rxhystrix/clock"
	"github.com/rxhystrix/rxhystrix/command"
	"github.com/rxhystrix/rxhystrix/metricsstream"
)

// Registry is a command.Registry on a manual clock.
type Registry struct {
	*command.Registry
	Clock *clock.Manual
	// TimedOut receives a value for each TIMEOUT a command of the
	// registry records, when it records it (up to 16 not yet received).
	TimedOut chan struct{}
}

// New returns a Registry whose clock starts at start, made with opts
// besides that clock, and closed at the end of t.
func New(t testing.TB, start time.Time, opts ...command.RegistryOption) *Registry {
	t.Helper()
	r := &Registry{Clock: clock.NewManual(start), TimedOut: make(chan struct{}, 16)}
	r.Registry = command.NewRegistry(append([]command.RegistryOption{command.WithClock(r.Clock)}, opts...)...)
	t.Cleanup(r.Close)
	r.AddEventNotifier(command.EventNotifierFunc(func(_ string, e metricsstream.EventType) {
		if e == metricsstream.Timeout {
			r.TimedOut <- struct{}{}
		}
	}))
	return r
}

// Events returns the cumulative counts of key's events
// ("[SUCCESS: 1, TIMEOUT: 2]"), once the rolling buckets have closed:
// it advances the clock by a second, or by the width of key's rolling
// buckets when they are wider. It is "no such key" for a key no command
// has used.
func (r *Registry) Events(key string) string {
	r.Clock.Advance(time.Second)
	m, ok := r.Metrics().LookupCommand(key)
	if !ok {
		return "no such key"
	}
	if cfg := m.Config(); cfg.Buckets > 0 {
		if wide := cfg.RollingWindow / time.Duration(cfg.Buckets); wide > time.Second {
			r.Clock.Advance(wide - time.Second)
		}
	}
	return m.CumulativeCounts().String()
}
