package command

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/breaker"
	ms "github.com/rxhystrix/rxhystrix/metricsstream"
)

// tripAfterThree trips on three requests with half of them failing, and
// lets a trial through five seconds after opening.
var tripAfterThree = breaker.Config{RequestVolumeThreshold: 3, ErrorThresholdPercentage: 50, SleepWindow: 5 * time.Second}

// 19: a breaker forced open short-circuits every execution to the
// fallback and reports itself open.
func TestCircuitBreakerReportsOpenIfForcedOpen(t *testing.T) {
	forEachModeAndIsolation(t, func(t *testing.T, h *harness, m execMode, iso Isolation) {
		ran := false
		c := New("GetUser", func(ctx context.Context, id int) (string, error) {
			ran = true
			return "x", nil
		}, WithRegistry(h.reg), WithConfig(Config{Isolation: iso, Breaker: breaker.Config{ForceOpen: true}})).WithFallback(fallbackName)
		v, err := m.exec(context.Background(), c, 1)
		require.NoError(t, err)
		assert.Equal(t, "anonymous", v)
		assert.True(t, c.Breaker().IsOpen())
		assert.False(t, ran)
		done := h.completion()
		assert.Equal(t, evs("SHORT_CIRCUITED", "FALLBACK_SUCCESS"), eventNames(done.Events))
		assert.False(t, done.Executed)
		assert.Equal(t, time.Duration(-1), done.ExecutionLatency, "Hystrix's execution time -1")
		assert.Zero(t, done.ConcurrencyAtStart)
		h.assertReleased("GetUser")
	})
}

// A short-circuit without a fallback: "short-circuited and no fallback
// available", errors.Is ErrShortCircuited.
func TestShortCircuitWithNoFallback(t *testing.T) {
	forEachModeAndIsolation(t, func(t *testing.T, h *harness, m execMode, iso Isolation) {
		c := New("GetUser", succeedRun, WithRegistry(h.reg),
			WithConfig(Config{Isolation: iso, Breaker: breaker.Config{ForceOpen: true}}))
		_, err := m.exec(context.Background(), c, 1)
		assertCommandError(t, err, "GetUser", ShortCircuitFailure, ErrShortCircuited, ErrFallbackMissing)
		assert.ErrorIs(t, err, ErrShortCircuited)
		assert.Equal(t, "GetUser short-circuited and no fallback available", err.Error())
		assert.Equal(t, evs("SHORT_CIRCUITED", "FALLBACK_MISSING"), h.events())
	})
}

// 20: a breaker forced closed lets every execution run, however many
// fail.
func TestCircuitBreakerReportsClosedIfForcedClosed(t *testing.T) {
	forEachModeAndIsolation(t, func(t *testing.T, h *harness, m execMode, iso Isolation) {
		failing := true
		c := New("GetUser", func(ctx context.Context, id int) (string, error) {
			if failing {
				return "", errBoom
			}
			return "fine", nil
		}, WithRegistry(h.reg), WithConfig(Config{Isolation: iso, Breaker: breaker.Config{
			ForceClosed: true, RequestVolumeThreshold: 1, ErrorThresholdPercentage: 1,
		}})).WithFallback(fallbackName)
		for range 5 {
			v, err := m.exec(context.Background(), c, 1)
			require.NoError(t, err)
			assert.Equal(t, "anonymous", v)
			assert.Equal(t, evs("FAILURE", "FALLBACK_SUCCESS"), h.events())
		}
		h.clock.Advance(snapshotInterval(h.reg, "GetUser"))
		require.Equal(t, 100, c.Metrics().HealthCounts().ErrorPercentage)
		assert.False(t, c.Breaker().IsOpen())
		failing = false
		v, err := m.exec(context.Background(), c, 1)
		require.NoError(t, err)
		assert.Equal(t, "fine", v)
		assert.Equal(t, evs("SUCCESS"), h.events())
	})
}

