package breaker_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/breaker"
	"github.com/rxhystrix/rxhystrix/metricsstream"
	"github.com/rxhystrix/rxhystrix/observable"
)

func TestSleepWindowMustBeExceeded(t *testing.T) {
	b, _, clk := tripped(t)
	clk.Advance(200 * time.Millisecond)
	assert.False(t, b.AllowRequest(), "exactly the sleep window: still rejected, as Hystrix's now > opened+window")
	assert.False(t, b.AttemptExecution())
	clk.Advance(time.Nanosecond)
	assert.True(t, b.AllowRequest())
	assert.True(t, b.AttemptExecution())
}

// Each way a half-open trial can end, with the report the command layer
// makes for it (see the package doc).
func TestHalfOpenTrialOutcomes(t *testing.T) {
	cases := []struct {
		outcome string
		report  func(*breaker.Breaker)
		want    breaker.State
		next    bool // whether the next caller may try at once
	}{
		{"success", (*breaker.Breaker).MarkSuccess, breaker.Closed, true},
		{"failure", (*breaker.Breaker).MarkNonSuccess, breaker.Open, false},
		{"timeout", (*breaker.Breaker).MarkNonSuccess, breaker.Open, false},
		{"semaphore rejected", (*breaker.Breaker).MarkNonSuccess, breaker.Open, false},
		{"pool rejected", (*breaker.Breaker).MarkNonSuccess, breaker.Open, false},
		{"cancelled", (*breaker.Breaker).MarkNonSuccess, breaker.Open, false},
		{"panicked", (*breaker.Breaker).MarkNonSuccess, breaker.Open, false},
		{"bad request", (*breaker.Breaker).MarkIgnored, breaker.HalfOpen, true},
	}
	for _, c := range cases {
		t.Run(c.outcome, func(t *testing.T) {
			b, _, clk := tripped(t)
			clk.Advance(afterSleepWindow)
			require.True(t, b.AttemptExecution())
			c.report(b)
			assert.Equal(t, c.want, b.State())
			assert.Equal(t, c.next, b.AttemptExecution(), "next caller")
		})
	}
}

func TestReportsOutsideHalfOpenDoNothing(t *testing.T) {
	b, h, clk := newBreaker(t, hystrixTestConfig)
	b.MarkNonSuccess()
	b.MarkIgnored()
	assert.Equal(t, breaker.Closed, b.State(), "a closed breaker counts through its health stream only")

	h.emit(health(0, 4, 0))
	require.Equal(t, breaker.Open, b.State())
	b.MarkSuccess() // e.g. a slow request that started before the trip
	b.MarkIgnored()
	assert.Equal(t, breaker.Open, b.State(), "a success while open does not close it")
	assert.Equal(t, 0, h.resetCount())
	clk.Advance(150 * time.Millisecond)
	b.MarkNonSuccess()
	clk.Advance(51 * time.Millisecond)
	assert.True(t, b.AttemptExecution(), "a failure while open does not restart the sleep window")
}

// Hystrix 1.5.13: snapshots only ever open a CLOSED breaker.
func TestHealthSnapshotsWhileOpenOrHalfOpen(t *testing.T) {
	b, h, clk := tripped(t)

	clk.Advance(100 * time.Millisecond)
	h.emit(health(0, 10, 0))
	h.emit(health(0, 0, 0))
	assert.Equal(t, breaker.Open, b.State(), "snapshots neither re-trip nor close an open breaker")
	clk.Advance(100*time.Millisecond + time.Nanosecond)
	require.True(t, b.AttemptExecution(), "the sleep window was not restarted by the snapshots")

	h.emit(health(0, 10, 0))
	h.emit(health(10, 0, 0))
	assert.Equal(t, breaker.HalfOpen, b.State(), "snapshots leave a half-open breaker to its trial")
	assert.Equal(t, 0, h.resetCount())
}

