package command

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/breaker"
	ms "github.com/rxhystrix/rxhystrix/metricsstream"
	"github.com/rxhystrix/rxhystrix/observable"
)

// A key's zero Config means Hystrix's defaults.
func TestConfigDefaults(t *testing.T) {
	h := newHarness(t)
	New("GetUser", succeedRun, WithRegistry(h.reg))
	cfg, ok := h.reg.Config("GetUser")
	require.True(t, ok)
	assert.Equal(t, "GetUser", cfg.Group)
	assert.Equal(t, "GetUser", cfg.Pool, "the pool defaults to the group")
	assert.Equal(t, PoolIsolation, cfg.Isolation)
	assert.Equal(t, time.Second, cfg.Timeout)
	assert.Equal(t, 10, cfg.MaxConcurrentRequests)
	assert.Equal(t, 10, cfg.FallbackMaxConcurrentRequests)

	New("ListUsers", succeedRun, WithRegistry(h.reg), WithConfig(Config{Group: "Users"}))
	cfg, _ = h.reg.Config("ListUsers")
	assert.Equal(t, "Users", cfg.Pool)

	_, ok = h.reg.Config("Unknown")
	assert.False(t, ok)
	assert.Nil(t, h.reg.Breaker("Unknown"))
	assert.Same(t, h.state("GetUser").breaker, h.reg.Breaker("GetUser"))
	assert.Same(t, h.clock, h.reg.Clock())
}

// The first Config seen for a key holds: a later command of the key with
// another Config shares the first one.
func TestFirstConfigWins(t *testing.T) {
	h := newHarness(t)
	first := New("GetUser", succeedRun, WithRegistry(h.reg), WithConfig(Config{Timeout: 3 * time.Second}))
	second := New("GetUser", succeedRun, WithRegistry(h.reg), WithConfig(Config{Timeout: time.Millisecond}))
	cfg, _ := h.reg.Config("GetUser")
	assert.Equal(t, 3*time.Second, cfg.Timeout)
	assert.Same(t, first.Breaker(), second.Breaker())
}

// Registering a key's hook or notifier before its first command does not
// fix the key's Config: the first command's Config still holds.
func TestAddKeyHookKeepsTheFirstCommandsConfig(t *testing.T) {
	h := newHarness(t)
	rec := &hookRecorder{}
	var events []string
	h.reg.AddKeyHook("GetUser", rec)
	h.reg.AddKeyEventNotifier("GetUser", EventNotifierFunc(func(key string, e ms.EventType) {
		events = append(events, e.String())
	}))
	_, ok := h.reg.Config("GetUser")
	assert.False(t, ok, "registering a hook does not make the key")
	c := New("GetUser", succeedRun, WithRegistry(h.reg),
		WithConfig(Config{Isolation: SemaphoreIsolation, Timeout: 3 * time.Second}))
	cfg, _ := h.reg.Config("GetUser")
	assert.Equal(t, SemaphoreIsolation, cfg.Isolation)
	assert.Equal(t, 3*time.Second, cfg.Timeout)
	_, err := c.Execute(context.Background(), 1)
	require.NoError(t, err)
	h.completion()
	assert.Equal(t, []string{"Start", "ExecutionStart", "ExecutionSuccess", "Success"}, rec.take())
	assert.Equal(t, []string{"SUCCESS"}, events)
}

// Configure changes the timeout of running commands at once.
func TestConfigureChangesTimeoutLive(t *testing.T) {
	forEachModeAndIsolation(t, func(t *testing.T, h *harness, m execMode, iso Isolation) {
		g := newGate()
		defer g.release()
		c := New("GetUser", g.runLate, WithRegistry(h.reg), WithConfig(Config{Isolation: iso, Timeout: time.Minute})).WithFallback(fallbackName)
		require.NoError(t, h.reg.Configure("GetUser", Config{Isolation: iso, Timeout: 100 * time.Millisecond}))
		call := goCall(func() (string, error) { return m.exec(context.Background(), c, 1) })
		g.arrived(t)
		h.clock.Advance(100 * time.Millisecond)
		assert.Equal(t, "anonymous", awaitCall(t, call).v)
		assert.Equal(t, evs("TIMEOUT", "FALLBACK_SUCCESS"), h.events())
	})
}