// 21: commands made with the same key share one breaker: failures of
// both open it for both.
func TestCircuitBreakerAcrossMultipleCommandsButSameCircuitBreaker(t *testing.T) {
	forEachModeAndIsolation(t, func(t *testing.T, h *harness, m execMode, iso Isolation) {
		cfg := WithConfig(Config{Isolation: iso, Breaker: tripAfterThree})
		one := New("SharedKey", failRun, WithRegistry(h.reg), cfg).WithFallback(fallbackName)
		two := New("SharedKey", failRun, WithRegistry(h.reg), cfg).WithFallback(fallbackName)
		require.Same(t, one.Breaker(), two.Breaker())
		require.Same(t, one.Metrics(), two.Metrics())

		for _, c := range []*Command[int, string]{one, two, one} {
			_, err := m.exec(context.Background(), c, 1)
			require.NoError(t, err)
			assert.Equal(t, evs("FAILURE", "FALLBACK_SUCCESS"), h.events())
		}
		h.clock.Advance(snapshotInterval(h.reg, "SharedKey"))
		assert.True(t, two.Breaker().IsOpen())

		v, err := m.exec(context.Background(), two, 1)
		require.NoError(t, err)
		assert.Equal(t, "anonymous", v)
		assert.Equal(t, evs("SHORT_CIRCUITED", "FALLBACK_SUCCESS"), h.events())
	})
}

// 22: with the breaker disabled, failures never open it and successes
// are still counted.
func TestExecutionSuccessWithCircuitBreakerDisabled(t *testing.T) {
	forEachModeAndIsolation(t, func(t *testing.T, h *harness, m execMode, iso Isolation) {
		failing := true
		c := New("GetUser", func(ctx context.Context, id int) (string, error) {
			if failing {
				return "", errBoom
			}
			return "fine", nil
		}, WithRegistry(h.reg), WithConfig(Config{Isolation: iso, Breaker: breaker.Config{
			Disabled: true, RequestVolumeThreshold: 1, ErrorThresholdPercentage: 1,
		}}))
		for range 3 {
			_, err := m.exec(context.Background(), c, 1)
			assert.ErrorIs(t, err, errBoom)
			assert.Equal(t, evs("FAILURE", "FALLBACK_MISSING"), h.events())
		}
		h.clock.Advance(snapshotInterval(h.reg, "GetUser"))
		assert.False(t, c.Breaker().IsOpen())
		failing = false
		v, err := m.exec(context.Background(), c, 1)
		require.NoError(t, err)
		assert.Equal(t, "fine", v)
		assert.Equal(t, evs("SUCCESS"), h.events())
		h.closeBuckets("GetUser")
		assert.Equal(t, int64(1), c.Metrics().CumulativeCount(ms.Success))
		assert.Equal(t, int64(3), c.Metrics().CumulativeCount(ms.Failure))
	})
}

// 26: failures open the breaker; the next execution is short-circuited to
// the fallback without running, and short-circuits are counted but not in
// health.
func TestShortCircuitFallbackCounter(t *testing.T) {
	forEachModeAndIsolation(t, func(t *testing.T, h *harness, m execMode, iso Isolation) {
		failing := true
		runs := 0
		c := New("GetUser", func(ctx context.Context, id int) (string, error) {
			runs++
			if failing {
				return "", errBoom
			}
			return "fine", nil
		}, WithRegistry(h.reg), WithConfig(Config{Isolation: iso, Breaker: tripAfterThree})).WithFallback(fallbackName)
		h.openBreaker(func() { m.exec(context.Background(), c, 1) }, 3, "GetUser")
		require.Equal(t, 3, runs)

		for range 2 {
			v, err := m.exec(context.Background(), c, 1)
			require.NoError(t, err)
			assert.Equal(t, "anonymous", v)
			done := h.completion()
			assert.Equal(t, evs("SHORT_CIRCUITED", "FALLBACK_SUCCESS"), eventNames(done.Events))
			assert.Equal(t, time.Duration(-1), done.ExecutionLatency)
		}
		assert.Equal(t, 3, runs, "short-circuited executions do not run")
		h.clock.Advance(snapshotInterval(h.reg, "GetUser"))
		assert.Equal(t, int64(3), c.Metrics().HealthCounts().Total, "short-circuits are not in health")
		h.closeBuckets("GetUser")
		assert.Equal(t, int64(2), c.Metrics().CumulativeCount(ms.ShortCircuited))
		assert.Equal(t, int64(5), c.Metrics().CumulativeCount(ms.FallbackSuccess))
	})
}