func TestSnapshotFromOldSubscriptionAfterCloseIsIgnored(t *testing.T) {
	b, h, clk := tripped(t)
	// The old stream still delivers a bad snapshot while the breaker resets
	// it (its subscription ends only after ResetStream).
	h.onReset = func() { h.emit(health(0, 10, 0)) }
	clk.Advance(afterSleepWindow)
	require.True(t, b.AttemptExecution())
	b.MarkSuccess()
	assert.Equal(t, breaker.Closed, b.State())
	assert.Equal(t, 1, h.live())

	h.onReset = nil
	h.emit(health(0, 10, 0))
	assert.Equal(t, breaker.Open, b.State(), "the new subscription trips it")
}

func TestHealthStreamEmittingAtSubscription(t *testing.T) {
	// Hystrix's streams emit the current (empty) window when subscribed;
	// a source that does so synchronously must not deadlock the breaker.
	h := newFakeHealth()
	h.onSubscribe = func(o observable.Observer[metricsstream.HealthCounts]) { o.OnNext(health(0, 30, 0)) }
	b := breaker.New(breaker.Config{}, h)
	defer b.Close()
	assert.Equal(t, breaker.Open, b.State())
}

func TestHalfOpenTrials(t *testing.T) {
	cfg := hystrixTestConfig
	cfg.HalfOpenTrials = 3
	b, h, clk := newBreaker(t, cfg)
	h.emit(health(0, 4, 0))
	clk.Advance(afterSleepWindow)

	for i := range 3 {
		assert.True(t, b.AttemptExecution(), "trial %d", i)
	}
	assert.False(t, b.AttemptExecution(), "only 3 trials")
	assert.False(t, b.AllowRequest())

	b.MarkSuccess()
	b.MarkSuccess()
	assert.Equal(t, breaker.HalfOpen, b.State(), "2 of 3 trials succeeded")
	assert.False(t, b.AttemptExecution(), "the third trial is still in flight")
	b.MarkSuccess()
	assert.Equal(t, breaker.Closed, b.State(), "all 3 succeeded")
	assert.Equal(t, 1, h.resetCount())

	h.emit(health(0, 4, 0))
	clk.Advance(afterSleepWindow)
	require.True(t, b.AttemptExecution())
	require.True(t, b.AttemptExecution())
	b.MarkSuccess()
	b.MarkNonSuccess()
	assert.Equal(t, breaker.Open, b.State(), "one failed trial re-opens")
	assert.False(t, b.AttemptExecution())
}

func TestHalfOpenTrialsAdmittedAsTrafficComes(t *testing.T) {
	cfg := hystrixTestConfig
	cfg.HalfOpenTrials = 2
	b, h, clk := newBreaker(t, cfg)
	h.emit(health(0, 4, 0))
	clk.Advance(afterSleepWindow)

	require.True(t, b.AttemptExecution())
	b.MarkSuccess()
	assert.Equal(t, breaker.HalfOpen, b.State())
	assert.True(t, b.AllowRequest(), "a second trial is still to come")
	require.True(t, b.AttemptExecution())
	b.MarkSuccess()
	assert.Equal(t, breaker.Closed, b.State())
}

func TestHalfOpenTrialTimeout(t *testing.T) {
	cfg := hystrixTestConfig
	cfg.HalfOpenTrialTimeout = time.Second
	b, h, clk := newBreaker(t, cfg)
	finish := collect(t, b)
	h.emit(health(0, 4, 0))
	clk.Advance(afterSleepWindow)
	require.True(t, b.AttemptExecution())
	trialStart := epoch.Add(afterSleepWindow)

	clk.Advance(time.Second)
	assert.Equal(t, breaker.HalfOpen, b.State(), "at the bound the trial is not yet overdue")
	clk.Advance(300 * time.Millisecond)
	h.emit(health(0, 0, 0)) // a snapshot notices the overdue trial
	assert.Equal(t, breaker.Open, b.State())
	assert.True(t, b.AllowRequest(), "the new sleep window started when the trial became overdue")

	b.MarkSuccess() // the lost trial reports after all: too late
	assert.Equal(t, breaker.Open, b.State())

	got := finish()
	require.Len(t, got, 3)
	assert.Equal(t, breaker.HalfOpen, got[2].From)
	assert.Equal(t, breaker.Open, got[2].To)
	assert.Equal(t, trialStart.Add(time.Second), got[2].Time, "re-opened as of the bound")
}

