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

// tripAfter trips b, a breaker whose clock has run for d.
func tripAfter(t *testing.T, cfg breaker.Config, d time.Duration) (*breaker.Breaker, func(time.Duration)) {
	t.Helper()
	b, h, clk := newBreaker(t, cfg)
	clk.Advance(d)
	h.emit(metricsstream.HealthCounts{Total: 1, Errors: 1, ErrorPercentage: 100})
	require.Equal(t, breaker.Open, b.State())
	return b, clk.Advance
}

// A sleep window as long as time.Duration allows keeps the breaker open:
// the end of the window must not overflow into the past.
func TestLongestSleepWindowKeepsBreakerOpen(t *testing.T) {
	cfg := breaker.Config{RequestVolumeThreshold: 1, SleepWindow: math.MaxInt64}
	b, advance := tripAfter(t, cfg, time.Second)
	assert.False(t, b.AttemptExecution(), "open right after the trip")
	assert.False(t, b.AllowRequest())
	advance(100 * 365 * 24 * time.Hour)
	assert.False(t, b.AttemptExecution(), "open a century later")
	assert.Equal(t, breaker.Open, b.State())
}

// A trial timeout as long as time.Duration allows never re-opens a
// half-open breaker on its own.
func TestLongestTrialTimeoutKeepsTrialsOut(t *testing.T) {
	cfg := breaker.Config{RequestVolumeThreshold: 1, SleepWindow: time.Second, HalfOpenTrials: 2,
		HalfOpenTrialTimeout: math.MaxInt64}
	b, advance := tripAfter(t, cfg, time.Second)
	advance(time.Second + 1)
	require.True(t, b.AttemptExecution())
	require.True(t, b.AttemptExecution())
	assert.Equal(t, breaker.HalfOpen, b.State(), "both trials out")
	advance(100 * 365 * 24 * time.Hour)
	assert.Equal(t, breaker.HalfOpen, b.State(), "trials out a century later")
	b.MarkSuccess()
	b.MarkSuccess()
	assert.Equal(t, breaker.Closed, b.State())
}
