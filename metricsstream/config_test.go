package metricsstream

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestConfigZeroIsHystrixDefaults(t *testing.T) {
	require.NoError(t, Config{}.Validate())
	m, _ := newTestMetrics(t, Config{})
	assert.Equal(t, Config{
		RollingWindow:          10 * time.Second,
		Buckets:                10,
		HealthSnapshotInterval: 500 * time.Millisecond,
		PercentileWindow:       time.Minute,
		PercentileBuckets:      6,
	}, m.Config())
}

func TestConfigValidateNamesTheField(t *testing.T) {
	cases := []struct {
		cfg   Config
		field string
	}{
		{Config{RollingWindow: -1}, "RollingWindow"},
		{Config{Buckets: -1}, "Buckets"},
		{Config{HealthSnapshotInterval: -time.Second}, "HealthSnapshotInterval"},
		{Config{PercentileWindow: -1}, "PercentileWindow"},
		{Config{PercentileBuckets: -2}, "PercentileBuckets"},
		{Config{SlowCallDuration: -1}, "SlowCallDuration"},
		{Config{RollingWindow: 5, Buckets: 10}, "Buckets"},
		{Config{HealthSnapshotInterval: 11 * time.Second}, "HealthSnapshotInterval"},
		{Config{PercentileWindow: 3, PercentileBuckets: 6}, "PercentileBuckets"},
	}
	for _, c := range cases {
		err := c.cfg.Validate()
		if assert.ErrorIs(t, err, ErrInvalidConfig, "%+v", c.cfg) {
			assert.Contains(t, err.Error(), "Config."+c.field)
		}
	}
}

func TestRegistryPanicsOnInvalidConfig(t *testing.T) {
	r := NewRegistry(newManual())
	assert.PanicsWithValue(t,
		`metricsstream: Registry.Command("k"): metricsstream: invalid config: Config.Buckets (-1) is negative`,
		func() { r.Command("k", Config{Buckets: -1}) })
	assert.Panics(t, func() { r.Command("", Config{}) })
	assert.Panics(t, func() { r.Pool("p", Config{RollingWindow: -1}) })
	assert.Panics(t, func() { r.Pool("", Config{}) })
	assert.Panics(t, func() { NewRegistry(nil) })
}
