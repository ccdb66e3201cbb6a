package breaker_test

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/breaker"
	"github.com/rxhystrix/rxhystrix/metricsstream"
)

func TestConfigValidate(t *testing.T) {
	cases := []struct {
		name   string
		cfg    breaker.Config
		fields []string // the fields the error names, none if valid
	}{
		{"zero", breaker.Config{}, nil},
		{"hystrix test config", hystrixTestConfig, nil},
		{"everything set", breaker.Config{RequestVolumeThreshold: 1, ErrorThresholdPercentage: 100, SleepWindow: time.Millisecond,
			ForceOpen: true, ForceClosed: true, Disabled: true, HalfOpenTrials: breaker.MaxHalfOpenTrials,
			HalfOpenTrialTimeout: -1, SlowCallDuration: time.Second, SlowCallRatePercentage: 1}, nil},
		{"slow percentage of 100", breaker.Config{SlowCallDuration: time.Second, SlowCallRatePercentage: 100}, nil},
		{"negative volume", breaker.Config{RequestVolumeThreshold: -1}, []string{"RequestVolumeThreshold"}},
		{"negative percentage", breaker.Config{ErrorThresholdPercentage: -5}, []string{"ErrorThresholdPercentage"}},
		{"percentage over 100", breaker.Config{ErrorThresholdPercentage: 101}, []string{"ErrorThresholdPercentage"}},
		{"negative sleep window", breaker.Config{SleepWindow: -time.Second}, []string{"SleepWindow"}},
		{"negative trials", breaker.Config{HalfOpenTrials: -1}, []string{"HalfOpenTrials"}},
		{"too many trials", breaker.Config{HalfOpenTrials: breaker.MaxHalfOpenTrials + 1}, []string{"HalfOpenTrials"}},
		{"negative slow duration", breaker.Config{SlowCallDuration: -1}, []string{"SlowCallDuration"}},
		{"slow percentage over 100", breaker.Config{SlowCallDuration: 1, SlowCallRatePercentage: 150}, []string{"SlowCallRatePercentage"}},
		{"slow percentage without duration", breaker.Config{SlowCallRatePercentage: 50}, []string{"SlowCallRatePercentage"}},
		{"growing sleep window", breaker.Config{SleepWindow: time.Second, MaxSleepWindow: time.Minute, SleepWindowMultiplier: 1.5}, nil},
		{"max sleep window of the default", breaker.Config{MaxSleepWindow: breaker.DefaultSleepWindow}, nil},
		{"max sleep window under the default", breaker.Config{MaxSleepWindow: breaker.DefaultSleepWindow - 1}, []string{"MaxSleepWindow"}},
		{"max sleep window under the sleep window", breaker.Config{SleepWindow: time.Second, MaxSleepWindow: time.Second - 1}, []string{"MaxSleepWindow"}},
		{"negative max sleep window", breaker.Config{MaxSleepWindow: -1}, []string{"MaxSleepWindow"}},
		{"multiplier of 1", breaker.Config{MaxSleepWindow: time.Minute, SleepWindowMultiplier: 1}, []string{"SleepWindowMultiplier"}},
		{"negative multiplier", breaker.Config{MaxSleepWindow: time.Minute, SleepWindowMultiplier: -2}, []string{"SleepWindowMultiplier"}},
		{"NaN multiplier", breaker.Config{MaxSleepWindow: time.Minute, SleepWindowMultiplier: math.NaN()}, []string{"SleepWindowMultiplier"}},
		{"infinite multiplier", breaker.Config{MaxSleepWindow: time.Minute, SleepWindowMultiplier: math.Inf(1)}, []string{"SleepWindowMultiplier"}},
		{"multiplier without max", breaker.Config{SleepWindowMultiplier: 2}, []string{"SleepWindowMultiplier"}},
		{"jitter", breaker.Config{SleepWindowJitter: time.Second}, nil},
		{"negative jitter", breaker.Config{SleepWindowJitter: -1}, []string{"SleepWindowJitter"}},
		{"several", breaker.Config{RequestVolumeThreshold: -1, SleepWindow: -1}, []string{"RequestVolumeThreshold", "SleepWindow"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.cfg.Validate()
			if c.fields == nil {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.ErrorIs(t, err, breaker.ErrInvalidConfig)
			var ce *breaker.ConfigError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, c.fields[0], ce.Field)
			for _, f := range c.fields {
				assert.Contains(t, err.Error(), "Config."+f)
			}
		})
	}
}

func TestConfigErrorMessage(t *testing.T) {
	err := breaker.Config{ErrorThresholdPercentage: 150}.Validate()
	assert.EqualError(t, err, "breaker: Config.ErrorThresholdPercentage is 150: must be between 0 and 100")
	var ce *breaker.ConfigError
	require.True(t, errors.As(err, &ce))
	assert.Equal(t, 150, ce.Value)
}

func TestConfigTripsOnTheThresholdsWithDefaults(t *testing.T) {
	var zero breaker.Config // 20 requests, 50%
	assert.False(t, zero.Trips(metricsstream.HealthCounts{Total: 19, Errors: 19, ErrorPercentage: 100}), "under the volume")
	assert.True(t, zero.Trips(metricsstream.HealthCounts{Total: 20, Errors: 10, ErrorPercentage: 50}))
	assert.False(t, zero.Trips(metricsstream.HealthCounts{Total: 20, Errors: 9, ErrorPercentage: 45}))
	slow := breaker.Config{RequestVolumeThreshold: 2, SlowCallDuration: time.Second}
	assert.True(t, slow.Trips(metricsstream.HealthCounts{Total: 2, Slow: 2}), "every call slow")
	assert.False(t, slow.Trips(metricsstream.HealthCounts{Total: 2, Slow: 1}))
}