// Breaker tests 6-8 through commands: after the sleep window one trial
// runs while every other caller is short-circuited; a failed trial
// re-opens the breaker for another window, a successful one closes it and
// the old failures no longer count.
func TestCircuitClosedAfterSuccess(t *testing.T) {
	forEachModeAndIsolation(t, func(t *testing.T, h *harness, m execMode, iso Isolation) {
		failing := true
		g := newGate()
		defer g.release()
		c := New("GetUser", func(ctx context.Context, id int) (string, error) {
			if id == 0 {
				if err := g.wait(ctx, true); err != nil {
					return "", err
				}
			}
			if failing {
				return "", errBoom
			}
			return "fine", nil
		}, WithRegistry(h.reg), WithConfig(Config{Isolation: iso, Breaker: tripAfterThree, Timeout: -1})).WithFallback(fallbackName)
		h.openBreaker(func() { m.exec(context.Background(), c, 1) }, 3, "GetUser")

		// Within the sleep window, everything is short-circuited.
		h.clock.Advance(tripAfterThree.SleepWindow)
		c.Execute(context.Background(), 1)
		assert.Equal(t, evs("SHORT_CIRCUITED", "FALLBACK_SUCCESS"), h.events())

		// A failing trial re-opens it with a new window.
		h.clock.Advance(time.Millisecond)
		m.exec(context.Background(), c, 1)
		assert.Equal(t, evs("FAILURE", "FALLBACK_SUCCESS"), h.events())
		assert.Equal(t, breaker.Open, c.Breaker().State())
		m.exec(context.Background(), c, 1)
		assert.Equal(t, evs("SHORT_CIRCUITED", "FALLBACK_SUCCESS"), h.events())

		// The next trial is held in run: nobody else gets through.
		h.clock.Advance(tripAfterThree.SleepWindow + time.Millisecond)
		failing = false
		trial := goCall(func() (string, error) { return m.exec(context.Background(), c, 0) })
		g.arrived(t)
		assert.Equal(t, breaker.HalfOpen, c.Breaker().State())
		assert.False(t, c.Breaker().AllowRequest())
		v, err := m.exec(context.Background(), c, 1)
		require.NoError(t, err)
		assert.Equal(t, "anonymous", v)
		assert.Equal(t, evs("SHORT_CIRCUITED", "FALLBACK_SUCCESS"), h.events())

		g.release()
		res := awaitCall(t, trial)
		require.NoError(t, res.err)
		assert.Equal(t, "fine", res.v)
		assert.Equal(t, evs("SUCCESS"), h.events())
		assert.Equal(t, breaker.Closed, c.Breaker().State())
		assert.False(t, c.Breaker().IsOpen())

		// The failures that opened it were reset with the health stream;
		// the trial, published after the reset as in Hystrix, counts.
		for range 3 {
			v, err := m.exec(context.Background(), c, 1)
			require.NoError(t, err)
			assert.Equal(t, "fine", v)
			h.completion()
		}
		h.clock.Advance(snapshotInterval(h.reg, "GetUser"))
		assert.Equal(t, ms.HealthCounts{Total: 4}, c.Metrics().HealthCounts())
		assert.False(t, c.Breaker().IsOpen())
	})
}

