package command

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/breaker"
	"github.com/rxhystrix/rxhystrix/metricsstream"
)

// A command whose breaker's sleep window grows waits longer after each
// failed trial, in every way of executing it, and reports the window in
// force to its metrics.
func TestCommandSleepWindowGrowsWhileTrialsFail(t *testing.T) {
	forEachModeAndIsolation(t, func(t *testing.T, h *harness, m execMode, iso Isolation) {
		cfg := tripAfterThree
		cfg.MaxSleepWindow = 4 * cfg.SleepWindow
		c := New("GetUser", func(ctx context.Context, id int) (string, error) {
			return "", errBoom
		}, WithRegistry(h.reg), WithConfig(Config{Isolation: iso, Breaker: cfg, Timeout: -1}))
		h.openBreaker(func() { m.exec(context.Background(), c, 1) }, 3, "GetUser")
		status := func() time.Duration { return h.state("GetUser").CommandStatus().CircuitBreakerSleepWindow }
		assert.Equal(t, cfg.SleepWindow, status())

		for _, window := range []time.Duration{cfg.SleepWindow, 2 * cfg.SleepWindow, 4 * cfg.SleepWindow, 4 * cfg.SleepWindow} {
			require.Equal(t, window, status())
			h.clock.Advance(window)
			_, err := m.exec(context.Background(), c, 1)
			require.ErrorIs(t, err, ErrShortCircuited, "open for the whole %v window", window)
			h.completion()
			h.clock.Advance(time.Millisecond)
			_, err = m.exec(context.Background(), c, 1)
			require.ErrorIs(t, err, errBoom, "the trial after the %v window runs, and fails", window)
			h.completion()
			require.Equal(t, breaker.Open, h.reg.Breaker("GetUser").State())
		}
		st := h.state("GetUser").CommandStatus()
		assert.Equal(t, 4*cfg.SleepWindow, st.CircuitBreakerSleepWindow)
		assert.Equal(t, cfg.SleepWindow, st.Properties.SleepWindow)
		assert.Equal(t, cfg.MaxSleepWindow, st.Properties.MaxSleepWindow)
		assert.Equal(t, float64(breaker.DefaultSleepWindowMultiplier), st.Properties.SleepWindowMultiplier)
	})
}

// A command's status carries its breaker's jitter, and the window with
// it once the breaker opens.
func TestCommandSleepWindowJitterInStatus(t *testing.T) {
	h := newHarness(t)
	cfg := tripAfterThree
	cfg.SleepWindowJitter = time.Second
	c := New("GetUser", func(ctx context.Context, id int) (string, error) {
		return "", errBoom
	}, WithRegistry(h.reg), WithConfig(Config{Isolation: SemaphoreIsolation, Breaker: cfg, Timeout: -1}))
	st := h.state("GetUser").CommandStatus()
	assert.Equal(t, time.Second, st.Properties.SleepWindowJitter)
	assert.Equal(t, cfg.SleepWindow, st.CircuitBreakerSleepWindow, "closed: the window before its jitter")
	h.openBreaker(func() { _, _ = c.Execute(context.Background(), 1) }, 3, "GetUser")
	w := h.state("GetUser").CommandStatus().CircuitBreakerSleepWindow
	assert.GreaterOrEqual(t, w, cfg.SleepWindow)
	assert.Less(t, w, cfg.SleepWindow+time.Second)
	assert.Equal(t, h.reg.Breaker("GetUser").SleepWindow(), w)
}

// A command's status names its breaker's state: the state machine's,
// or the setting that overrides it.
func TestCommandStatusNamesTheCircuitState(t *testing.T) {
	h := newHarness(t)
	c := New("GetUser", func(ctx context.Context, id int) (string, error) {
		return "", errBoom
	}, WithRegistry(h.reg), WithConfig(Config{Isolation: SemaphoreIsolation, Breaker: tripAfterThree, Timeout: -1}))
	state := func() string { return h.state("GetUser").CommandStatus().CircuitBreakerState }
	assert.Equal(t, metricsstream.CircuitClosed, state())
	h.openBreaker(func() { _, _ = c.Execute(context.Background(), 1) }, 3, "GetUser")
	assert.Equal(t, metricsstream.CircuitOpen, state())
	h.clock.Advance(tripAfterThree.SleepWindow + time.Millisecond)
	require.True(t, h.reg.Breaker("GetUser").AttemptExecution(), "a trial, still out")
	assert.Equal(t, metricsstream.CircuitHalfOpen, state())

	for _, tc := range []struct {
		breaker breaker.Config
		want    string
	}{
		{breaker.Config{ForceOpen: true, ForceClosed: true}, metricsstream.CircuitForcedOpen},
		{breaker.Config{ForceClosed: true}, metricsstream.CircuitForcedClosed},
		{breaker.Config{Disabled: true, ForceOpen: true}, metricsstream.CircuitDisabled},
	} {
		require.NoError(t, h.reg.Configure("GetUser", Config{Isolation: SemaphoreIsolation, Breaker: tc.breaker, Timeout: -1}))
		assert.Equal(t, tc.want, state(), "%+v", tc.breaker)
	}
}