// Only a trial that has not reported can be overdue: a breaker that waits
// for traffic to admit its next trial stays HalfOpen however long it
// waits.
func TestReportedTrialIsNeverOverdue(t *testing.T) {
	cfg := hystrixTestConfig
	cfg.HalfOpenTrials = 2
	cfg.HalfOpenTrialTimeout = time.Second
	b, h, clk := newBreaker(t, cfg)
	h.emit(health(0, 4, 0))
	clk.Advance(afterSleepWindow)
	require.True(t, b.AttemptExecution())
	b.MarkSuccess()
	clk.Advance(time.Hour)
	h.emit(health(0, 0, 0))
	assert.Equal(t, breaker.HalfOpen, b.State())
	require.True(t, b.AttemptExecution(), "the second trial")
	b.MarkSuccess()
	assert.Equal(t, breaker.Closed, b.State())
}

// A report that arrives after the trial became overdue, before anything
// noticed, finds the breaker re-opened as of the bound: it neither closes
// it nor moves the new sleep window.
func TestReportAfterTrialOverdue(t *testing.T) {
	for _, report := range []func(*breaker.Breaker){
		(*breaker.Breaker).MarkSuccess,
		(*breaker.Breaker).MarkNonSuccess,
		(*breaker.Breaker).MarkIgnored,
	} {
		b, _, clk := tripped(t)
		clk.Advance(afterSleepWindow)
		require.True(t, b.AttemptExecution())
		clk.Advance(200*time.Millisecond + 150*time.Millisecond) // overdue by 150ms
		report(b)
		clk.Advance(50 * time.Millisecond)
		assert.False(t, b.AllowRequest(), "the sleep window started when the trial became overdue, exactly 200ms ago")
		clk.Advance(time.Nanosecond)
		assert.True(t, b.AllowRequest(), "the sleep window started when the trial became overdue, just over 200ms ago")
		assert.Equal(t, breaker.Open, b.State())
	}
}

func TestHalfOpenTrialTimeoutDisabled(t *testing.T) {
	cfg := hystrixTestConfig
	cfg.HalfOpenTrialTimeout = -1 // Hystrix: wait for the trial forever
	b, h, clk := newBreaker(t, cfg)
	h.emit(health(0, 4, 0))
	clk.Advance(afterSleepWindow)
	require.True(t, b.AttemptExecution())
	clk.Advance(time.Hour)
	h.emit(health(0, 0, 0))
	assert.Equal(t, breaker.HalfOpen, b.State())
	assert.False(t, b.AttemptExecution())
	b.MarkSuccess()
	assert.Equal(t, breaker.Closed, b.State())
}

func TestMarkIgnoredGivesTheTrialBack(t *testing.T) {
	b, _, clk := tripped(t)
	clk.Advance(afterSleepWindow)
	require.True(t, b.AttemptExecution())
	b.MarkIgnored()
	b.MarkIgnored() // a second report has nothing to give back
	assert.Equal(t, breaker.HalfOpen, b.State())
	assert.True(t, b.AttemptExecution(), "the next caller is the trial")
	assert.False(t, b.AttemptExecution(), "still one trial at a time")
	b.MarkSuccess()
	assert.Equal(t, breaker.Closed, b.State())
}

// AttemptTrial says which requests hold a half-open trial: only those it
// lets through an open breaker past its sleep window. A request let
// through Closed, or through a breaker forced closed, holds none.
func TestAttemptTrialSaysWhoHoldsATrial(t *testing.T) {
	b, h, clk := newBreaker(t, hystrixTestConfig)
	admitted, trial := b.AttemptTrial()
	assert.True(t, admitted, "closed")
	assert.False(t, trial, "closed")

	h.emit(health(4, 4, 0))
	admitted, _ = b.AttemptTrial()
	assert.False(t, admitted, "open, in its sleep window")
	clk.Advance(afterSleepWindow)
	admitted, trial = b.AttemptTrial()
	assert.True(t, admitted, "past the sleep window")
	assert.True(t, trial, "the trial")
	admitted, trial = b.AttemptTrial()
	assert.False(t, admitted, "half open, its one trial out")
	assert.False(t, trial)

	cfg := hystrixTestConfig
	cfg.ForceClosed = true
	b.SetConfig(cfg)
	admitted, trial = b.AttemptTrial()
	assert.True(t, admitted, "forced closed")
	assert.False(t, trial, "forced closed: no trial taken")
}