// A half-open trial that times out, is rejected or is cancelled re-opens
// the breaker; one that ends in a bad request frees the trial for the next
// caller. The breaker is never left half-open with nothing in flight.
func TestHalfOpenTrialOutcomes(t *testing.T) {
	cases := []struct {
		name string
		// trial runs the trial through m and returns the state after it.
		trial func(t *testing.T, h *harness, m execMode, c *Command[int, string], g *gate) breaker.State
		want  breaker.State
	}{
		{"timeout", func(t *testing.T, h *harness, m execMode, c *Command[int, string], g *gate) breaker.State {
			call := goCall(func() (string, error) { return m.exec(context.Background(), c, 0) })
			g.arrived(t)
			h.clock.Advance(DefaultTimeout)
			res := awaitCall(t, call)
			assert.ErrorIs(t, res.err, ErrTimeout)
			assert.Equal(t, evs("TIMEOUT", "FALLBACK_MISSING"), h.events())
			return c.Breaker().State()
		}, breaker.Open},
		{"cancelled", func(t *testing.T, h *harness, m execMode, c *Command[int, string], g *gate) breaker.State {
			ctx, cancel := context.WithCancel(context.Background())
			call := goCall(func() (string, error) { return m.exec(ctx, c, 0) })
			g.arrived(t)
			cancel()
			res := awaitCall(t, call)
			assert.ErrorIs(t, res.err, context.Canceled)
			assert.Equal(t, evs("CANCELLED"), h.events())
			return c.Breaker().State()
		}, breaker.Open},
		{"panic", func(t *testing.T, h *harness, m execMode, c *Command[int, string], g *gate) breaker.State {
			_, err := m.exec(context.Background(), c, 9)
			var pe *PanicError
			assert.ErrorAs(t, err, &pe)
			assert.Equal(t, evs("FAILURE", "FALLBACK_MISSING"), h.events())
			return c.Breaker().State()
		}, breaker.Open},
		{"bad request", func(t *testing.T, h *harness, m execMode, c *Command[int, string], g *gate) breaker.State {
			_, err := m.exec(context.Background(), c, -1)
			assert.True(t, IsBadRequest(err))
			assert.Equal(t, evs("BAD_REQUEST"), h.events())
			assert.True(t, c.Breaker().AllowRequest(), "the next caller may try")
			return c.Breaker().State()
		}, breaker.HalfOpen},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			forEachModeAndIsolation(t, func(t *testing.T, h *harness, m execMode, iso Isolation) {
				g := newGate()
				defer g.release()
				failing := true
				c := New("GetUser", func(ctx context.Context, id int) (string, error) {
					switch {
					case id == 0:
						return "", g.wait(ctx, true)
					case id == 9:
						panic("trial panicked")
					case id < 0:
						return "", BadRequest(errors.New("negative id"))
					case failing:
						return "", errBoom
					}
					return "fine", nil
				}, WithRegistry(h.reg), WithConfig(Config{Isolation: iso, Breaker: tripAfterThree}))
				h.openBreaker(func() { m.exec(context.Background(), c, 1) }, 3, "GetUser")
				h.clock.Advance(tripAfterThree.SleepWindow + time.Millisecond)
				assert.Equal(t, tc.want, tc.trial(t, h, m, c, g))
				if tc.want == breaker.Open {
					assert.False(t, c.Breaker().AllowRequest(), "a new sleep window started")
				}
				failing = false
				h.clock.Advance(tripAfterThree.SleepWindow + time.Millisecond)
				v, err := m.exec(context.Background(), c, 1)
				require.NoError(t, err)
				assert.Equal(t, "fine", v)
				assert.Equal(t, evs("SUCCESS"), h.events())
				assert.Equal(t, breaker.Closed, c.Breaker().State())
				h.assertReleased("GetUser")
			})
		})
	}
}

