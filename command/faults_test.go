package command

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/observable"
)

// countingRun returns a run that succeeds and counts its calls.
func countingRun(calls *atomic.Int64) func(context.Context, int) (string, error) {
	return func(ctx context.Context, id int) (string, error) {
		calls.Add(1)
		return userName(id), nil
	}
}

// An injected error stands in for run in every way of executing the
// command: run is not called, the execution is a FAILURE that the
// fallback answers with the injected error as its cause, and the status
// counts it.
func TestInjectedErrorIsAFailureTheFallbackAnswers(t *testing.T) {
	forEachModeAndIsolation(t, func(t *testing.T, h *harness, m execMode, iso Isolation) {
		var calls atomic.Int64
		var seen error
		c := New("GetUser", countingRun(&calls), WithRegistry(h.reg), WithConfig(Config{
			Isolation: iso,
			Faults:    FaultConfig{Enabled: true, ErrorPercentage: 100},
		})).WithFallback(func(ctx context.Context, id int, err error) (string, error) {
			seen = err
			return "anonymous", nil
		})
		v, err := m.exec(context.Background(), c, 1)
		require.NoError(t, err)
		assert.Equal(t, "anonymous", v)
		assertCommandError(t, seen, "GetUser", CommandFailure, ErrInjectedFault, nil)
		assert.Zero(t, calls.Load(), "run was called")
		assert.Equal(t, evs("FAILURE", "FALLBACK_SUCCESS"), h.events())
		st := h.state("GetUser").CommandStatus().Faults
		assert.Equal(t, int64(1), st.Errors)
		assert.Zero(t, st.Delays)
		h.assertReleased("GetUser")
	})
}

// An injected delay holds the execution as a slow downstream would: it
// runs into the timeout, which ends it without calling run.
func TestInjectedDelayRunsIntoTheTimeout(t *testing.T) {
	forEachModeAndIsolation(t, func(t *testing.T, h *harness, m execMode, iso Isolation) {
		var calls atomic.Int64
		c := New("GetUser", countingRun(&calls), WithRegistry(h.reg), WithConfig(Config{
			Isolation: iso,
			Timeout:   time.Second,
			Faults:    FaultConfig{Enabled: true, DelayPercentage: 100, Delay: 2 * time.Second},
		})).WithFallback(fallbackName)
		call := goCall(func() (string, error) { return m.exec(context.Background(), c, 1) })
		waitFor(t, "the delay to begin", func() bool { return h.state("GetUser").faults[faultDelay].Load() == 1 })
		h.clock.Advance(time.Second - time.Millisecond)
		notReturned(t, call)
		h.clock.Advance(time.Millisecond)
		res := awaitCall(t, call)
		require.NoError(t, res.err)
		assert.Equal(t, "anonymous", res.v)
		assert.Equal(t, evs("TIMEOUT", "FALLBACK_SUCCESS"), h.events())
		assert.Zero(t, calls.Load(), "run was called")
		h.assertReleased("GetUser")
	})
}

// A delay shorter than the timeout makes run start late, and the
// execution's latency holds it, as the dashboard then shows.
func TestInjectedDelayShorterThanTheTimeoutDelaysRun(t *testing.T) {
	forEachModeAndIsolation(t, func(t *testing.T, h *harness, m execMode, iso Isolation) {
		var ranAt atomic.Int64
		c := New("GetUser", func(ctx context.Context, id int) (string, error) {
			ranAt.Store(h.clock.Now().Sub(harnessStart).Milliseconds())
			return userName(id), nil
		}, WithRegistry(h.reg), WithConfig(Config{
			Isolation: iso,
			Faults:    FaultConfig{Enabled: true, DelayPercentage: 100, Delay: 300 * time.Millisecond},
		}))
		call := goCall(func() (string, error) { return m.exec(context.Background(), c, 1) })
		waitFor(t, "the delay to begin", func() bool { return h.state("GetUser").faults[faultDelay].Load() == 1 })
		h.clock.Advance(299 * time.Millisecond)
		notReturned(t, call)
		h.clock.Advance(time.Millisecond)
		res := awaitCall(t, call)
		require.NoError(t, res.err)
		assert.Equal(t, userName(1), res.v)
		assert.Equal(t, int64(300), ranAt.Load(), "run started at +300ms")
		done := h.completion()
		assert.Equal(t, 300*time.Millisecond, done.ExecutionLatency)
		h.assertReleased("GetUser")
	})
}