// Configure changes the number of execution and fallback permits at
// once, even while permits are taken.
func TestConfigureChangesPermitsLive(t *testing.T) {
	forEachMode(t, func(t *testing.T, h *harness, m execMode) {
		g := newGate()
		defer g.release()
		cfg := Config{Isolation: SemaphoreIsolation, MaxConcurrentRequests: 1, Timeout: -1}
		c := New("GetUser", func(ctx context.Context, id int) (string, error) {
			return "ran", g.wait(ctx, true)
		}, WithRegistry(h.reg), WithConfig(cfg))
		holder := goCall(func() (string, error) { return c.Execute(context.Background(), 1) })
		g.arrived(t)
		_, err := m.exec(context.Background(), c, 2)
		assert.ErrorIs(t, err, ErrSemaphoreRejected)
		h.completion()

		cfg.MaxConcurrentRequests = 2
		require.NoError(t, h.reg.Configure("GetUser", cfg))
		second := goCall(func() (string, error) { return m.exec(context.Background(), c, 2) })
		g.arrived(t)
		assert.Equal(t, int64(2), h.execPermits("GetUser"))
		g.release()
		assert.Equal(t, "ran", awaitCall(t, second).v)
		assert.Equal(t, "ran", awaitCall(t, holder).v)
		h.completion()
		h.completion()
		h.assertReleased("GetUser")
	})
}

// Configure changes the breaker's force flags and thresholds, and the
// fallback switch, of running commands at once.
func TestConfigureChangesBreakerAndFallbackLive(t *testing.T) {
	forEachModeAndIsolation(t, func(t *testing.T, h *harness, m execMode, iso Isolation) {
		failing := false
		c := New("GetUser", func(ctx context.Context, id int) (string, error) {
			if failing {
				return "", errBoom
			}
			return "fine", nil
		}, WithRegistry(h.reg), WithConfig(Config{Isolation: iso})).WithFallback(fallbackName)
		ctx := context.Background()

		require.NoError(t, h.reg.Configure("GetUser", Config{Isolation: iso, Breaker: breaker.Config{ForceOpen: true}}))
		v, _ := m.exec(ctx, c, 1)
		assert.Equal(t, "anonymous", v)
		assert.Equal(t, evs("SHORT_CIRCUITED", "FALLBACK_SUCCESS"), h.events())

		require.NoError(t, h.reg.Configure("GetUser", Config{Isolation: iso, Breaker: breaker.Config{RequestVolumeThreshold: 2}}))
		v, _ = m.exec(ctx, c, 1)
		assert.Equal(t, "fine", v)
		h.completion()

		failing = true
		h.openBreaker(func() { m.exec(ctx, c, 1) }, 2, "GetUser")

		require.NoError(t, h.reg.Configure("GetUser", Config{Isolation: iso, FallbackDisabled: true,
			Breaker: breaker.Config{ForceClosed: true}}))
		_, err := m.exec(ctx, c, 1)
		assertCommandError(t, err, "GetUser", CommandFailure, errBoom, ErrFallbackDisabled)
		assert.Equal(t, evs("FAILURE"), h.events())
	})
}

// Configure keeps the metrics windows the key was made with; on a key
// that has no command yet it is the first Config.
func TestConfigureKeepsMetricsWindowsAndMakesNewKeys(t *testing.T) {
	h := newHarness(t)
	New("GetUser", succeedRun, WithRegistry(h.reg), WithConfig(Config{Metrics: ms.Config{RollingWindow: 20 * time.Second}}))
	require.NoError(t, h.reg.Configure("GetUser", Config{Timeout: 2 * time.Second, Metrics: ms.Config{RollingWindow: time.Second}}))
	cfg, _ := h.reg.Config("GetUser")
	assert.Equal(t, 20*time.Second, cfg.Metrics.RollingWindow)
	assert.Equal(t, 2*time.Second, cfg.Timeout)
	assert.Equal(t, 20*time.Second, h.state("GetUser").metrics.Config().RollingWindow)

	require.NoError(t, h.reg.Configure("Later", Config{Timeout: 5 * time.Second}))
	New("Later", succeedRun, WithRegistry(h.reg), WithConfig(Config{Timeout: time.Second}))
	cfg, _ = h.reg.Config("Later")
	assert.Equal(t, 5*time.Second, cfg.Timeout)

	// A key made by NewObservable stays semaphore-isolated when Configure
	// leaves Isolation zero.
	NewObservable("Stream", func(ctx context.Context, in int) observable.Observable[int] { return observable.Just(in) },
		WithRegistry(h.reg))
	require.NoError(t, h.reg.Configure("Stream", Config{Timeout: 5 * time.Second}))
	cfg, _ = h.reg.Config("Stream")
	assert.Equal(t, SemaphoreIsolation, cfg.Isolation)
}