// A half-open trial rejected by the execution semaphore re-opens the
// breaker (Hystrix 1.5.13 left it half-open for ever).
func TestHalfOpenTrialRejectedBySemaphoreReopens(t *testing.T) {
	forEachMode(t, func(t *testing.T, h *harness, m execMode) {
		g := newGate()
		defer g.release()
		failing := true
		c := New("GetUser", func(ctx context.Context, id int) (string, error) {
			if id == 0 {
				return "held", g.wait(ctx, true)
			}
			if failing {
				return "", errBoom
			}
			return "fine", nil
		}, WithRegistry(h.reg), WithConfig(Config{
			Isolation: SemaphoreIsolation, MaxConcurrentRequests: 1, Timeout: -1,
			Breaker: breaker.Config{RequestVolumeThreshold: 3, ErrorThresholdPercentage: 50, SleepWindow: 5 * time.Second, ForceClosed: true},
		}))
		// Hold the only permit while the breaker, forced closed, still counts.
		holder := goCall(func() (string, error) { return c.Execute(context.Background(), 0) })
		g.arrived(t)
		for range 3 {
			_, err := m.exec(context.Background(), c, 1)
			assert.ErrorIs(t, err, ErrSemaphoreRejected)
			h.completion()
		}
		h.clock.Advance(snapshotInterval(h.reg, "GetUser"))
		require.NoError(t, h.reg.Configure("GetUser", Config{
			Isolation: SemaphoreIsolation, MaxConcurrentRequests: 1, Timeout: -1, Breaker: tripAfterThree,
		}))
		require.Equal(t, breaker.Open, c.Breaker().State())
		h.clock.Advance(tripAfterThree.SleepWindow + time.Millisecond)
		_, err := m.exec(context.Background(), c, 1)
		assertCommandError(t, err, "GetUser", SemaphoreRejectedFailure, ErrSemaphoreRejected, ErrFallbackMissing)
		assert.Equal(t, evs("SEMAPHORE_REJECTED", "FALLBACK_MISSING"), h.events())
		assert.Equal(t, breaker.Open, c.Breaker().State(), "the rejected trial re-opened the breaker")
		g.release()
		awaitCall(t, holder)
		h.completion()
	})
}

// Breaker tests 2, 3 and 9 through commands: the breaker trips on the
// error percentage of enough requests, and only then.
func TestCircuitTripsOnErrorPercentageAndVolume(t *testing.T) {
	cases := []struct {
		name              string
		volume, threshold int
		outcomes          string // s: success, f: failure
		open              bool
	}{
		{"TestTripCircuitOnFailuresAboveThreshold", 1, 40, "sfsfsfff", true},
		{"TestCircuitDoesNotTripOnFailuresBelowThreshold", 1, 40, "sfsfssfs", false},
		{"TestLowVolumeDoesNotTripCircuit", 5, 50, "ffff", false},
		{"TestTripCircuit", 1, 40, "ssssffff", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			c := New("GetUser", func(ctx context.Context, id int) (string, error) {
				if id == 'f' {
					return "", errBoom
				}
				return "fine", nil
			}, WithRegistry(h.reg), WithConfig(Config{Breaker: breaker.Config{
				RequestVolumeThreshold: tc.volume, ErrorThresholdPercentage: tc.threshold, SleepWindow: time.Hour,
			}})).WithFallback(fallbackName)
			for _, o := range tc.outcomes {
				c.Execute(context.Background(), int(o))
				h.completion()
			}
			h.clock.Advance(snapshotInterval(h.reg, "GetUser"))
			assert.Equal(t, tc.open, c.Breaker().IsOpen())
		})
	}
}

