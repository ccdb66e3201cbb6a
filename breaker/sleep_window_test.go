package breaker_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/breaker"
)

// growingConfig is Hystrix's test config with a sleep window that
// doubles, from 200ms, up to 1s.
var growingConfig = func() breaker.Config {
	cfg := hystrixTestConfig
	cfg.MaxSleepWindow = time.Second
	return cfg
}()

// failTrial waits out b's sleep window, which must be window, checking
// that it refuses until strictly after it, and fails the trial it then
// admits.
func failTrial(t *testing.T, b *breaker.Breaker, clk clockAdvancer, window time.Duration) {
	t.Helper()
	require.Equal(t, breaker.Open, b.State())
	require.Equal(t, window, b.SleepWindow())
	clk.Advance(window)
	require.False(t, b.AttemptExecution(), "open until strictly after its %v window", window)
	clk.Advance(time.Nanosecond)
	require.True(t, b.AttemptExecution(), "a trial after the %v window", window)
	b.MarkNonSuccess()
}

func TestSleepWindowGrowsWhileTrialsFail(t *testing.T) {
	b, h, clk := newBreaker(t, growingConfig)
	assert.Equal(t, 200*time.Millisecond, b.SleepWindow(), "closed: the window a trip would start")
	h.emit(health(4, 4, 0))
	for _, window := range []time.Duration{200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond, time.Second, time.Second} {
		failTrial(t, b, clk, window)
	}
	assert.Equal(t, time.Second, b.SleepWindow(), "no longer than MaxSleepWindow")

	clk.Advance(time.Second + time.Nanosecond)
	require.True(t, b.AttemptExecution())
	b.MarkSuccess()
	require.Equal(t, breaker.Closed, b.State())
	assert.Equal(t, 200*time.Millisecond, b.SleepWindow(), "a close starts the next trip at SleepWindow")
	h.emit(health(4, 4, 0))
	failTrial(t, b, clk, 200*time.Millisecond)
	assert.Equal(t, 400*time.Millisecond, b.SleepWindow())
}

func TestSleepWindowWithoutMaxStaysAsConfigured(t *testing.T) {
	b, h, clk := newBreaker(t, hystrixTestConfig)
	h.emit(health(4, 4, 0))
	for range 4 {
		failTrial(t, b, clk, 200*time.Millisecond)
	}
}

func TestSleepWindowMultiplier(t *testing.T) {
	cfg := hystrixTestConfig
	cfg.SleepWindow = 100 * time.Millisecond
	cfg.MaxSleepWindow = 300 * time.Millisecond
	cfg.SleepWindowMultiplier = 1.5
	b, h, clk := newBreaker(t, cfg)
	h.emit(health(4, 4, 0))
	for _, window := range []time.Duration{100 * time.Millisecond, 150 * time.Millisecond, 225 * time.Millisecond, 300 * time.Millisecond} {
		failTrial(t, b, clk, window)
	}
	assert.Equal(t, 300*time.Millisecond, b.SleepWindow())
}

func TestSleepWindowGrowsWhenATrialIsOverdue(t *testing.T) {
	b, h, clk := newBreaker(t, growingConfig)
	loseTrial(t, b, h, clk)
	require.Equal(t, breaker.Open, b.State(), "the trial never reported")
	assert.Equal(t, 400*time.Millisecond, b.SleepWindow(), "an overdue trial is a failed one")
	assertRetryAfter(t, b, 400*time.Millisecond-1, true, "the longer window, from when the trial's bound ran out")
}

func TestSleepWindowGrownAppliesToRetryAfter(t *testing.T) {
	b, h, clk := newBreaker(t, growingConfig)
	h.emit(health(4, 4, 0))
	failTrial(t, b, clk, 200*time.Millisecond)
	assertRetryAfter(t, b, 400*time.Millisecond, true, "opened again: the grown window")
	clk.Advance(300 * time.Millisecond)
	assertRetryAfter(t, b, 100*time.Millisecond, true, "the rest of it")
}

func TestSetConfigRecomputesTheGrownSleepWindow(t *testing.T) {
	b, h, clk := newBreaker(t, growingConfig)
	h.emit(health(4, 4, 0))
	failTrial(t, b, clk, 200*time.Millisecond)
	failTrial(t, b, clk, 400*time.Millisecond)
	require.Equal(t, 800*time.Millisecond, b.SleepWindow())

	cfg := growingConfig
	cfg.SleepWindow = 50 * time.Millisecond
	cfg.SleepWindowMultiplier = 3
	b.SetConfig(cfg)
	assert.Equal(t, 450*time.Millisecond, b.SleepWindow(), "two re-openings of the new config: 50ms × 3 × 3")
	clk.Advance(450 * time.Millisecond)
	assert.False(t, b.AttemptExecution())
	clk.Advance(time.Nanosecond)
	assert.True(t, b.AttemptExecution(), "the new window applies to the current opening")
	b.MarkNonSuccess()
	assert.Equal(t, time.Second, b.SleepWindow(), "50ms × 3³ is over MaxSleepWindow")

	cfg.MaxSleepWindow = 0
	cfg.SleepWindowMultiplier = 0
	b.SetConfig(cfg)
	assert.Equal(t, 50*time.Millisecond, b.SleepWindow(), "without MaxSleepWindow every window is SleepWindow")
}

