package breaker_test

import (
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/breaker"
	"github.com/rxhystrix/rxhystrix/metricsstream"
)

// throttleConfig throttles below a 50% success rate (the SRE book's
// K = 2) and trips only when every call fails.
var throttleConfig = breaker.Config{
	RequestVolumeThreshold:    10,
	ErrorThresholdPercentage:  100,
	SleepWindow:               200 * time.Millisecond,
	ThrottleSuccessPercentage: 50,
}

func TestThrottleProbabilityFollowsTheFormula(t *testing.T) {
	with := func(change func(*breaker.Config)) breaker.Config {
		cfg := throttleConfig
		change(&cfg)
		return cfg
	}
	cases := []struct {
		name string
		cfg  breaker.Config
		hc   metricsstream.HealthCounts
		want float64
	}{
		{"off", breaker.Config{ErrorThresholdPercentage: 100}, health(10, 90, 0), 0},
		{"all succeed", throttleConfig, health(100, 0, 0), 0},
		{"at the success threshold", throttleConfig, health(50, 50, 0), 0},
		{"just below it", throttleConfig, health(49, 51, 0), (100 - 98.0) / 101},
		{"40% succeed", throttleConfig, health(40, 30, 30), (100 - 80.0) / 101},
		{"bounded by the 80% default", throttleConfig, health(5, 95, 0), 0.8},
		{"below the volume threshold", throttleConfig, health(0, 9, 0), 0},
		{"at the volume threshold", with(func(c *breaker.Config) { c.MaxThrottlePercentage = 100 }), health(1, 9, 0), 8.0 / 11},
		{"the volume threshold's default", breaker.Config{ThrottleSuccessPercentage: 50}, health(0, 19, 0), 0},
		{"K = 1", with(func(c *breaker.Config) { c.ThrottleSuccessPercentage = 100 }), health(9, 1, 0), 1.0 / 11},
		{"Envoy's 95%", with(func(c *breaker.Config) { c.ThrottleSuccessPercentage = 95 }), health(18, 2, 0), (20 - 18/0.95) / 21},
		{"aggression 2", with(func(c *breaker.Config) { c.ThrottleAggression = 2 }), health(40, 60, 0), 0.4449942},
		{"aggression 0.5", with(func(c *breaker.Config) { c.ThrottleAggression = 0.5 }), health(40, 60, 0), 0.0392118},
		{"a 30% bound", with(func(c *breaker.Config) { c.MaxThrottlePercentage = 30 }), health(10, 90, 0), 0.3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.InDelta(t, tc.want, tc.cfg.ThrottleProbability(tc.hc), 1e-6)
			b, h, _ := newBreaker(t, tc.cfg)
			h.emit(tc.hc)
			assert.InDelta(t, tc.want, b.ThrottleProbability(), 1e-6, "the breaker's, after the snapshot")
			assert.Equal(t, breaker.Closed, b.State())
		})
	}
}

// grid returns a WithRand function that walks 0, 1/n, ..., (n−1)/n and
// starts again, safe for concurrent use: n draws reject exactly the
// requests a probability p should, ⌈p·n⌉ of them.
func grid(n int) func() float64 {
	var i atomic.Int64
	return func() float64 { return float64((i.Add(1)-1)%int64(n)) / float64(n) }
}

func TestThrottleRejectsWithItsProbabilityAndStaysClosed(t *testing.T) {
	b, h, _ := newBreaker(t, throttleConfig, breaker.WithRand(grid(1000)))
	done := collect(t, b)
	h.emit(health(30, 70, 0)) // p = (100 − 60)/101
	p := 40.0 / 101
	require.InDelta(t, p, b.ThrottleProbability(), 1e-9)

	rejected := 0
	for range 1000 {
		if !b.AttemptExecution() {
			rejected++
		}
	}
	assert.Equal(t, 397, rejected, "⌈p·1000⌉ of 1000 evenly spread draws")
	assert.Equal(t, breaker.Closed, b.State())
	assert.False(t, b.IsOpen())
	assert.True(t, b.AllowRequest(), "AllowRequest does not draw")
	_, ok := b.RetryAfter()
	assert.False(t, ok, "whether the next request goes through is a draw")
	assert.Empty(t, done(), "throttling changes no state")
}

func TestThrottleStopsWhenHealthRecovers(t *testing.T) {
	draws := 0
	b, h, _ := newBreaker(t, throttleConfig, breaker.WithRand(func() float64 { draws++; return 0 }))
	h.emit(health(20, 80, 0))
	require.False(t, b.AttemptExecution(), "a draw of 0 is under any probability")
	h.emit(health(60, 40, 0))
	assert.Zero(t, b.ThrottleProbability())
	for range 10 {
		require.True(t, b.AttemptExecution())
	}
	assert.Equal(t, 1, draws, "a breaker that does not throttle draws nothing")
}