// Breaker tests 4 and 5, and rejections: timeouts and pool rejections are
// health errors and trip the breaker too.
func TestTripCircuitOnTimeoutsAndRejections(t *testing.T) {
	t.Run("timeouts", func(t *testing.T) {
		h := newHarness(t)
		g := newGate()
		defer g.release()
		c := New("GetUser", func(ctx context.Context, id int) (string, error) { return "", g.wait(ctx, true) }, WithRegistry(h.reg), WithConfig(Config{Breaker: tripAfterThree})).WithFallback(fallbackName)
		h.openBreaker(func() {
			call := goCall(func() (string, error) { return c.Execute(context.Background(), 1) })
			g.arrived(t)
			h.clock.Advance(DefaultTimeout)
			awaitCall(t, call)
		}, 3, "GetUser")
	})
	t.Run("rejections", func(t *testing.T) {
		h := newHarness(t)
		require.NoError(t, h.reg.ConfigurePool("GetUser", PoolConfig{CoreSize: 1}))
		g := newGate()
		defer g.release()
		c := New("GetUser", func(ctx context.Context, id int) (string, error) { return "", g.wait(ctx, true) }, WithRegistry(h.reg), WithConfig(Config{Timeout: -1, Breaker: breaker.Config{
			RequestVolumeThreshold: 3, ErrorThresholdPercentage: 50, SleepWindow: time.Hour,
		}})).WithFallback(fallbackName)
		holder := goCall(func() (string, error) { return c.Execute(context.Background(), 0) })
		g.arrived(t)
		h.openBreaker(func() {
			v, err := c.Execute(context.Background(), 1)
			require.NoError(t, err)
			assert.Equal(t, "anonymous", v)
		}, 3, "GetUser")
		g.release()
		awaitCall(t, holder)
		h.completion()
	})
}

// A caller the half-open breaker short-circuits, and who leaves while
// its fallback runs, never held a trial: its leaving must not re-open the
// breaker under the trial still in flight (a short-circuit needs no
// report, breaker's reporting contract), whose success then closes it.
func TestShortCircuitedCallerLeavingInFallbackLeavesTrialAlone(t *testing.T) {
	h := newHarness(t)
	failing := true
	c := New("GetUser", func(ctx context.Context, id int) (string, error) {
		if failing {
			return "", errBoom
		}
		return "ok", nil
	}, WithRegistry(h.reg), WithConfig(Config{Isolation: SemaphoreIsolation, Breaker: tripAfterThree}))
	var cancel context.CancelFunc
	c = c.WithFallback(func(ctx context.Context, id int, err error) (string, error) {
		if errors.Is(err, ErrShortCircuited) && cancel != nil {
			cancel() // the caller leaves while its fallback runs
		}
		return "anonymous", nil
	})
	h.openBreaker(func() { _, _ = c.Execute(context.Background(), 1) }, 3, "GetUser")
	h.clock.Advance(tripAfterThree.SleepWindow + 1)
	b := c.Breaker()
	require.True(t, b.AttemptExecution(), "the trial, still in flight")
	require.Equal(t, breaker.HalfOpen, b.State())

	ctx, cf := context.WithCancel(context.Background())
	cancel = cf
	_, err := c.Execute(ctx, 1)
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, evs("SHORT_CIRCUITED", "CANCELLED"), h.events())
	assert.Equal(t, breaker.HalfOpen, b.State(), "a short-circuited caller held no trial")

	b.MarkSuccess() // the trial succeeds
	assert.Equal(t, breaker.Closed, b.State())
}

// Slow-call tripping turned on by Configure on a key that exists
// already trips the breaker: the key's metrics count the slow calls of
// the Breaker.SlowCallDuration in force, as they do for a key made with
// it, rather than never counting any (or counting by the old duration).
func TestConfigureSlowCallDurationTripsOnSlowCalls(t *testing.T) {
	for _, made := range []time.Duration{0, time.Second} {
		t.Run(made.String(), func(t *testing.T) {
			h := newHarness(t)
			c := New("Slow", func(ctx context.Context, id int) (string, error) {
				h.clock.Advance(200 * time.Millisecond)
				return "ok", nil
			}, WithRegistry(h.reg), WithConfig(Config{Isolation: SemaphoreIsolation, Timeout: -1,
				Breaker: breaker.Config{SlowCallDuration: made}}))
			require.NoError(t, h.reg.ConfigureFunc("Slow", func(cfg *Config) {
				cfg.Breaker.SlowCallDuration = 100 * time.Millisecond
				cfg.Breaker.SlowCallRatePercentage = 50
				cfg.Breaker.RequestVolumeThreshold = 3
			}))
			for range 4 {
				_, err := c.Execute(context.Background(), 1)
				require.NoError(t, err)
				h.completion()
			}
			h.clock.Advance(snapshotInterval(h.reg, "Slow"))
			hc := c.Metrics().HealthCounts()
			assert.Equal(t, int64(4), hc.Total)
			assert.Equal(t, int64(4), hc.Slow, "every call took 200ms, over the 100ms configured")
			assert.Equal(t, breaker.Open, c.Breaker().State())
		})
	}
}