// A delay ended by the caller leaving is a CANCELLED execution, and run
// is not called.
func TestInjectedDelayEndsWhenTheCallerLeaves(t *testing.T) {
	h := newHarness(t)
	var calls atomic.Int64
	c := New("GetUser", countingRun(&calls), WithRegistry(h.reg), WithConfig(Config{
		Isolation: SemaphoreIsolation,
		Timeout:   -1,
		Faults:    FaultConfig{Enabled: true, DelayPercentage: 100, Delay: time.Hour},
	}))
	ctx, cancel := context.WithCancel(context.Background())
	call := goCall(func() (string, error) { return c.Execute(ctx, 1) })
	waitFor(t, "the delay to begin", func() bool { return h.state("GetUser").faults[faultDelay].Load() == 1 })
	cancel()
	res := awaitCall(t, call)
	assert.ErrorIs(t, res.err, context.Canceled)
	assert.Equal(t, evs("CANCELLED"), h.events())
	assert.Zero(t, calls.Load())
	h.assertReleased("GetUser")
}

// The percentages are drawn per execution with the registry's random
// numbers: 30% of ten evenly spread draws fail exactly three executions.
func TestFaultsAreDrawnAtTheirPercentage(t *testing.T) {
	h := newHarness(t, WithRand(evenDraws(10)))
	var calls atomic.Int64
	c := New("GetUser", countingRun(&calls), WithRegistry(h.reg), WithConfig(Config{
		Isolation: SemaphoreIsolation,
		Faults:    FaultConfig{Enabled: true, ErrorPercentage: 30},
	}))
	failed := 0
	for range 10 {
		if _, err := c.Execute(context.Background(), 1); err != nil {
			assert.ErrorIs(t, err, ErrInjectedFault)
			failed++
		}
		h.completion()
	}
	assert.Equal(t, 3, failed)
	assert.Equal(t, int64(7), calls.Load())
	assert.Equal(t, int64(3), h.state("GetUser").CommandStatus().Faults.Errors)
}

// MarkedOnly faults meet only the executions whose context is marked for
// their key.
func TestMarkedOnlyFaultsMeetMarkedRequests(t *testing.T) {
	h := newHarness(t)
	c := New("GetUser", succeedRun, WithRegistry(h.reg), WithConfig(Config{
		Isolation: SemaphoreIsolation,
		Faults:    FaultConfig{Enabled: true, ErrorPercentage: 100, MarkedOnly: true},
	}))
	bg := context.Background()
	for _, tc := range []struct {
		name  string
		ctx   context.Context
		fails bool
	}{
		{"unmarked", bg, false},
		{"marked for every key", WithFaultInjection(bg), true},
		{"marked for this key", WithFaultInjection(bg, "GetOrder", "GetUser"), true},
		{"marked for another key", WithFaultInjection(bg, "GetOrder"), false},
		{"marked again", WithFaultInjection(WithFaultInjection(bg), "GetOrder"), false},
	} {
		_, err := c.Execute(tc.ctx, 1)
		assert.Equal(t, tc.fails, errors.Is(err, ErrInjectedFault), tc.name)
		h.completion()
	}
	keys, marked := FaultInjectionOf(WithFaultInjection(bg, "GetOrder"))
	assert.True(t, marked)
	assert.Equal(t, []string{"GetOrder"}, keys)
	_, marked = FaultInjectionOf(bg)
	assert.False(t, marked)
	_, marked = FaultInjectionOf(nil)
	assert.False(t, marked)
}