func TestForceOpen(t *testing.T) {
	cfg := hystrixTestConfig
	cfg.ForceOpen = true
	cfg.ForceClosed = true // ForceOpen wins
	b, h, _ := newBreaker(t, cfg)
	assert.False(t, b.AttemptExecution())
	assert.False(t, b.AllowRequest())
	assert.True(t, b.IsOpen())
	assert.Equal(t, breaker.Closed, b.State(), "the state machine underneath is closed")

	cfg.ForceOpen = false
	b.SetConfig(cfg)
	assert.True(t, b.AttemptExecution(), "ForceClosed applies once ForceOpen is off")
	h.emit(health(0, 10, 0))
	assert.True(t, b.AttemptExecution())
	assert.False(t, b.IsOpen())
}

func TestForceClosedKeepsTheStateMachineRunning(t *testing.T) {
	cfg := hystrixTestConfig
	cfg.ForceClosed = true
	b, h, clk := newBreaker(t, cfg)
	h.emit(health(0, 10, 0))
	assert.Equal(t, breaker.Open, b.State(), "it trips underneath, as in Hystrix")
	assert.True(t, b.AttemptExecution())
	assert.True(t, b.AllowRequest())
	assert.False(t, b.IsOpen())

	cfg.ForceClosed = false
	b.SetConfig(cfg)
	assert.True(t, b.IsOpen())
	assert.False(t, b.AttemptExecution())
	clk.Advance(afterSleepWindow)
	assert.True(t, b.AttemptExecution())
}

func TestDisabled(t *testing.T) {
	cfg := hystrixTestConfig
	cfg.Disabled = true
	cfg.ForceOpen = true // Disabled wins
	b, h, _ := newBreaker(t, cfg)
	h.emit(health(0, 10, 0))
	assert.Equal(t, breaker.Closed, b.State())
	assert.True(t, b.AttemptExecution())
	assert.True(t, b.AllowRequest())
	assert.False(t, b.IsOpen())
	b.MarkNonSuccess()
	assert.Equal(t, breaker.Closed, b.State())

	cfg.Disabled = false
	cfg.ForceOpen = false
	b.SetConfig(cfg)
	h.emit(health(0, 10, 0))
	assert.Equal(t, breaker.Open, b.State(), "enabled again, it trips")

	cfg.Disabled = true
	b.SetConfig(cfg)
	assert.Equal(t, breaker.Closed, b.State(), "disabling closes it")
	assert.Equal(t, 1, h.resetCount(), "and resets the health stream, as every close does")
	assert.Equal(t, 1, h.live())
}

func TestSetConfigThresholds(t *testing.T) {
	b, h, _ := newBreaker(t, hystrixTestConfig)
	h.emit(health(6, 4, 0)) // 40%
	require.Equal(t, breaker.Open, b.State())

	// New thresholds apply to the next snapshot.
	b2, h2, _ := newBreaker(t, hystrixTestConfig)
	cfg := hystrixTestConfig
	cfg.ErrorThresholdPercentage = 41
	b2.SetConfig(cfg)
	h2.emit(health(6, 4, 0))
	assert.Equal(t, breaker.Closed, b2.State(), "40%% < 41%%")
	cfg.RequestVolumeThreshold = 11
	cfg.ErrorThresholdPercentage = 10
	b2.SetConfig(cfg)
	h2.emit(health(6, 4, 0))
	assert.Equal(t, breaker.Closed, b2.State(), "volume 10 < 11")
	assert.Equal(t, cfg.RequestVolumeThreshold, b2.Config().RequestVolumeThreshold)
}

