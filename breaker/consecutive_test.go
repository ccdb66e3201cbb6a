package breaker_test

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/breaker"
)

// runOfThree trips after three executions in a row fail.
var runOfThree = breaker.Config{ConsecutiveFailures: 3, SleepWindow: 200 * time.Millisecond}

// fail reports n admitted executions that did not succeed.
func fail(t *testing.T, b *breaker.Breaker, n int) {
	t.Helper()
	for range n {
		require.True(t, b.AttemptExecution())
		b.MarkNonSuccess()
	}
}

func TestConsecutiveFailuresTripWithoutASnapshot(t *testing.T) {
	b, _, clk := newBreaker(t, runOfThree)
	done := collect(t, b)
	fail(t, b, 2)
	require.Equal(t, breaker.Closed, b.State(), "a run of two")
	fail(t, b, 1)
	require.Equal(t, breaker.Open, b.State(), "the third in a row trips it, with no snapshot and under the volume threshold")
	assert.False(t, b.AttemptExecution())

	clk.Advance(200*time.Millisecond + 1)
	require.True(t, b.AttemptExecution(), "a trial after the sleep window")
	b.MarkSuccess()
	require.Equal(t, breaker.Closed, b.State())
	fail(t, b, 2)
	assert.Equal(t, breaker.Closed, b.State(), "the close starts the run over")

	got := done()
	require.Len(t, got, 3)
	assert.Equal(t, 3, got[0].ConsecutiveFailures, "the trip tells the run that caused it")
	assert.Equal(t, 200*time.Millisecond, got[0].SleepWindow)
	assert.Zero(t, got[1].ConsecutiveFailures, "OPEN -> HALF_OPEN")
	assert.Zero(t, got[2].ConsecutiveFailures, "HALF_OPEN -> CLOSED")
}

func TestConsecutiveFailuresRunEndsOnASuccessOnly(t *testing.T) {
	b, _, _ := newBreaker(t, runOfThree)
	fail(t, b, 2)
	require.True(t, b.AttemptExecution())
	b.MarkSuccess()
	fail(t, b, 2)
	require.Equal(t, breaker.Closed, b.State(), "a success ended the first run")

	require.True(t, b.AttemptExecution())
	b.MarkIgnored()
	require.True(t, b.AttemptExecution())
	b.MarkCancelled()
	require.Equal(t, breaker.Closed, b.State(), "a bad request and a cancellation do not count")
	fail(t, b, 1)
	assert.Equal(t, breaker.Open, b.State(), "nor do they end the run: two, then one more")
}

func TestConsecutiveFailuresOffByDefaultAndWhenDisabled(t *testing.T) {
	for _, cfg := range []breaker.Config{{}, {ConsecutiveFailures: 2, Disabled: true}} {
		b, _, _ := newBreaker(t, cfg)
		fail(t, b, 100)
		assert.Equal(t, breaker.Closed, b.State(), "%+v", cfg)
	}
}

func TestConsecutiveFailuresUnderForceFlags(t *testing.T) {
	cfg := runOfThree
	cfg.ForceClosed = true
	b, _, _ := newBreaker(t, cfg)
	fail(t, b, 3)
	assert.Equal(t, breaker.Open, b.State(), "the state machine runs under ForceClosed")
	assert.True(t, b.AttemptExecution(), "and ForceClosed lets everything through")
}

func TestConsecutiveFailuresSetConfigLive(t *testing.T) {
	b, _, _ := newBreaker(t, breaker.Config{})
	fail(t, b, 5)
	require.Equal(t, breaker.Closed, b.State())
	b.SetConfig(runOfThree)
	fail(t, b, 3)
	assert.Equal(t, breaker.Open, b.State(), "on, live")
}

// A run is neither counted nor ended while ConsecutiveFailures is off or
// the breaker disabled: turning it on again starts a new run, so that the
// failures before cannot join those after the successes between.
func TestConsecutiveFailuresRunStartsOverWhenTurnedOnAgain(t *testing.T) {
	off := map[string]func(breaker.Config) breaker.Config{
		"ConsecutiveFailures 0": func(c breaker.Config) breaker.Config { c.ConsecutiveFailures = 0; return c },
		"Disabled":              func(c breaker.Config) breaker.Config { c.Disabled = true; return c },
	}
	for name, change := range off {
		t.Run(name, func(t *testing.T) {
			b, _, _ := newBreaker(t, runOfThree)
			fail(t, b, 2)
			b.SetConfig(change(runOfThree))
			for range 10 {
				require.True(t, b.AttemptExecution())
				b.MarkSuccess()
			}
			b.SetConfig(runOfThree)
			fail(t, b, 1)
			assert.Equal(t, breaker.Closed, b.State(), "one failure after ten successes is not a run of three")
			fail(t, b, 2)
			assert.Equal(t, breaker.Open, b.State(), "three in a row are")
		})
	}
}

func TestCancelledTrialReopens(t *testing.T) {
	b, _, clk := newBreaker(t, runOfThree)
	fail(t, b, 3)
	clk.Advance(200*time.Millisecond + 1)
	require.True(t, b.AttemptExecution())
	b.MarkCancelled()
	assert.Equal(t, breaker.Open, b.State(), "a cancelled trial is a failed one, as Hystrix 1.5.13's")
}

// However many goroutines fail at once, the breaker trips once, and a
// run that a success ends never trips it.
func TestConsecutiveFailuresConcurrently(t *testing.T) {
	b, _, _ := newBreaker(t, breaker.Config{ConsecutiveFailures: 50})
	done := collect(t, b)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				if b.AttemptExecution() {
					b.MarkNonSuccess()
				}
			}
		})
	}
	wg.Wait()
	assert.Equal(t, breaker.Open, b.State())
	got := done()
	require.Len(t, got, 1, "one trip")
	assert.GreaterOrEqual(t, got[0].ConsecutiveFailures, 50)
}

func TestConsecutiveFailuresValidation(t *testing.T) {
	err := breaker.Config{ConsecutiveFailures: -1}.Validate()
	var ce *breaker.ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "ConsecutiveFailures", ce.Field)
}
