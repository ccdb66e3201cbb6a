package breaker_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/breaker"
	"github.com/rxhystrix/rxhystrix/metricsstream"
)

// invalidBreakerFields is the fuzz targets' own statement of Validate's
// rules: the fields of c that hold impossible values.
func invalidBreakerFields(c breaker.Config) []string {
	var bad []string
	if c.RequestVolumeThreshold < 0 {
		bad = append(bad, "RequestVolumeThreshold")
	}
	if c.ErrorThresholdPercentage < 0 || c.ErrorThresholdPercentage > 100 {
		bad = append(bad, "ErrorThresholdPercentage")
	}
	if c.SleepWindow < 0 {
		bad = append(bad, "SleepWindow")
	}
	if c.HalfOpenTrials < 0 || c.HalfOpenTrials > breaker.MaxHalfOpenTrials {
		bad = append(bad, "HalfOpenTrials")
	}
	if c.SlowCallDuration < 0 {
		bad = append(bad, "SlowCallDuration")
	}
	if c.SlowCallRatePercentage < 0 || c.SlowCallRatePercentage > 100 ||
		(c.SlowCallRatePercentage != 0 && c.SlowCallDuration == 0) {
		bad = append(bad, "SlowCallRatePercentage")
	}
	sleep := c.SleepWindow
	if sleep == 0 {
		sleep = breaker.DefaultSleepWindow
	}
	if c.MaxSleepWindow < 0 || (c.MaxSleepWindow > 0 && c.MaxSleepWindow < sleep) {
		bad = append(bad, "MaxSleepWindow")
	}
	if m := c.SleepWindowMultiplier; m != 0 && (math.IsNaN(m) || m <= 1 || math.IsInf(m, 1) || c.MaxSleepWindow == 0) {
		bad = append(bad, "SleepWindowMultiplier")
	}
	if c.SleepWindowJitter < 0 {
		bad = append(bad, "SleepWindowJitter")
	}
	if c.ConsecutiveFailures < 0 {
		bad = append(bad, "ConsecutiveFailures")
	}
	throttles := c.ThrottleSuccessPercentage != 0
	if c.ThrottleSuccessPercentage < 0 || c.ThrottleSuccessPercentage > 100 {
		bad = append(bad, "ThrottleSuccessPercentage")
	}
	if a := c.ThrottleAggression; a != 0 && (math.IsNaN(a) || a < 0 || math.IsInf(a, 1) || !throttles) {
		bad = append(bad, "ThrottleAggression")
	}
	if m := c.MaxThrottlePercentage; m < 0 || m > 100 || (m != 0 && !throttles) {
		bad = append(bad, "MaxThrottlePercentage")
	}
	return bad
}