// A key first used after its registry closed gets a breaker that is
// closed too, as Registry.Close promises for every key: it no longer
// trips, and keeps no health subscription behind.
func TestKeyMadeAfterRegistryCloseDoesNotTrip(t *testing.T) {
	h := newHarness(t)
	h.reg.Close()
	c := New("Late", failRun, WithRegistry(h.reg),
		WithConfig(Config{Isolation: SemaphoreIsolation, Breaker: tripAfterThree})).WithFallback(fallbackName)
	for range 3 {
		_, err := c.Execute(context.Background(), 1)
		assert.NoError(t, err)
		h.completion()
	}
	h.clock.Advance(snapshotInterval(h.reg, "Late"))
	assert.Equal(t, breaker.Closed, c.Breaker().State(), "the breakers of a closed registry no longer trip")
	assert.Zero(t, h.clock.Pending(), "no health timer left behind")
}

// halfOpenHedged returns the command "Tail" of h, in isolation iso, that
// hedges 50ms after its first attempt and whose breaker, opened by an
// execution through m that failed, has slept its window: its next two
// executions are its two half-open trials, and they run run.
func halfOpenHedged(t *testing.T, h *harness, iso Isolation, m execMode, run func(context.Context, int) (string, error)) *Command[int, string] {
	t.Helper()
	var failing atomic.Bool
	failing.Store(true)
	c := New("Tail", func(ctx context.Context, id int) (string, error) {
		if failing.Load() {
			return "", errBoom
		}
		return run(ctx, id)
	}, WithRegistry(h.reg), WithConfig(Config{
		Isolation: iso,
		Timeout:   -1,
		Hedge:     HedgeConfig{MaxHedges: 1, Delay: 50 * time.Millisecond},
		Breaker:   breaker.Config{RequestVolumeThreshold: 1, SleepWindow: 5 * time.Second, HalfOpenTrials: 2},
	})).WithFallback(fallbackName)
	h.openBreaker(func() { _, _ = m.exec(context.Background(), c, 1) }, 1, "Tail")
	h.clock.Advance(5*time.Second + 1)
	failing.Store(false)
	return c
}