func TestSetConfigSleepWindowAppliesToTheCurrentWindow(t *testing.T) {
	b, _, clk := tripped(t)
	clk.Advance(100 * time.Millisecond)
	cfg := hystrixTestConfig
	cfg.SleepWindow = 50 * time.Millisecond
	b.SetConfig(cfg)
	assert.True(t, b.AttemptExecution(), "opened 100ms ago, window now 50ms")

	b.MarkNonSuccess()
	cfg.SleepWindow = time.Minute
	b.SetConfig(cfg)
	clk.Advance(59 * time.Second)
	assert.False(t, b.AttemptExecution())
	clk.Advance(time.Second + time.Nanosecond)
	assert.True(t, b.AttemptExecution())
}

func TestSetConfigHalfOpenTrials(t *testing.T) {
	b, _, clk := tripped(t)
	clk.Advance(afterSleepWindow)
	require.True(t, b.AttemptExecution())
	cfg := hystrixTestConfig
	cfg.HalfOpenTrials = 2
	b.SetConfig(cfg)
	assert.True(t, b.AttemptExecution(), "a second trial is admitted at once")
	b.MarkSuccess()
	assert.Equal(t, breaker.HalfOpen, b.State())
	cfg.HalfOpenTrials = 1
	b.SetConfig(cfg)
	b.MarkSuccess()
	assert.Equal(t, breaker.Closed, b.State())
}

// A HalfOpen breaker whose successful trials already reach a lowered
// HalfOpenTrials has no report left to close it: SetConfig closes it, or
// it would refuse every request for good.
func TestSetConfigFewerHalfOpenTrialsThanSucceededCloses(t *testing.T) {
	cfg := hystrixTestConfig
	cfg.HalfOpenTrials = 2
	b, h, clk := newBreaker(t, cfg)
	h.emit(health(4, 4, 0))
	clk.Advance(afterSleepWindow)
	require.True(t, b.AttemptExecution())
	b.MarkSuccess()
	require.Equal(t, breaker.HalfOpen, b.State(), "one of two trials succeeded")

	cfg.HalfOpenTrials = 1
	b.SetConfig(cfg)
	assert.Equal(t, breaker.Closed, b.State())
	assert.True(t, b.AttemptExecution())
}

func TestSetConfigInvalidPanics(t *testing.T) {
	b, _, _ := newBreaker(t, hystrixTestConfig)
	assert.PanicsWithError(t, "breaker: Config.SleepWindow is -1s: must not be negative", func() {
		b.SetConfig(breaker.Config{SleepWindow: -time.Second})
	})
	assert.Equal(t, hystrixTestConfig.SleepWindow, b.Config().SleepWindow, "the old config stays")
}

func TestSlowCallTripping(t *testing.T) {
	cfg := hystrixTestConfig
	cfg.RequestVolumeThreshold = 10
	cfg.SlowCallDuration = 300 * time.Millisecond
	cfg.SlowCallRatePercentage = 60
	b, h, _ := newBreaker(t, cfg)

	h.emit(metricsstream.HealthCounts{Total: 10, Slow: 5})
	assert.Equal(t, breaker.Closed, b.State(), "50%% slow < 60%%")
	h.emit(metricsstream.HealthCounts{Total: 9, Slow: 9})
	assert.Equal(t, breaker.Closed, b.State(), "under the volume threshold")
	h.emit(metricsstream.HealthCounts{Total: 10, Slow: 6})
	assert.Equal(t, breaker.Open, b.State(), "60%% slow")

	// Off by default: slow counts alone never trip.
	b2, h2, _ := newBreaker(t, hystrixTestConfig)
	h2.emit(metricsstream.HealthCounts{Total: 10, Slow: 10})
	assert.Equal(t, breaker.Closed, b2.State())

	// SlowCallRatePercentage zero means 100.
	cfg.SlowCallRatePercentage = 0
	b3, h3, _ := newBreaker(t, cfg)
	assert.Equal(t, 100, b3.Config().SlowCallRatePercentage)
	h3.emit(metricsstream.HealthCounts{Total: 10, Slow: 9})
	assert.Equal(t, breaker.Closed, b3.State())
	h3.emit(metricsstream.HealthCounts{Total: 10, Slow: 10})
	assert.Equal(t, breaker.Open, b3.State())
}