// FuzzConfig feeds arbitrary configurations to Validate, New and SetConfig.
// An invalid one must be refused with an error (or, from New and
// SetConfig, a panic carrying that error) that names every bad field; a
// valid one must make a breaker that follows Hystrix's state machine:
// closed until a snapshot over the thresholds, open for the whole sleep
// window however long, one trial after it, (with a growing window, a
// trial that fails and a longer window), closed by the trial's success.
func FuzzConfig(f *testing.F) {
	f.Add(false, false, false, 0, 0, int64(0), 0, int64(0), int64(0), 0, int64(0), 0.0, int64(0), 0, 0.0, 0, 0)
	f.Add(false, false, false, 1, 40, int64(200*time.Millisecond), 0, int64(0), int64(0), 0, int64(0), 0.0, int64(0), 0, 0.0, 0, 0)
	f.Add(false, false, false, 20, 50, int64(5*time.Second), 3, int64(-1), int64(time.Second), 80, int64(0), 0.0, int64(0), 0, 0.0, 0, 0)
	f.Add(true, true, true, 1, 100, int64(time.Millisecond), breaker.MaxHalfOpenTrials, int64(-1), int64(1), 1, int64(0), 0.0, int64(0), 0, 0.0, 0, 0)
	f.Add(false, true, false, 5, 1, int64(time.Hour), 1, int64(time.Minute), int64(0), 0, int64(0), 0.0, int64(0), 0, 0.0, 0, 0)
	f.Add(false, false, true, 5, 1, int64(1), 1, int64(1), int64(0), 0, int64(0), 0.0, int64(0), 0, 0.0, 0, 0)
	f.Add(false, false, false, -1, 101, int64(-1), -1, int64(0), int64(-1), 101, int64(0), 0.0, int64(0), 0, 0.0, 0, 0)
	f.Add(false, false, false, 0, 0, int64(0), breaker.MaxHalfOpenTrials+1, int64(0), int64(0), 50, int64(0), 0.0, int64(0), 0, 0.0, 0, 0)
	f.Add(false, false, false, math.MaxInt, math.MinInt, int64(math.MaxInt64), math.MaxInt, int64(math.MinInt64), int64(math.MaxInt64), 100, int64(0), 0.0, int64(0), 0, 0.0, 0, 0)
	f.Add(false, false, false, 1, 1, int64(math.MaxInt64), 1, int64(0), int64(0), 0, int64(0), 0.0, int64(0), 0, 0.0, 0, 0)
	f.Add(false, false, false, 1, 1, int64(time.Second), 2, int64(math.MaxInt64), int64(0), 0, int64(0), 0.0, int64(0), 0, 0.0, 0, 0)
	f.Add(false, false, false, 1, 1, int64(time.Second), 1, int64(0), int64(0), 0, int64(time.Minute), 0.0, int64(0), 0, 0.0, 0, 0)
	f.Add(false, false, false, 1, 1, int64(time.Second), 1, int64(0), int64(0), 0, int64(math.MaxInt64), 1e300, int64(0), 0, 0.0, 0, 0)
	f.Add(false, false, false, 1, 1, int64(0), 1, int64(0), int64(0), 0, int64(time.Second), 1.5, int64(0), 0, 0.0, 0, 0)
	f.Add(false, false, false, 1, 1, int64(time.Second), 1, int64(0), int64(0), 0, int64(0), 2.0, int64(0), 0, 0.0, 0, 0)
	f.Add(false, false, false, 1, 1, int64(time.Second), 1, int64(0), int64(0), 0, int64(time.Hour), math.NaN(), int64(0), 0, 0.0, 0, 0)
	f.Add(false, false, false, 1, 1, int64(time.Second), 1, int64(0), int64(0), 0, int64(time.Minute), 0.0, int64(time.Second), 0, 0.0, 0, 0)
	f.Add(false, false, false, 1, 1, int64(math.MaxInt64), 1, int64(0), int64(0), 0, int64(0), 0.0, int64(math.MaxInt64), 0, 0.0, 0, 0)
	f.Add(false, false, false, 1, 1, int64(time.Second), 1, int64(0), int64(0), 0, int64(0), 0.0, int64(-1), 0, 0.0, 0, 0)
	f.Add(false, false, false, 10, 100, int64(time.Second), 1, int64(0), int64(0), 0, int64(0), 0.0, int64(0), 50, 0.0, 0, 0)
	f.Add(false, false, false, 1, 60, int64(time.Second), 1, int64(0), int64(0), 0, int64(0), 0.0, int64(0), 95, 2.5, 100, 0)
	f.Add(false, true, false, 1, 60, int64(time.Second), 1, int64(0), int64(0), 0, int64(0), 0.0, int64(0), 100, 1e-300, 1, 0)
	f.Add(false, false, false, 1, 60, int64(time.Second), 1, int64(0), int64(0), 0, int64(0), 0.0, int64(0), 101, math.Inf(1), 101, 0)
	f.Add(false, false, false, 1, 60, int64(time.Second), 1, int64(0), int64(0), 0, int64(0), 0.0, int64(0), 0, 1.0, 80, 0)
	f.Add(false, false, false, 20, 50, int64(time.Second), 1, int64(0), int64(0), 0, int64(0), 0.0, int64(0), 0, 0.0, 0, 5)
	f.Add(false, false, false, 20, 50, int64(time.Second), 2, int64(0), int64(0), 0, int64(0), 0.0, int64(0), 50, 0.0, 0, 1)
	f.Add(false, false, false, 20, 50, int64(time.Second), 1, int64(0), int64(0), 0, int64(0), 0.0, int64(0), 0, 0.0, 0, -3)

	f.Fuzz(func(t *testing.T, disabled, forceOpen, forceClosed bool, volume, errPct int, sleep int64,
		trials int, trialTimeout, slowDuration int64, slowPct int, maxSleep int64, multiplier float64, jitter int64,
		throttleSuccess int, aggression float64, maxThrottle int, run int) {
		cfg := breaker.Config{
			Disabled:                 disabled,
			RequestVolumeThreshold:   volume,
			ErrorThresholdPercentage: errPct,
			SleepWindow:              time.Duration(sleep),
			ForceOpen:                forceOpen,
			ForceClosed:              forceClosed,
			HalfOpenTrials:           trials,
			HalfOpenTrialTimeout:     time.Duration(trialTimeout),
			SlowCallDuration:         time.Duration(slowDuration),
			SlowCallRatePercentage:   slowPct,
			MaxSleepWindow:           time.Duration(maxSleep),
			SleepWindowMultiplier:    multiplier,
			SleepWindowJitter:        time.Duration(jitter),

			ThrottleSuccessPercentage: throttleSuccess,
			ThrottleAggression:        aggression,
			MaxThrottlePercentage:     maxThrottle,
			ConsecutiveFailures:       run,
		}
		bad := invalidBreakerFields(cfg)
		err := cfg.Validate()
		if len(bad) > 0 {
			checkConfigRefused(t, cfg, err, bad)
			return
		}
		require.NoError(t, err, "a valid config")
		checkStateMachine(t, cfg)
	})
}