// Configure switches the faults on and off live.
func TestConfigureSwitchesFaultsLive(t *testing.T) {
	h := newHarness(t)
	c := New("GetUser", succeedRun, WithRegistry(h.reg), WithConfig(Config{Isolation: SemaphoreIsolation}))
	ctx := context.Background()
	_, err := c.Execute(ctx, 1)
	require.NoError(t, err)
	cfg, _ := h.reg.Config("GetUser")
	cfg.Faults = FaultConfig{Enabled: true, ErrorPercentage: 100, Error: errBoom}
	require.NoError(t, h.reg.Configure("GetUser", cfg))
	_, err = c.Execute(ctx, 1)
	assert.ErrorIs(t, err, errBoom, "the configured error")
	cfg.Faults.Enabled = false
	require.NoError(t, h.reg.Configure("GetUser", cfg))
	_, err = c.Execute(ctx, 1)
	require.NoError(t, err)
	st := h.state("GetUser").CommandStatus().Faults
	assert.False(t, st.Enabled)
	assert.True(t, st.Shown(), "the fault injected is still shown")
}

// An injected error that is a bad request is one: no fallback, no count
// against the breaker.
func TestInjectedBadRequest(t *testing.T) {
	h := newHarness(t)
	c := New("GetUser", succeedRun, WithRegistry(h.reg), WithConfig(Config{
		Isolation: SemaphoreIsolation,
		Faults:    FaultConfig{Enabled: true, ErrorPercentage: 100, Error: BadRequest(errBoom)},
	})).WithFallback(fallbackName)
	_, err := c.Execute(context.Background(), 1)
	assert.ErrorIs(t, err, errBoom)
	assert.Equal(t, evs("BAD_REQUEST"), h.events())
}

// An ObservableCommand's Observable is not made when an error stands in
// for it, and a delay holds its subscription.
func TestFaultsOfAnObservableCommand(t *testing.T) {
	for _, iso := range bothIsolations {
		t.Run(iso.String(), func(t *testing.T) {
			h := newHarness(t)
			var made atomic.Int64
			c := NewObservable("ListUsers", func(ctx context.Context, n int) observable.Observable[int] {
				made.Add(1)
				return observable.Just(0, 1, 2)
			}, WithRegistry(h.reg), WithConfig(Config{
				Isolation: iso,
				Faults:    FaultConfig{Enabled: true, ErrorPercentage: 100},
			}))
			_, err := c.ToObservable(context.Background(), 3).ToSlice(context.Background())
			assert.ErrorIs(t, err, ErrInjectedFault)
			assert.Zero(t, made.Load())
			assert.Equal(t, evs("FAILURE", "FALLBACK_MISSING"), h.events())

			cfg, _ := h.reg.Config("ListUsers")
			cfg.Faults = FaultConfig{Enabled: true, DelayPercentage: 100, Delay: 100 * time.Millisecond}
			require.NoError(t, h.reg.Configure("ListUsers", cfg))
			call := goCall(func() ([]int, error) {
				return c.ToObservable(context.Background(), 3).ToSlice(context.Background())
			})
			waitFor(t, "the delay to begin", func() bool { return h.state("ListUsers").faults[faultDelay].Load() == 1 })
			notReturned(t, call)
			h.clock.Advance(100 * time.Millisecond)
			res := awaitCall(t, call)
			require.NoError(t, res.err)
			assert.Equal(t, []int{0, 1, 2}, res.v)
			assert.Equal(t, int64(1), made.Load())
		})
	}
}