func TestDefaults(t *testing.T) {
	b, h, clk := newBreaker(t, breaker.Config{})
	got := b.Config()
	assert.Equal(t, 20, got.RequestVolumeThreshold)
	assert.Equal(t, 50, got.ErrorThresholdPercentage)
	assert.Equal(t, 5*time.Second, got.SleepWindow)
	assert.Equal(t, 1, got.HalfOpenTrials)
	assert.Equal(t, 5*time.Second, got.HalfOpenTrialTimeout)
	assert.Zero(t, got.SlowCallRatePercentage, "slow-call tripping is off")

	h.emit(metricsstream.HealthCounts{Total: 19, Errors: 19, ErrorPercentage: 100})
	assert.Equal(t, breaker.Closed, b.State())
	h.emit(metricsstream.HealthCounts{Total: 20, Errors: 9, ErrorPercentage: 45})
	assert.Equal(t, breaker.Closed, b.State())
	h.emit(metricsstream.HealthCounts{Total: 20, Errors: 10, ErrorPercentage: 50})
	assert.Equal(t, breaker.Open, b.State())
	clk.Advance(5 * time.Second)
	assert.False(t, b.AttemptExecution())
	clk.Advance(time.Millisecond)
	assert.True(t, b.AttemptExecution())
}

func TestClose(t *testing.T) {
	b, h, _ := newBreaker(t, hystrixTestConfig)
	require.Equal(t, 1, h.live())
	b.Close()
	b.Close()
	assert.Equal(t, 0, h.live(), "no health subscription is left")

	h.emit(health(0, 10, 0))
	assert.Equal(t, breaker.Closed, b.State(), "a closed-for-good breaker no longer trips")

	// Its other methods keep working, and closing the circuit does not
	// subscribe again.
	b.SetConfig(breaker.Config{ForceOpen: true})
	assert.False(t, b.AttemptExecution())
	b.SetConfig(hystrixTestConfig)
	assert.True(t, b.AttemptExecution())
	assert.Equal(t, 1, h.subscribeCount())
}

func TestCloseWhileHalfOpen(t *testing.T) {
	b, h, clk := tripped(t)
	clk.Advance(afterSleepWindow)
	require.True(t, b.AttemptExecution())
	b.Close()
	b.MarkSuccess()
	assert.Equal(t, breaker.Closed, b.State())
	assert.Equal(t, 0, h.resetCount(), "a closed-for-good breaker leaves its health source alone")
	assert.Equal(t, 0, h.live())
}

func TestNewPanics(t *testing.T) {
	h := newFakeHealth()
	assert.PanicsWithValue(t, "breaker: New with nil health", func() { breaker.New(breaker.Config{}, nil) })
	assert.PanicsWithValue(t, "breaker: New with nil Option", func() { breaker.New(breaker.Config{}, h, nil) })
	assert.PanicsWithValue(t, "breaker: WithClock with nil clock", func() { breaker.WithClock(nil) })
	assert.PanicsWithValue(t, "breaker: WithTransitionBuffer(0): n must be at least 1", func() { breaker.WithTransitionBuffer(0) })
	defer func() {
		err, _ := recover().(error)
		require.Error(t, err)
		assert.ErrorIs(t, err, breaker.ErrInvalidConfig)
		assert.Contains(t, err.Error(), "ErrorThresholdPercentage")
		assert.Equal(t, 0, h.subscribeCount(), "nothing subscribed")
	}()
	breaker.New(breaker.Config{ErrorThresholdPercentage: 150}, h)
}

func TestNoOp(t *testing.T) {
	cb := breaker.NoOp()
	for range 3 {
		cb.MarkNonSuccess()
		assert.True(t, cb.AllowRequest())
		assert.True(t, cb.AttemptExecution())
		assert.False(t, cb.IsOpen())
		cb.MarkSuccess()
	}
	ig, ok := cb.(interface{ MarkIgnored() })
	require.True(t, ok, "NoOp has MarkIgnored as Breaker does")
	ig.MarkIgnored()
	mc, ok := cb.(interface{ MarkCancelled() })
	require.True(t, ok, "NoOp has MarkCancelled as Breaker does")
	mc.MarkCancelled()
	assert.True(t, cb.AttemptExecution())
}

