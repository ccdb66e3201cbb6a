package metricsstream_test

import (
	"context"
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

// A window longer than MaxWindow is refused: a health stream ticking every
// two centuries overflowed its next bucket boundary into the past after the
// first tick, and then ticked without pause.
func TestConfigRefusesWindowsLongerThanMaxWindow(t *testing.T) {
	const centuries = 200 * 365 * 24 * time.Hour
	cases := []struct {
		cfg   metricsstream.Config
		field string
	}{
		{metricsstream.Config{RollingWindow: centuries, HealthSnapshotInterval: centuries}, "RollingWindow"},
		{metricsstream.Config{PercentileWindow: metricsstream.MaxWindow + 1}, "PercentileWindow"},
	}
	r := metricsstream.NewRegistry(clock.NewManual(time.Unix(0, 0)))
	for _, c := range cases {
		err := c.cfg.Validate()
		if assert.ErrorIs(t, err, metricsstream.ErrInvalidConfig, "%+v", c.cfg) {
			assert.Contains(t, err.Error(), "Config."+c.field)
			assert.Contains(t, err.Error(), "MaxWindow")
		}
		assert.Panics(t, func() { r.Command("k", c.cfg) })
	}
}

// The longest window ticks once per health bucket, on time, while each
// bucket has something new.
func TestLongestWindowTicksOnce(t *testing.T) {
	clk := clock.NewManual(time.Unix(0, 0))
	cfg := metricsstream.Config{RollingWindow: metricsstream.MaxWindow, Buckets: 1, HealthSnapshotInterval: metricsstream.MaxWindow}
	m := metricsstream.NewRegistry(clk).Command("k", cfg)
	ticks := 0
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m.HealthStream().SubscribeFunc(ctx, func(metricsstream.HealthCounts) { ticks++ }, nil, nil)
	for range 3 {
		complete(m, metricsstream.Success)
		clk.Advance(metricsstream.MaxWindow)
	}
	assert.Equal(t, 4, ticks, "the value at subscription and one per window")
}
