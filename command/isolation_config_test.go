package command

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/observable"
)

// An explicit isolation always wins, for both kinds of command, whether
// it comes with the command (WithConfig) or later
// (Configure); DefaultIsolation means the kind's default; and writing
// back the Config read from the registry with a new timeout keeps the
// isolation in force. Configure used to read PoolIsolation, the zero
// value, as "the kind's default", so an ObservableCommand made to run in
// a pool came back SEMAPHORE from a round trip, with no way back.
func TestExplicitIsolationIsHonoured(t *testing.T) {
	kinds := map[string]struct {
		byDefault Isolation
		make      func(r *Registry, key string, opts ...Option)
	}{
		"Command": {PoolIsolation, func(r *Registry, key string, opts ...Option) {
			New(key, succeedRun, append(opts, WithRegistry(r))...)
		}},
		"ObservableCommand": {SemaphoreIsolation, func(r *Registry, key string, opts ...Option) {
			NewObservable(key, func(_ context.Context, n int) observable.Observable[int] { return observable.Just(n) },
				append(opts, WithRegistry(r))...)
		}},
	}
	isolations := []Isolation{DefaultIsolation, PoolIsolation, SemaphoreIsolation}
	// resolve is what isolation means for a kind whose default is d.
	resolve := func(i, d Isolation) Isolation {
		if i == DefaultIsolation {
			return d
		}
		return i
	}
	for kindName, kind := range kinds {
		{
			for _, byConfig := range isolations {
				for _, configured := range isolations {
					name := fmt.Sprintf("%s/Config(%v)/Configure(%v)", kindName, byConfig, configured)
					t.Run(name, func(t *testing.T) {
						r := NewRegistry()
						defer r.Close()
						kind.make(r, "k", WithConfig(Config{Isolation: byConfig}))
						want := resolve(byConfig, kind.byDefault)
						got, _ := r.Config("k")
						require.Equal(t, want, got.Isolation, "at creation")

						// The Config read back, with a new timeout, keeps it.
						got.Timeout = 3 * time.Second
						require.NoError(t, r.Configure("k", got))
						back, _ := r.Config("k")
						assert.Equal(t, want, back.Isolation, "after a round trip")
						assert.Equal(t, 3*time.Second, back.Timeout)

						// An explicit isolation given to Configure wins; the
						// default is the kind's.
						require.NoError(t, r.Configure("k", Config{Isolation: configured}))
						after, _ := r.Config("k")
						assert.Equal(t, resolve(configured, kind.byDefault), after.Isolation, "after Configure")
					})
				}
			}
		}
	}
}

// A key configured before its command is made (hystrixprops configures
// keys from a file at start-up) takes its isolation from the kind of the
// command made for it when its Config leaves Isolation at
// DefaultIsolation: an ObservableCommand is semaphore-isolated, as
// Config.Isolation's doc and NewObservable's promise, and a Command runs
// in a pool.
func TestConfigureBeforeTheCommandKeepsTheKindsDefaultIsolation(t *testing.T) {
	r := NewRegistry()
	defer r.Close()
	require.NoError(t, r.Configure("Stream", Config{Timeout: 2 * time.Second}))
	NewObservable("Stream", func(_ context.Context, n int) observable.Observable[int] { return observable.Just(n) }, WithRegistry(r))
	cfg, _ := r.Config("Stream")
	assert.Equal(t, SemaphoreIsolation, cfg.Isolation, "an ObservableCommand's default")
	assert.Equal(t, 2*time.Second, cfg.Timeout)
	// Writing DefaultIsolation back still means the kind's default.
	require.NoError(t, r.Configure("Stream", Config{Timeout: 3 * time.Second}))
	cfg, _ = r.Config("Stream")
	assert.Equal(t, SemaphoreIsolation, cfg.Isolation, "after another Configure")

	require.NoError(t, r.Configure("Call", Config{Timeout: 2 * time.Second}))
	New("Call", succeedRun, WithRegistry(r))
	cfg, _ = r.Config("Call")
	assert.Equal(t, PoolIsolation, cfg.Isolation, "a Command's default")

	// A ConfigureFunc before the command changes only what it changes.
	require.NoError(t, r.Configure("Later", Config{}))
	require.NoError(t, r.ConfigureFunc("Later", func(c *Config) { c.Timeout = time.Minute }))
	NewObservable("Later", func(_ context.Context, n int) observable.Observable[int] { return observable.Just(n) }, WithRegistry(r))
	cfg, _ = r.Config("Later")
	assert.Equal(t, SemaphoreIsolation, cfg.Isolation, "after ConfigureFunc")
	assert.Equal(t, time.Minute, cfg.Timeout)

	// An explicit isolation given before the command stays.
	require.NoError(t, r.Configure("Pooled", Config{Isolation: PoolIsolation}))
	NewObservable("Pooled", func(_ context.Context, n int) observable.Observable[int] { return observable.Just(n) }, WithRegistry(r))
	cfg, _ = r.Config("Pooled")
	assert.Equal(t, PoolIsolation, cfg.Isolation, "named by Configure")
}