// checkConfigRefused checks the error of an invalid cfg and that New and
// SetConfig refuse it too.
func checkConfigRefused(t *testing.T, cfg breaker.Config, err error, bad []string) {
	t.Helper()
	require.Error(t, err, "fields %v are invalid", bad)
	assert.ErrorIs(t, err, breaker.ErrInvalidConfig)
	var ce *breaker.ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Contains(t, bad, ce.Field, "the first ConfigError names a bad field")
	for _, field := range bad {
		assert.Contains(t, err.Error(), "Config."+field)
	}
	refusal := func(f func()) (v any) {
		defer func() { v = recover() }()
		f()
		return nil
	}
	v := refusal(func() { breaker.New(cfg, newFakeHealth()).Close() })
	perr, ok := v.(error)
	require.True(t, ok, "New(%+v) panics with an error, got %v", cfg, v)
	assert.ErrorIs(t, perr, breaker.ErrInvalidConfig)

	b, _, _ := newBreaker(t, breaker.Config{})
	v = refusal(func() { b.SetConfig(cfg) })
	perr, ok = v.(error)
	require.True(t, ok, "SetConfig(%+v) panics with an error, got %v", cfg, v)
	assert.ErrorIs(t, perr, breaker.ErrInvalidConfig)
	assert.Equal(t, breaker.DefaultRequestVolumeThreshold, b.Config().RequestVolumeThreshold, "a refused SetConfig keeps the old config")
}

// longestWalk bounds how much clock time the state walk waits through: a
// sleep window or trial timeout longer than this is checked to hold for
// this long.
const longestWalk = 24 * time.Hour

