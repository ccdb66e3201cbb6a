package breaker_test

// The scenarios of Hystrix's HystrixCircuitBreakerTest (1.5.13), driven by
// health snapshots instead of commands: each snapshot is what Hystrix's
// HealthCountsStream would emit after the commands of the original test.

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/breaker"
)

// afterSleepWindow is how far the Hystrix tests sleep to pass the window.
const afterSleepWindow = 200*time.Millisecond + 50*time.Millisecond

// tripped returns a breaker with Hystrix's test config that 4 failures
// after 4 successes have opened.
func tripped(t *testing.T) (*breaker.Breaker, *fakeHealth, clockAdvancer) {
	t.Helper()
	b, h, clk := newBreaker(t, hystrixTestConfig)
	h.emit(health(4, 4, 0))
	require.Equal(t, breaker.Open, b.State(), "precondition: the breaker tripped")
	return b, h, clk
}

type clockAdvancer interface{ Advance(time.Duration) }

func TestTripCircuit(t *testing.T) {
	b, h, _ := newBreaker(t, hystrixTestConfig)
	assert.True(t, b.AllowRequest())
	assert.False(t, b.IsOpen())

	h.emit(health(4, 0, 0))
	assert.True(t, b.AllowRequest(), "4 successes")
	assert.False(t, b.IsOpen(), "4 successes")

	h.emit(health(4, 4, 0))
	assert.False(t, b.AllowRequest(), "4 failures after 4 successes: 50%% >= 40%%")
	assert.False(t, b.AttemptExecution())
	assert.True(t, b.IsOpen())
	assert.Equal(t, breaker.Open, b.State())
}

func TestTripCircuitOnFailuresAboveThreshold(t *testing.T) {
	b, h, _ := newBreaker(t, hystrixTestConfig)
	h.emit(health(4, 4, 0)) // 8 mixed, 4 failures: 50% >= 40%
	assert.False(t, b.AllowRequest())
	assert.True(t, b.IsOpen())
}

func TestCircuitDoesNotTripOnFailuresBelowThreshold(t *testing.T) {
	b, h, _ := newBreaker(t, hystrixTestConfig)
	h.emit(health(5, 3, 0)) // 8 mixed, 3 failures: 37% < 40%
	assert.True(t, b.AllowRequest())
	assert.True(t, b.AttemptExecution())
	assert.False(t, b.IsOpen())
	assert.Equal(t, breaker.Closed, b.State())
}

func TestTripCircuitOnTimeouts(t *testing.T) {
	b, h, _ := newBreaker(t, hystrixTestConfig)
	h.emit(health(0, 0, 4)) // 4 timeouts
	assert.False(t, b.AllowRequest())
	assert.True(t, b.IsOpen())
}

func TestTripCircuitOnTimeoutsAboveThreshold(t *testing.T) {
	b, h, _ := newBreaker(t, hystrixTestConfig)
	h.emit(health(4, 0, 5)) // 9 commands, 5 timeouts: 55%
	assert.False(t, b.AllowRequest())
	assert.True(t, b.IsOpen())
}

func TestSingleTestOnOpenCircuitAfterTimeWindow(t *testing.T) {
	b, _, clk := tripped(t)
	assert.False(t, b.AttemptExecution(), "inside the sleep window")

	clk.Advance(afterSleepWindow)
	assert.True(t, b.IsOpen(), "still open after the window")
	assert.True(t, b.AllowRequest(), "a trial would be admitted")
	assert.True(t, b.AttemptExecution(), "the first attempt after the window is the trial")
	assert.True(t, b.IsOpen(), "half-open counts as open")
	assert.Equal(t, breaker.HalfOpen, b.State())
	assert.False(t, b.AttemptExecution(), "only one trial")
	assert.False(t, b.AllowRequest(), "no trial left to admit")
}