func TestThrottleEndsWhenTheBreakerOpensAndStartsOverWhenItCloses(t *testing.T) {
	b, h, clk := newBreaker(t, throttleConfig, breaker.WithRand(func() float64 { return 0 }))
	h.emit(health(20, 80, 0))
	require.Positive(t, b.ThrottleProbability())

	h.emit(health(0, 100, 0))
	require.Equal(t, breaker.Open, b.State(), "every call failed")
	assert.Zero(t, b.ThrottleProbability(), "an open breaker refuses all, without a draw")

	clk.Advance(200*time.Millisecond + 1)
	require.True(t, b.AttemptExecution(), "the trial is not throttled")
	b.MarkSuccess()
	require.Equal(t, breaker.Closed, b.State())
	assert.Zero(t, b.ThrottleProbability(), "the close starts the counts over")
	assert.True(t, b.AttemptExecution())
}

func TestThrottleYieldsToTheForceFlags(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*breaker.Config)
		admits bool
	}{
		{"disabled", func(c *breaker.Config) { c.Disabled = true }, true},
		{"forced closed", func(c *breaker.Config) { c.ForceClosed = true }, true},
		{"forced open", func(c *breaker.Config) { c.ForceOpen = true }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := throttleConfig
			tc.change(&cfg)
			b, h, _ := newBreaker(t, cfg, breaker.WithRand(func() float64 { return 0 }))
			h.emit(health(20, 80, 0))
			for range 5 {
				assert.Equal(t, tc.admits, b.AttemptExecution())
			}
			assert.Zero(t, b.ThrottleProbability(), "the flag decides every request: none is throttled")

			b.SetConfig(throttleConfig)
			assert.Positive(t, b.ThrottleProbability(), "without the flag, the latest snapshot throttles")
		})
	}
}

func TestThrottleSetConfigAppliesToTheLatestSnapshot(t *testing.T) {
	off := throttleConfig
	off.ThrottleSuccessPercentage = 0
	b, h, _ := newBreaker(t, off, breaker.WithRand(func() float64 { return 0 }))
	h.emit(health(20, 80, 0))
	require.Zero(t, b.ThrottleProbability(), "throttling is off")
	require.True(t, b.AttemptExecution())

	b.SetConfig(throttleConfig)
	assert.InDelta(t, 60.0/101, b.ThrottleProbability(), 1e-9, "on, at once")
	assert.False(t, b.AttemptExecution())

	b.SetConfig(off)
	assert.Zero(t, b.ThrottleProbability(), "off, at once")
	assert.True(t, b.AttemptExecution())
}

func TestThrottleUnderConcurrentSnapshots(t *testing.T) {
	b, h, _ := newBreaker(t, throttleConfig)
	var wg sync.WaitGroup
	var admitted, rejected atomic.Int64
	for range 8 {
		wg.Go(func() {
			for range 2000 {
				if b.AttemptExecution() {
					admitted.Add(1)
				} else {
					rejected.Add(1)
				}
			}
		})
	}
	for i := range 200 {
		h.emit(health(1+i%99, 99-i%99, 0))
	}
	wg.Wait()
	assert.Equal(t, int64(16000), admitted.Load()+rejected.Load())
	assert.Equal(t, breaker.Closed, b.State(), "some call always succeeded")
}

func TestThrottleConfigValidation(t *testing.T) {
	for _, tc := range []struct {
		cfg   breaker.Config
		field string
	}{
		{breaker.Config{ThrottleSuccessPercentage: -1}, "ThrottleSuccessPercentage"},
		{breaker.Config{ThrottleSuccessPercentage: 101}, "ThrottleSuccessPercentage"},
		{breaker.Config{ThrottleSuccessPercentage: 50, ThrottleAggression: -1}, "ThrottleAggression"},
		{breaker.Config{ThrottleSuccessPercentage: 50, ThrottleAggression: math.Inf(1)}, "ThrottleAggression"},
		{breaker.Config{ThrottleSuccessPercentage: 50, ThrottleAggression: math.NaN()}, "ThrottleAggression"},
		{breaker.Config{ThrottleAggression: 2}, "ThrottleAggression"},
		{breaker.Config{ThrottleSuccessPercentage: 50, MaxThrottlePercentage: 101}, "MaxThrottlePercentage"},
		{breaker.Config{ThrottleSuccessPercentage: 50, MaxThrottlePercentage: -1}, "MaxThrottlePercentage"},
		{breaker.Config{MaxThrottlePercentage: 50}, "MaxThrottlePercentage"},
	} {
		err := tc.cfg.Validate()
		var ce *breaker.ConfigError
		require.ErrorAs(t, err, &ce, "%+v", tc.cfg)
		assert.Equal(t, tc.field, ce.Field)
		assert.ErrorIs(t, err, breaker.ErrInvalidConfig)
	}
	got := breaker.Config{ThrottleSuccessPercentage: 90}
	require.NoError(t, got.Validate())
	b, _, _ := newBreaker(t, got)
	assert.Equal(t, breaker.DefaultThrottleAggression, b.Config().ThrottleAggression)
	assert.Equal(t, breaker.DefaultMaxThrottlePercentage, b.Config().MaxThrottlePercentage)
	b, _, _ = newBreaker(t, breaker.Config{})
	assert.Zero(t, b.Config().ThrottleAggression, "no defaults while throttling is off")
	assert.Zero(t, b.Config().MaxThrottlePercentage)
}