// Validate names the field of a fault injection that is out of range,
// whether the injection is on or off: an injection that is off is shown
// on the streams as it is, and is one Configure away from being on.
func TestValidateFaults(t *testing.T) {
	for _, tc := range []struct {
		f    FaultConfig
		want string
	}{
		{FaultConfig{Enabled: true, DelayPercentage: -1, Delay: time.Second}, "Config.Faults.DelayPercentage: -1 is not within [0, 100]"},
		{FaultConfig{Enabled: true, DelayPercentage: 101, Delay: time.Second}, "Config.Faults.DelayPercentage: 101"},
		{FaultConfig{Enabled: true, Delay: -time.Second}, "Config.Faults.Delay: -1s is negative"},
		{FaultConfig{Enabled: true, ErrorPercentage: 100.5}, "Config.Faults.ErrorPercentage: 100.5 is not within [0, 100]"},
	} {
		err := Config{Faults: tc.f}.Validate()
		assert.ErrorIs(t, err, ErrInvalidConfig)
		assert.ErrorContains(t, err, tc.want)
		tc.f.Enabled = false
		err = Config{Faults: tc.f}.Validate()
		assert.ErrorIs(t, err, ErrInvalidConfig, "off: %+v", tc.f)
		assert.ErrorContains(t, err, tc.want, "off")
	}
	err := Config{Faults: FaultConfig{Enabled: true, DelayPercentage: 10}}.Validate()
	assert.ErrorIs(t, err, ErrInvalidConfig)
	assert.ErrorContains(t, err, "Config.Faults.Delay: 0 with DelayPercentage 10")
	assert.NoError(t, Config{Faults: FaultConfig{DelayPercentage: 10}}.Validate(), "off: a delay of 0 is not drawn")
	assert.NoError(t, Config{Faults: FaultConfig{}}.Validate(), "the zero value")
	assert.NoError(t, Config{Faults: FaultConfig{DelayPercentage: 10, Delay: time.Second, ErrorPercentage: 5}}.Validate(), "off, ready to turn on")
}

// A command without faults never draws.
func TestNoDrawWithoutFaults(t *testing.T) {
	h := newHarness(t, WithRand(func() float64 { panic("drawn") }))
	c := New("GetUser", succeedRun, WithRegistry(h.reg), WithConfig(Config{
		Isolation: SemaphoreIsolation,
		Faults:    FaultConfig{Enabled: true, ErrorPercentage: 100, DelayPercentage: 0},
	}))
	_, err := c.Execute(context.Background(), 1)
	assert.ErrorIs(t, err, ErrInjectedFault, "0% and 100% are not drawn")
	cfg, _ := h.reg.Config("GetUser")
	cfg.Faults.Enabled = false
	require.NoError(t, h.reg.Configure("GetUser", cfg))
	_, err = c.Execute(context.Background(), 1)
	require.NoError(t, err)
}

// Faults with an end stop by themselves at it, and the status says they
// are no longer injected while it still counts those that were.
func TestFaultsEndByThemselves(t *testing.T) {
	h := newHarness(t)
	end := harnessStart.Add(time.Minute)
	c := New("GetUser", succeedRun, WithRegistry(h.reg), WithConfig(Config{
		Isolation: SemaphoreIsolation,
		Faults:    FaultConfig{Enabled: true, ErrorPercentage: 100, Until: end},
	}))
	ctx := context.Background()
	_, err := c.Execute(ctx, 1)
	assert.ErrorIs(t, err, ErrInjectedFault)
	st := h.state("GetUser").CommandStatus().Faults
	assert.True(t, st.Enabled)
	assert.Equal(t, end, st.Until)

	h.clock.Advance(time.Minute - time.Nanosecond)
	_, err = c.Execute(ctx, 1)
	assert.ErrorIs(t, err, ErrInjectedFault, "a nanosecond before the end")
	h.clock.Advance(time.Nanosecond)
	_, err = c.Execute(ctx, 1)
	require.NoError(t, err, "at the end")
	st = h.state("GetUser").CommandStatus().Faults
	assert.False(t, st.Enabled)
	assert.True(t, st.Shown())
	assert.Equal(t, int64(2), st.Errors)
}

// A mark made with an empty list of keys names none, so it is a mark for
// every key, as WithFaultInjection's doc says, and as faultmark writes it
// for the services downstream ("*").
func TestFaultInjectionWithAnEmptyListMarksEveryKey(t *testing.T) {
	h := newHarness(t)
	c := New("GetUser", succeedRun, WithRegistry(h.reg), WithConfig(Config{
		Isolation: SemaphoreIsolation,
		Faults:    FaultConfig{Enabled: true, ErrorPercentage: 100, MarkedOnly: true},
	}))
	none := []string{}
	_, err := c.Execute(WithFaultInjection(context.Background(), none...), 1)
	assert.ErrorIs(t, err, ErrInjectedFault, "marked for every key")
	h.completion()
}