func TestCircuitClosedAfterSuccess(t *testing.T) {
	b, h, clk := tripped(t)
	require.Equal(t, 0, h.resetCount())

	clk.Advance(afterSleepWindow)
	require.True(t, b.AttemptExecution(), "trial admitted")
	assert.False(t, b.AllowRequest(), "requests blocked while the trial is in flight")

	b.MarkSuccess()
	assert.Equal(t, breaker.Closed, b.State())
	assert.False(t, b.IsOpen())
	for range 3 {
		assert.True(t, b.AllowRequest())
		assert.True(t, b.AttemptExecution())
	}
	assert.Equal(t, 1, h.resetCount(), "closing resets the health stream")
	assert.Equal(t, 2, h.subscribeCount(), "and subscribes to it again")
	assert.Equal(t, 1, h.live(), "the old subscription is gone")

	h.emit(health(0, 0, 0)) // the reset stream starts from zero
	assert.False(t, b.IsOpen(), "the failures that tripped it are forgotten")
}

func TestMultipleTimeWindowRetriesBeforeClosingCircuit(t *testing.T) {
	b, _, clk := tripped(t)

	for window := range 2 {
		clk.Advance(afterSleepWindow)
		assert.True(t, b.IsOpen(), "window %d: still open", window)
		require.True(t, b.AttemptExecution(), "window %d: trial admitted", window)
		assert.False(t, b.AllowRequest(), "window %d: others blocked during the trial", window)

		b.MarkNonSuccess() // the trial failed
		assert.Equal(t, breaker.Open, b.State(), "window %d", window)
		for range 3 {
			assert.False(t, b.AllowRequest(), "window %d: a failed trial starts a new sleep window", window)
		}
	}

	clk.Advance(afterSleepWindow)
	assert.True(t, b.IsOpen())
	require.True(t, b.AttemptExecution())
	assert.False(t, b.AllowRequest())
	b.MarkSuccess()
	for range 3 {
		assert.True(t, b.AllowRequest())
	}
	assert.False(t, b.IsOpen())
}

func TestLowVolumeDoesNotTripCircuit(t *testing.T) {
	cfg := hystrixTestConfig
	cfg.RequestVolumeThreshold = 5
	b, h, _ := newBreaker(t, cfg)
	h.emit(health(0, 4, 0)) // 4 failures, all of them errors, volume 4 < 5
	assert.True(t, b.AllowRequest())
	assert.False(t, b.IsOpen())

	h.emit(health(0, 5, 0)) // the volume threshold is inclusive
	assert.True(t, b.IsOpen())
}

// TestUnsubscriptionDoesNotLeaveCircuitStuckHalfOpen: a half-open trial
// that is unsubscribed is reported with MarkNonSuccess by the command
// layer, which re-opens the breaker; after several windows of cancelled
// trials a successful one closes it.
func TestUnsubscriptionDoesNotLeaveCircuitStuckHalfOpen(t *testing.T) {
	b, _, clk := tripped(t)

	for window := range 10 {
		clk.Advance(afterSleepWindow)
		require.True(t, b.AttemptExecution(), "window %d: trial admitted", window)
		b.MarkNonSuccess() // unsubscribed before it finished
		assert.Equal(t, breaker.Open, b.State(), "window %d: not stuck half-open", window)
	}

	clk.Advance(afterSleepWindow)
	require.True(t, b.AttemptExecution())
	b.MarkSuccess()
	assert.Equal(t, breaker.Closed, b.State())
	assert.True(t, b.AllowRequest())
}

// Even a trial nobody reports does not leave it stuck: the trial timeout
// (the sleep window by default) re-opens it.
func TestUnreportedTrialDoesNotLeaveCircuitStuckHalfOpen(t *testing.T) {
	b, _, clk := tripped(t)

	clk.Advance(afterSleepWindow)
	require.True(t, b.AttemptExecution(), "trial admitted and then lost")
	clk.Advance(200 * time.Millisecond)
	assert.Equal(t, breaker.HalfOpen, b.State(), "the trial may still report")

	clk.Advance(time.Nanosecond)
	assert.Equal(t, breaker.Open, b.State(), "the trial is overdue")
	assert.False(t, b.AttemptExecution(), "a new sleep window started when the trial became overdue")

	clk.Advance(afterSleepWindow)
	require.True(t, b.AttemptExecution())
	b.MarkSuccess()
	assert.Equal(t, breaker.Closed, b.State())
}
