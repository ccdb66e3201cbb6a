package command

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ConfigureFunc changes one field and keeps the others in force; on a
// key that has no command yet it starts from the zero Config.
func TestConfigureFuncChangesWhatItIsTold(t *testing.T) {
	h := newHarness(t)
	New("GetUser", succeedRun, WithRegistry(h.reg), WithConfig(Config{Timeout: 2 * time.Second, MaxConcurrentRequests: 7}))
	require.NoError(t, h.reg.ConfigureFunc("GetUser", func(cfg *Config) { cfg.FallbackDisabled = true }))
	cfg, _ := h.reg.Config("GetUser")
	assert.Equal(t, 2*time.Second, cfg.Timeout)
	assert.Equal(t, 7, cfg.MaxConcurrentRequests)
	assert.True(t, cfg.FallbackDisabled)

	var seen Config
	require.NoError(t, h.reg.ConfigureFunc("Later", func(cfg *Config) { seen = *cfg; cfg.Timeout = 3 * time.Second }))
	assert.Zero(t, seen.Timeout, "a new key starts from the zero Config")
	cfg, ok := h.reg.Config("Later")
	require.True(t, ok)
	assert.Equal(t, 3*time.Second, cfg.Timeout)
	assert.Equal(t, 10, cfg.MaxConcurrentRequests, "Hystrix's defaults fill in the rest")
}

// What change leaves is validated as Configure's argument is, and a bad
// key is refused before change is called.
func TestConfigureFuncRefusesWhatConfigureRefuses(t *testing.T) {
	h := newHarness(t)
	New("GetUser", succeedRun, WithRegistry(h.reg), WithConfig(Config{Timeout: 2 * time.Second}))
	err := h.reg.ConfigureFunc("GetUser", func(cfg *Config) { cfg.Timeout = time.Second; cfg.MaxConcurrentRequests = -1 })
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Config.MaxConcurrentRequests")
	cfg, _ := h.reg.Config("GetUser")
	assert.Equal(t, 2*time.Second, cfg.Timeout, "a refused change changes nothing")

	called := false
	err = h.reg.ConfigureFunc("", func(*Config) { called = true })
	assert.True(t, errors.Is(err, ErrInvalidKey), "%v", err)
	assert.False(t, called)
}

// Changes made at once by several callers, each to the Config in force,
// are all kept: none starts from a Config another is about to replace.
func TestConcurrentConfigureFuncsLoseNoChange(t *testing.T) {
	h := newHarness(t)
	New("GetUser", succeedRun, WithRegistry(h.reg), WithConfig(Config{MaxConcurrentRequests: 1}))
	const callers, changes = 8, 50
	var wg sync.WaitGroup
	for range callers {
		wg.Go(func() {
			for range changes {
				assert.NoError(t, h.reg.ConfigureFunc("GetUser", func(cfg *Config) { cfg.MaxConcurrentRequests++ }))
			}
		})
	}
	wg.Wait()
	cfg, _ := h.reg.Config("GetUser")
	assert.Equal(t, 1+callers*changes, cfg.MaxConcurrentRequests)
}

// A Configure called while a ConfigureFunc's change runs waits for it,
// and takes effect after it: the change, made to the Config before the
// Configure, does not undo the Configure.
func TestConfigureWaitsForAConfigureFunc(t *testing.T) {
	h := newHarness(t)
	New("GetUser", succeedRun, WithRegistry(h.reg), WithConfig(Config{Timeout: time.Second}))
	changing, release := make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		assert.NoError(t, h.reg.ConfigureFunc("GetUser", func(cfg *Config) {
			close(changing)
			<-release
			cfg.FallbackDisabled = true
		}))
	})
	<-changing
	configured := make(chan struct{})
	wg.Go(func() {
		assert.NoError(t, h.reg.Configure("GetUser", Config{Timeout: 5 * time.Second}))
		close(configured)
	})
	select {
	case <-configured: // what a Configure that does not wait does, at once
		t.Error("Configure took effect while a ConfigureFunc's change ran")
	case <-time.After(20 * time.Millisecond):
	}
	close(release)
	wg.Wait()
	cfg, _ := h.reg.Config("GetUser")
	assert.Equal(t, 5*time.Second, cfg.Timeout)
	assert.False(t, cfg.FallbackDisabled, "the Configure came after the change")
}

// A pool configured while its first task makes it is made with that
// configuration, or takes it at once: ConfigurePool is never lost.
func TestConfigurePoolWhileThePoolIsMade(t *testing.T) {
	h := newHarness(t)
	for i := range 1000 {
		key := fmt.Sprintf("Pool%d", i)
		var wg sync.WaitGroup
		wg.Go(func() { assert.NoError(t, h.reg.ConfigurePool(key, PoolConfig{CoreSize: 3})) })
		wg.Go(func() { h.reg.pool(key, false) })
		wg.Wait()
		require.Equal(t, 3, h.reg.pool(key, false).config.Load().CoreSize, "pool %s", key)
	}
}

// ConfigureFunc's change is given a copy of the Config in force: a change
// it refuses, made in place in the copy's Partitions, leaves the Config in
// force as it was.
func TestConfigureFuncRefusedPartitionChangeLeavesTheConfigInForce(t *testing.T) {
	h := newHarness(t)
	New("GetUser", succeedRun, WithRegistry(h.reg), WithConfig(Config{Isolation: SemaphoreIsolation,
		Partitions: []Partition{{Name: "live", Share: 0.5}, {Name: "batch", Share: 0.5}}}))
	err := h.reg.ConfigureFunc("GetUser", func(c *Config) { c.Partitions[0].Share = 2 })
	require.ErrorIs(t, err, ErrInvalidConfig)
	cfg, _ := h.reg.Config("GetUser")
	assert.Equal(t, 0.5, cfg.Partitions[0].Share, "the refused change is not in force")
}
