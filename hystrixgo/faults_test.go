package hystrix

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/command"
)

// A name is a command key, so faults injected into it reach a migrated
// program's calls: the fallback gets the injected error, as it would
// run's. ConfigureCommand, which has no such setting, keeps them.
func TestFaultsReachANamesCalls(t *testing.T) {
	e, _ := testEngine(t)
	ConfigureCommand("get_user", CommandConfig{Timeout: 500, MaxConcurrentRequests: 20})
	cfg, ok := e.reg.Config("get_user")
	require.True(t, ok)
	cfg.Faults = command.FaultConfig{Enabled: true, ErrorPercentage: 100}
	require.NoError(t, e.reg.Configure("get_user", cfg))

	ran := false
	var seen error
	fallback := func(err error) error { seen = err; return nil }
	require.NoError(t, Do("get_user", func() error { ran = true; return nil }, fallback))
	assert.False(t, ran, "the fault stands in for run")
	assert.True(t, errors.Is(seen, command.ErrInjectedFault), "the fallback gets the injected error: %v", seen)

	ConfigureCommand("get_user", CommandConfig{Timeout: 800, MaxConcurrentRequests: 20})
	cfg, _ = e.reg.Config("get_user")
	assert.True(t, cfg.Faults.Enabled, "ConfigureCommand keeps the faults")
	seen = nil
	require.NoError(t, Do("get_user", func() error { ran = true; return nil }, fallback))
	assert.False(t, ran)
	assert.True(t, errors.Is(seen, command.ErrInjectedFault))
}