// Invalid configurations are refused with a message that names the
// field: New panics, Registry.Configure returns the error, the package's
// Configure panics.
func TestInvalidConfigNamesTheField(t *testing.T) {
	cases := []struct {
		cfg   Config
		field string
	}{
		{Config{Isolation: 7}, "Config.Isolation"},
		{Config{MaxConcurrentRequests: -1}, "Config.MaxConcurrentRequests"},
		{Config{FallbackMaxConcurrentRequests: -2}, "Config.FallbackMaxConcurrentRequests"},
		{Config{Breaker: breaker.Config{ErrorThresholdPercentage: 101}}, "Config.Breaker"},
		{Config{Breaker: breaker.Config{ErrorThresholdPercentage: 101}}, "ErrorThresholdPercentage"},
		{Config{Metrics: ms.Config{Buckets: -1}}, "Config.Metrics"},
		{Config{Metrics: ms.Config{Buckets: -1}}, "Buckets"},
	}
	for _, tc := range cases {
		t.Run(tc.field, func(t *testing.T) {
			h := newHarness(t)
			err := tc.cfg.Validate()
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.field)
			assert.PanicsWithValue(t, `command: New("Bad"): `+err.Error(), func() {
				New("Bad", succeedRun, WithRegistry(h.reg), WithConfig(tc.cfg))
			})
			err = h.reg.Configure("Bad", tc.cfg)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.field)
			_, ok := h.reg.Config("Bad")
			assert.False(t, ok, "an invalid Configure makes no key")
			assert.Equal(t, err, Configure("Bad", tc.cfg), "the package-level Configure returns the same error")
		})
	}
	assert.NoError(t, Config{Timeout: -1}.Validate(), "a negative timeout disables it")
}

// Invalid pool configurations are refused naming the field.
func TestInvalidPoolConfigNamesTheField(t *testing.T) {
	h := newHarness(t)
	for cfg, field := range map[PoolConfig]string{
		{CoreSize: -1}:                    "PoolConfig.CoreSize",
		{QueueSizeRejectionThreshold: -3}: "PoolConfig.QueueSizeRejectionThreshold",
	} {
		err := h.reg.ConfigurePool("Users", cfg)
		require.Error(t, err)
		assert.Contains(t, err.Error(), field)
		assert.Equal(t, err, ConfigurePool("Users", cfg), "the package-level ConfigurePool returns the same error")
	}
	assert.Zero(t, h.reg.PoolCount())
	assert.NoError(t, PoolConfig{MaxQueueSize: -1, IdleTimeout: -1}.Validate())
}

// Missing functions and bad options panic at construction, naming the key
// or the option.
func TestConstructionPanicsNameTheProblem(t *testing.T) {
	h := newHarness(t)
	reg := WithRegistry(h.reg)
	assert.PanicsWithValue(t, `command: New("GetUser"): run is nil`, func() {
		New[int, string]("GetUser", nil, reg)
	})
	assert.PanicsWithValue(t, "command: New: key is empty", func() { New("", succeedRun, reg) })
	assert.PanicsWithValue(t, `command: NewObservable("Stream"): construct is nil`, func() {
		NewObservable[int, int]("Stream", nil, reg)
	})
	construct := func(ctx context.Context, in int) observable.Observable[int] { return observable.Just(in) }
	assert.PanicsWithValue(t, "command: NewObservable: key is empty", func() { NewObservable("", construct, reg) })
	assert.PanicsWithValue(t, `command: Do("DoKey"): run is nil`, func() { h.reg.Do(context.Background(), "DoKey", nil, nil) })
	assert.PanicsWithValue(t, `command: New("GetUser"): option 1 is nil`, func() { New("GetUser", succeedRun, reg, nil) })
	assert.Panics(t, func() { WithRegistry(nil) })
	assert.PanicsWithValue(t, "command: WithClock with nil clock", func() { WithClock(nil) })
	assert.PanicsWithValue(t, "command: WithRand with nil function", func() { WithRand(nil) })
	_, ok := h.reg.Config("GetUser")
	assert.False(t, ok, "a refused command makes no key")
	c := New("GetUser", succeedRun, reg)
	assert.PanicsWithValue(t, `command: WithFallback of "GetUser" with nil f`, func() { c.WithFallback(nil) })
	assert.Panics(t, func() { c.WithFallbackObservable(nil) })
	assert.Panics(t, func() { c.WithCacheKey(nil) })
	assert.Panics(t, func() { c.WithPoolKey(nil) })
	oc := NewObservable("Stream", construct, reg)
	assert.Panics(t, func() { oc.WithFallback(nil) })
	assert.Panics(t, func() { oc.WithFallbackObservable(nil) })
}