// A hedged call whose hedge wins a half-open breaker's trials: the loser,
// cancelled by the race and not by its caller, says nothing of the
// dependency. It gives its trial back rather than fail it, which re-opened
// the breaker the winner's success had reported to; the next successful
// trial closes the breaker. A hedged trial whose caller leaves is still a
// cancelled trial, as in Hystrix 1.5.13: the breaker re-opens.
func TestHedgeLoserGivesItsHalfOpenTrialBack(t *testing.T) {
	for _, iso := range bothIsolations {
		for _, m := range execModes {
			t.Run(iso.String()+"/"+m.name, func(t *testing.T) {
				h := newHarness(t)
				var calls atomic.Int32
				hung := make(chan struct{})
				defer close(hung)
				c := halfOpenHedged(t, h, iso, m, func(ctx context.Context, id int) (string, error) {
					if calls.Add(1) == 1 {
						select { // the first attempt hangs until the race cancels it
						case <-ctx.Done():
							return "", ctx.Err()
						case <-hung:
							return "", errBoom
						}
					}
					return "hedge", nil
				})
				call := goCall(func() (string, error) { return m.exec(context.Background(), c, 1) })
				waitFor(t, "the first run", func() bool { return calls.Load() == 1 })
				h.stepUntil("the hedge", func() bool { return calls.Load() == 2 })
				res := awaitCall(t, call)
				require.NoError(t, res.err)
				assert.Equal(t, "hedge", res.v)
				got := [][]string{h.events(), h.events()}
				assert.ElementsMatch(t, [][]string{evs("SUCCESS", "HEDGED"), evs("CANCELLED")}, got)
				assert.Equal(t, breaker.HalfOpen, c.Breaker().State(), "the race's loser does not fail the trial")

				v, err := m.exec(context.Background(), c, 1)
				require.NoError(t, err)
				assert.Equal(t, "hedge", v)
				assert.Equal(t, evs("SUCCESS"), h.events())
				assert.Equal(t, breaker.Closed, c.Breaker().State(), "two trials succeeded")
			})
			t.Run(iso.String()+"/"+m.name+"/caller leaves", func(t *testing.T) {
				h := newHarness(t)
				var calls atomic.Int32
				c := halfOpenHedged(t, h, iso, m, func(ctx context.Context, id int) (string, error) {
					calls.Add(1)
					<-ctx.Done() // every attempt hangs until cancelled
					return "", ctx.Err()
				})
				ctx, cancel := context.WithCancel(context.Background())
				call := goCall(func() (string, error) { return m.exec(ctx, c, 1) })
				waitFor(t, "the first run", func() bool { return calls.Load() == 1 })
				h.stepUntil("the hedge's run", func() bool { return calls.Load() == 2 })
				cancel()
				res := awaitCall(t, call)
				require.Error(t, res.err)
				h.completion()
				h.completion()
				assert.Equal(t, breaker.Open, c.Breaker().State(), "the caller left its trials")
			})
		}
	}
}

// An execution the breaker let through while it was Closed, which ends in
// a bad request while the breaker is HALF_OPEN with its one trial out,
// held no trial: it must not give one back, or a second trial runs
// beside the first.
func TestBadRequestOfNoTrialGivesNoTrialBack(t *testing.T) {
	forEachModeAndIsolation(t, func(t *testing.T, h *harness, m execMode, iso Isolation) {
		old, trial := newGate(), newGate()
		defer old.release()
		defer trial.release()
		c := New("GetUser", func(ctx context.Context, id int) (string, error) {
			switch id {
			case 0:
				if err := old.wait(ctx, true); err != nil {
					return "", err
				}
				return "", BadRequest(errors.New("bad id"))
			case 2:
				return "fine", trial.wait(ctx, true)
			case 3:
				return "fine", nil
			}
			return "", errBoom
		}, WithRegistry(h.reg), WithConfig(Config{Isolation: iso, Breaker: tripAfterThree, Timeout: -1}))

		// Let through while Closed, it runs until the breaker is half open.
		before := goCall(func() (string, error) { return m.exec(context.Background(), c, 0) })
		old.arrived(t)
		h.openBreaker(func() { m.exec(context.Background(), c, 1) }, 3, "GetUser")
		h.clock.Advance(tripAfterThree.SleepWindow + time.Millisecond)

		first := goCall(func() (string, error) { return m.exec(context.Background(), c, 2) })
		trial.arrived(t)
		require.Equal(t, breaker.HalfOpen, c.Breaker().State())

		old.release()
		res := awaitCall(t, before)
		require.True(t, IsBadRequest(res.err), "%v", res.err)
		assert.Equal(t, evs("BAD_REQUEST"), h.events())

		assert.False(t, c.Breaker().AllowRequest(), "the one trial is still out")
		_, err := m.exec(context.Background(), c, 3)
		assert.ErrorIs(t, err, ErrShortCircuited, "a second trial ran beside the first")
		h.completion()

		trial.release()
		res = awaitCall(t, first)
		require.NoError(t, res.err)
		assert.Equal(t, evs("SUCCESS"), h.events())
		assert.Equal(t, breaker.Closed, c.Breaker().State())
		h.noMoreCompletions()
	})
}
