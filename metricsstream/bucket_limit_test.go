package metricsstream_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/rxhystrix/rxhystrix/internal/clock"
	"github.com/rxhystrix/rxhystrix/metricsstream"
)

// A window cut into more buckets than MaxBuckets is refused by Validate and
// by Registry.Command, which would otherwise allocate every bucket: a 1ns
// health snapshot over the default 10s window asks for ten billion.
func TestConfigRefusesMoreThanMaxBuckets(t *testing.T) {
	cases := []struct {
		cfg   metricsstream.Config
		field string
	}{
		{metricsstream.Config{HealthSnapshotInterval: time.Nanosecond}, "HealthSnapshotInterval"},
		{metricsstream.Config{RollingWindow: time.Second, Buckets: 1_000_000_000, HealthSnapshotInterval: time.Second}, "Buckets"},
		{metricsstream.Config{PercentileBuckets: metricsstream.MaxBuckets + 1}, "PercentileBuckets"},
	}
	r := metricsstream.NewRegistry(clock.NewManual(time.Unix(0, 0)))
	for _, c := range cases {
		err := c.cfg.Validate()
		if assert.ErrorIs(t, err, metricsstream.ErrInvalidConfig, "%+v", c.cfg) {
			assert.Contains(t, err.Error(), "Config."+c.field)
			assert.Contains(t, err.Error(), "MaxBuckets")
		}
		assert.Panics(t, func() { r.Command("k", c.cfg) })
	}
}

// Hystrix's millisecond granularity over its default window stays valid.
func TestConfigAllowsMaxBuckets(t *testing.T) {
	assert.NoError(t, metricsstream.Config{HealthSnapshotInterval: time.Millisecond}.Validate())
	assert.NoError(t, metricsstream.Config{Buckets: metricsstream.MaxBuckets, PercentileBuckets: metricsstream.MaxBuckets}.Validate())
}
