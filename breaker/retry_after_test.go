package breaker_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/breaker"
)

func TestRetryAfterIsTheRestOfTheSleepWindow(t *testing.T) {
	b, h, clk := newBreaker(t, hystrixTestConfig)
	assertRetryAfter(t, b, 0, true, "closed: at once")

	h.emit(health(4, 4, 0))
	require.Equal(t, breaker.Open, b.State())
	assertRetryAfter(t, b, 200*time.Millisecond, true, "just opened: the whole sleep window")
	clk.Advance(150 * time.Millisecond)
	assertRetryAfter(t, b, 50*time.Millisecond, true, "the rest of it")
	clk.Advance(100 * time.Millisecond)
	assertRetryAfter(t, b, 0, true, "the window is over: the next request is a trial")

	require.True(t, b.AttemptExecution())
	require.Equal(t, breaker.HalfOpen, b.State())
	assertRetryAfter(t, b, 0, false, "the trial is out: its result decides")

	b.MarkNonSuccess()
	require.Equal(t, breaker.Open, b.State())
	assertRetryAfter(t, b, 200*time.Millisecond, true, "opened again: a new window")
}

func TestRetryAfterWithTrialsLeftAndWhenForced(t *testing.T) {
	cfg := hystrixTestConfig
	cfg.HalfOpenTrials = 2
	b, h, clk := newBreaker(t, cfg)
	h.emit(health(4, 4, 0))
	clk.Advance(afterSleepWindow)
	require.True(t, b.AttemptExecution())
	assertRetryAfter(t, b, 0, true, "half-open with a trial still to admit")

	cfg.ForceOpen = true
	b.SetConfig(cfg)
	assertRetryAfter(t, b, 0, false, "forced open: until the config changes")

	cfg.ForceOpen, cfg.ForceClosed = false, true
	b.SetConfig(cfg)
	assertRetryAfter(t, b, 0, true, "forced closed: at once")
}

func TestRetryAfterOfATrialThatNeverReports(t *testing.T) {
	b, h, clk := newBreaker(t, hystrixTestConfig)
	loseTrial(t, b, h, clk)
	assertRetryAfter(t, b, 200*time.Millisecond-1, true, "the overdue trial opened it again as its bound ran out")
}

// loseTrial trips b, a breaker whose sleep window and HalfOpenTrialTimeout
// are Hystrix's test config's 200ms, and lets the trial it admits after
// the window run out of its bound without reporting, 1ns ago.
func loseTrial(t *testing.T, b *breaker.Breaker, h *fakeHealth, clk clockAdvancer) {
	t.Helper()
	h.emit(health(4, 4, 0))
	clk.Advance(afterSleepWindow)
	require.True(t, b.AttemptExecution())
	clk.Advance(200*time.Millisecond + 1)
}

func assertRetryAfter(t *testing.T, b *breaker.Breaker, want time.Duration, wantOK bool, msg string) {
	t.Helper()
	got, ok := b.RetryAfter()
	assert.Equal(t, wantOK, ok, msg)
	assert.Equal(t, want, got, msg)
}

// At the very end of the sleep window AttemptExecution still refuses (it
// needs strictly more than SleepWindow), so RetryAfter must not say 0.
func TestRetryAfterAtTheEndOfTheSleepWindowIsNotZero(t *testing.T) {
	b, h, clk := newBreaker(t, hystrixTestConfig)
	h.emit(health(4, 4, 0))
	clk.Advance(200 * time.Millisecond)
	d, ok := b.RetryAfter()
	require.False(t, b.AllowRequest(), "open until strictly after the window")
	assert.True(t, ok)
	assert.Positive(t, d, "a caller told to retry at once would be refused")
	clk.Advance(d)
	assert.True(t, b.AttemptExecution(), "admitted once RetryAfter has passed")
}