// checkStateMachine walks a breaker made with the valid cfg through a trip,
// its sleep window, a trial and a close.
func checkStateMachine(t *testing.T, cfg breaker.Config) {
	t.Helper()
	b, h, clk := newBreaker(t, cfg, breaker.WithRand(func() float64 { return 0.5 }))
	got := b.Config()
	assert.Equal(t, orDefault(cfg.RequestVolumeThreshold, breaker.DefaultRequestVolumeThreshold), got.RequestVolumeThreshold)
	assert.Equal(t, orDefault(cfg.ErrorThresholdPercentage, breaker.DefaultErrorThresholdPercentage), got.ErrorThresholdPercentage)
	assert.Equal(t, orDefault(cfg.HalfOpenTrials, breaker.DefaultHalfOpenTrials), got.HalfOpenTrials)
	sleep := cfg.SleepWindow
	if sleep == 0 {
		sleep = breaker.DefaultSleepWindow
	}
	assert.Equal(t, sleep, got.SleepWindow)
	// Each window has half its jitter, unless it is too long to add it to.
	jittered := func(w time.Duration) time.Duration {
		if j := got.SleepWindowJitter / 2; w+j > w {
			return w + j
		}
		return w
	}

	// Start the walk an hour after the breaker's epoch, as a breaker that
	// has lived a while.
	clk.Advance(time.Hour)
	volume, threshold := int64(got.RequestVolumeThreshold), got.ErrorThresholdPercentage
	// Below the volume, or below the error percentage: no trip.
	under := []metricsstream.HealthCounts{
		{Total: volume - 1, Errors: volume - 1, ErrorPercentage: 100},
		{Total: volume, Errors: volume / 100 * int64(threshold-1), ErrorPercentage: threshold - 1},
	}
	for _, hc := range under {
		h.emit(hc)
		want := got.ThrottleProbability(hc)
		if cfg.Disabled {
			want = 0
		}
		assert.Equal(t, want, b.ThrottleProbability(), "throttling after %+v", hc)
	}
	require.Equal(t, breaker.Closed, b.State(), "snapshots under the thresholds")
	// At both thresholds: a trip, unless disabled.
	h.emit(metricsstream.HealthCounts{Total: volume, Errors: volume, ErrorPercentage: threshold})

	switch {
	case cfg.Disabled:
		assert.Equal(t, breaker.Closed, b.State(), "a disabled breaker never trips")
		assert.True(t, b.AttemptExecution())
		assert.False(t, b.IsOpen())
		return
	case cfg.ForceOpen:
		assert.True(t, b.IsOpen())
		assert.False(t, b.AttemptExecution(), "forced open rejects")
		return
	case cfg.ForceClosed:
		assert.False(t, b.IsOpen())
		assert.True(t, b.AttemptExecution(), "forced closed allows")
		assert.Equal(t, breaker.Open, b.State(), "the state machine runs under ForceClosed")
		return
	}
	require.Equal(t, breaker.Open, b.State(), "a snapshot at both thresholds trips")
	require.False(t, b.AttemptExecution(), "open at the start of the sleep window")

	// The whole sleep window rejects, however long it is.
	base := sleep
	sleep = jittered(sleep)
	require.Equal(t, sleep, b.SleepWindow())
	if sleep > longestWalk {
		clk.Advance(longestWalk)
		assert.False(t, b.AttemptExecution(), "sleep window %v rejects after %v", sleep, longestWalk)
		assert.False(t, b.AllowRequest(), "sleep window %v rejects after %v", sleep, longestWalk)
		assert.Equal(t, breaker.Open, b.State())
		return
	}
	clk.Advance(sleep)
	require.False(t, b.AttemptExecution(), "open until strictly after the sleep window")
	clk.Advance(time.Nanosecond)
	if got.MaxSleepWindow != 0 {
		// A failed trial: a window SleepWindowMultiplier times longer,
		// up to MaxSleepWindow.
		require.True(t, b.AttemptExecution(), "a trial after the sleep window")
		b.MarkNonSuccess()
		longer := got.MaxSleepWindow
		if f := float64(base) * got.SleepWindowMultiplier; f < float64(longer) {
			longer = time.Duration(f)
		}
		longer = jittered(longer)
		require.Equal(t, longer, b.SleepWindow(), "the window after a failed trial")
		if longer > longestWalk {
			clk.Advance(longestWalk)
			assert.False(t, b.AttemptExecution(), "sleep window %v rejects after %v", longer, longestWalk)
			return
		}
		clk.Advance(longer)
		require.False(t, b.AttemptExecution(), "open until strictly after the longer window")
		clk.Advance(time.Nanosecond)
	}
	trials := got.HalfOpenTrials
	for i := range trials {
		require.True(t, b.AttemptExecution(), "trial %d of %d after the sleep window", i+1, trials)
	}
	require.Equal(t, breaker.HalfOpen, b.State())
	require.False(t, b.AttemptExecution(), "no trial beyond HalfOpenTrials")
	for range trials {
		b.MarkSuccess()
	}
	assert.Equal(t, breaker.Closed, b.State(), "the trials' successes close the breaker")
	assert.True(t, b.AttemptExecution())
	assert.Equal(t, 1, h.resetCount(), "closing resets the health stream")

	// A run of ConsecutiveFailures failures trips it again, one fewer
	// does not.
	if n := got.ConsecutiveFailures; n > 0 && n <= 1000 {
		b.MarkSuccess()
		for i := range n - 1 {
			require.True(t, b.AttemptExecution(), "failure %d of a run of %d", i+1, n)
			b.MarkNonSuccess()
		}
		require.Equal(t, breaker.Closed, b.State(), "a run one short of %d", n)
		require.True(t, b.AttemptExecution())
		b.MarkNonSuccess()
		assert.Equal(t, breaker.Open, b.State(), "a run of %d", n)
	}
}

func orDefault(v, d int) int {
	if v == 0 {
		return d
	}
	return v
}