func TestDisablingResetsTheGrownSleepWindow(t *testing.T) {
	b, h, clk := newBreaker(t, growingConfig)
	h.emit(health(4, 4, 0))
	failTrial(t, b, clk, 200*time.Millisecond)
	cfg := growingConfig
	cfg.Disabled = true
	b.SetConfig(cfg)
	require.Equal(t, breaker.Closed, b.State())
	b.SetConfig(growingConfig)
	h.emit(health(4, 4, 0))
	assert.Equal(t, 200*time.Millisecond, b.SleepWindow(), "a trip after the close that disabling made")
}

func TestTransitionsCarryTheSleepWindow(t *testing.T) {
	b, h, clk := newBreaker(t, growingConfig)
	done := collect(t, b)
	h.emit(health(4, 4, 0))
	failTrial(t, b, clk, 200*time.Millisecond)
	clk.Advance(400*time.Millisecond + time.Nanosecond)
	require.True(t, b.AttemptExecution())
	b.MarkSuccess()

	var got []string
	var windows []time.Duration
	for _, tr := range done() {
		got = append(got, tr.String())
		windows = append(windows, tr.SleepWindow)
	}
	assert.Equal(t, []string{"CLOSED -> OPEN", "OPEN -> HALF_OPEN", "HALF_OPEN -> OPEN", "OPEN -> HALF_OPEN", "HALF_OPEN -> CLOSED"}, got)
	assert.Equal(t, []time.Duration{200 * time.Millisecond, 0, 400 * time.Millisecond, 0, 0}, windows)
}

// shares returns a WithRand function that draws the given shares of the
// jitter, in order, and then 0.
func shares(s ...float64) func() float64 {
	return func() float64 {
		if len(s) == 0 {
			return 0
		}
		v := s[0]
		s = s[1:]
		return v
	}
}

func TestSleepWindowJitter(t *testing.T) {
	cfg := hystrixTestConfig
	cfg.SleepWindowJitter = 100 * time.Millisecond
	b, h, clk := newBreaker(t, cfg, breaker.WithRand(shares(0.5, 0.25, 0.9)))
	assert.Equal(t, 200*time.Millisecond, b.SleepWindow(), "closed: the window before its jitter")
	h.emit(health(4, 4, 0))
	failTrial(t, b, clk, 250*time.Millisecond)
	failTrial(t, b, clk, 225*time.Millisecond)
	assertRetryAfter(t, b, 290*time.Millisecond, true, "the window with its jitter")

	cfg.SleepWindowJitter = 200 * time.Millisecond
	b.SetConfig(cfg)
	assert.Equal(t, 380*time.Millisecond, b.SleepWindow(), "the share drawn at the opening, of the new jitter")
}

func TestSleepWindowJitterOfAGrowingWindow(t *testing.T) {
	cfg := growingConfig
	cfg.SleepWindowJitter = 100 * time.Millisecond
	b, h, clk := newBreaker(t, cfg, breaker.WithRand(shares(0.1, 0.2, 0.3)))
	done := collect(t, b)
	h.emit(health(4, 4, 0))
	failTrial(t, b, clk, 210*time.Millisecond)
	failTrial(t, b, clk, 420*time.Millisecond)
	assert.Equal(t, 830*time.Millisecond, b.SleepWindow(), "grown from the window without its jitter")
	var windows []time.Duration
	for _, tr := range done() {
		if tr.To == breaker.Open {
			windows = append(windows, tr.SleepWindow)
		}
	}
	assert.Equal(t, []time.Duration{210 * time.Millisecond, 420 * time.Millisecond, 830 * time.Millisecond}, windows)
}

// Without SleepWindowJitter the breaker draws nothing.
func TestSleepWindowWithoutJitterDrawsNothing(t *testing.T) {
	b, h, clk := newBreaker(t, hystrixTestConfig, breaker.WithRand(func() float64 {
		t.Error("drew a jitter")
		return 0.5
	}))
	h.emit(health(4, 4, 0))
	failTrial(t, b, clk, 200*time.Millisecond)
}

// SleepWindow, like State and RetryAfter, tells the window of a breaker
// whose trial ran out of its bound, without another call first: the
// re-opening dates from the bound whoever notices it.
func TestSleepWindowOfAnOverdueTrialNeedsNoOtherCall(t *testing.T) {
	b, h, clk := newBreaker(t, growingConfig)
	loseTrial(t, b, h, clk)
	assert.Equal(t, 400*time.Millisecond, b.SleepWindow(), "the overdue trial re-opened it with a grown window")
	assert.Equal(t, breaker.Open, b.State())
}