// The names of isolations and failure types are Hystrix's.
func TestNames(t *testing.T) {
	assert.Equal(t, "THREAD", PoolIsolation.String())
	assert.Equal(t, "SEMAPHORE", SemaphoreIsolation.String())
	assert.Equal(t, "Isolation(9)", Isolation(9).String())
	for f, want := range map[FailureType]string{
		CommandFailure:           "COMMAND_EXCEPTION",
		TimeoutFailure:           "TIMEOUT",
		ShortCircuitFailure:      "SHORTCIRCUIT",
		PoolRejectedFailure:      "REJECTED_THREAD_EXECUTION",
		SemaphoreRejectedFailure: "REJECTED_SEMAPHORE_EXECUTION",
		FallbackRejectedFailure:  "REJECTED_SEMAPHORE_FALLBACK",
		BadRequestFailure:        "BAD_REQUEST_EXCEPTION",
		FailureType(42):          "FailureType(42)",
	} {
		assert.Equal(t, want, f.String())
	}
}

// The status a key reports to its metrics (for the dashboard stream)
// follows its configuration and its breaker, live.
func TestCommandStatus(t *testing.T) {
	h := newHarness(t)
	c := New("GetUser", succeedRun, WithRegistry(h.reg), WithConfig(Config{Group: "Users", Timeout: 250 * time.Millisecond,
		Breaker: breaker.Config{RequestVolumeThreshold: 7}}))
	st, ok := c.Metrics().Status()
	require.True(t, ok)
	assert.Equal(t, "Users", st.Group)
	assert.Equal(t, "Users", st.Pool)
	assert.False(t, st.CircuitBreakerOpen)
	assert.Equal(t, "THREAD", st.Properties.Isolation)
	assert.Equal(t, 250*time.Millisecond, st.Properties.Timeout)
	assert.True(t, st.Properties.TimeoutEnabled)
	assert.Equal(t, 7, st.Properties.RequestVolumeThreshold)
	assert.Equal(t, breaker.DefaultErrorThresholdPercentage, st.Properties.ErrorThresholdPercentage)
	assert.Equal(t, breaker.DefaultSleepWindow, st.Properties.SleepWindow)
	assert.True(t, st.Properties.CircuitBreakerEnabled)
	assert.True(t, st.Properties.FallbackEnabled)

	require.NoError(t, h.reg.Configure("GetUser", Config{Group: "Users", Timeout: -1, Isolation: SemaphoreIsolation,
		Breaker: breaker.Config{ForceOpen: true}, FallbackDisabled: true}))
	st, _ = c.Metrics().Status()
	assert.True(t, st.CircuitBreakerOpen)
	assert.True(t, st.Properties.ForceOpen)
	assert.False(t, st.Properties.TimeoutEnabled)
	assert.Zero(t, st.Properties.Timeout)
	assert.Equal(t, "SEMAPHORE", st.Properties.Isolation)
	assert.False(t, st.Properties.FallbackEnabled)
}

// The Config a caller gives Configure is the key's from then on: the
// caller changing its own Partitions afterwards changes nothing, as it
// would bypass Validate.
func TestConfigureKeepsACopyOfPartitions(t *testing.T) {
	h := newHarness(t)
	New("GetUser", succeedRun, WithRegistry(h.reg))
	parts := []Partition{{Name: "live", Share: 0.5}}
	require.NoError(t, h.reg.Configure("GetUser", Config{Isolation: SemaphoreIsolation, Partitions: parts}))
	parts[0].Share = 7
	cfg, _ := h.reg.Config("GetUser")
	assert.Equal(t, 0.5, cfg.Partitions[0].Share)
}