func TestStateString(t *testing.T) {
	assert.Equal(t, "CLOSED", breaker.Closed.String())
	assert.Equal(t, "OPEN", breaker.Open.String())
	assert.Equal(t, "HALF_OPEN", breaker.HalfOpen.String())
	assert.Equal(t, "State(7)", breaker.State(7).String())

	b, h, _ := newBreaker(t, hystrixTestConfig, breaker.WithName("GetUser"))
	assert.Equal(t, "GetUser", b.Name())
	h.emit(health(0, 1, 0))
	assert.Equal(t, "GetUser: OPEN", b.String())
}

// The hot path allocates nothing, whatever the state.
func TestNoAllocations(t *testing.T) {
	b, h, clk := newBreaker(t, hystrixTestConfig)
	calls := func() {
		b.AttemptExecution()
		b.AllowRequest()
		b.IsOpen()
		b.MarkSuccess()
		b.MarkNonSuccess()
		b.State()
	}
	assert.Zero(t, testing.AllocsPerRun(100, calls), "closed")
	h.emit(health(0, 5, 0))
	require.Equal(t, breaker.Open, b.State())
	assert.Zero(t, testing.AllocsPerRun(100, calls), "open, inside the sleep window")
	clk.Advance(afterSleepWindow)
	require.True(t, b.AttemptExecution())
	assert.Zero(t, testing.AllocsPerRun(100, func() {
		b.AttemptExecution()
		b.AllowRequest()
		b.IsOpen()
		b.State()
	}), "half-open with the trial in flight")
}

func TestHealthStreamErrorIsIgnored(t *testing.T) {
	h := &erroringHealth{}
	b := breaker.New(hystrixTestConfig, h)
	defer b.Close()
	assert.Equal(t, breaker.Closed, b.State())
	assert.True(t, b.AttemptExecution())
}

type erroringHealth struct{}

func (erroringHealth) HealthStream() observable.Observable[metricsstream.HealthCounts] {
	return observable.Error[metricsstream.HealthCounts](errors.New("no metrics"))
}
func (erroringHealth) ResetStream() {}

// A trial that overran the HalfOpenTrialTimeout in force re-opened the
// breaker as of that bound, whether or not anybody looked at the breaker
// since: a SetConfig that later lengthens the bound (here through the
// SleepWindow it defaults to) must not bring the lost trial back to life
// and leave the breaker HALF_OPEN, refusing every request for the new,
// longer bound. Reset already settles the overdue trial first.
func TestSetConfigSettlesAnOverdueTrialUnderTheOldBound(t *testing.T) {
	run := func(t *testing.T, look bool) (breaker.State, bool, []breaker.Transition) {
		b, h, clk := newBreaker(t, hystrixTestConfig) // trial timeout = sleep window = 200ms
		finish := collect(t, b)
		h.emit(health(0, 4, 0))
		clk.Advance(afterSleepWindow)
		require.True(t, b.AttemptExecution(), "the trial, which never reports")
		clk.Advance(10 * time.Second)
		if look {
			require.Equal(t, breaker.Open, b.State(), "the trial is overdue")
		}
		cfg := hystrixTestConfig
		cfg.SleepWindow = time.Hour // and with it the trial timeout
		b.SetConfig(cfg)
		state := b.State()
		admitted := b.AttemptExecution()
		return state, admitted, finish()
	}
	lookedState, lookedAdmitted, lookedTransitions := run(t, true)
	state, admitted, transitions := run(t, false)
	assert.Equal(t, lookedState, state, "the state must not depend on whether State was called before SetConfig")
	assert.Equal(t, lookedAdmitted, admitted)
	require.Len(t, transitions, len(lookedTransitions))
	for i := range transitions {
		assert.Equal(t, lookedTransitions[i].To, transitions[i].To)
		assert.Equal(t, lookedTransitions[i].Time, transitions[i].Time)
	}
	assert.Equal(t, breaker.Open, state, "re-opened when the trial overran the 200ms bound")
}
