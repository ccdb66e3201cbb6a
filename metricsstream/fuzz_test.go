package metricsstream_test

import (
	"context"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/internal/clock"
	"github.com/rxhystrix/rxhystrix/metricsstream"
)

// resolvedConfig is c with its zero fields replaced by their defaults, as
// the fuzz target states them.
func resolvedConfig(c metricsstream.Config) metricsstream.Config {
	if c.RollingWindow == 0 {
		c.RollingWindow = metricsstream.DefaultRollingWindow
	}
	if c.Buckets == 0 {
		c.Buckets = metricsstream.DefaultBuckets
	}
	if c.HealthSnapshotInterval == 0 {
		c.HealthSnapshotInterval = metricsstream.DefaultHealthSnapshotInterval
	}
	if c.PercentileWindow == 0 {
		c.PercentileWindow = metricsstream.DefaultPercentileWindow
	}
	if c.PercentileBuckets == 0 {
		c.PercentileBuckets = metricsstream.DefaultPercentileBuckets
	}
	return c
}

// invalidMetricsFields is the fuzz target's own statement of Validate's
// rules: the fields of c that are negative, are windows longer than
// MaxWindow, make a bucket empty, or cut a window into more buckets than
// metrics may hold in memory.
func invalidMetricsFields(c metricsstream.Config) []string {
	var bad []string
	for _, f := range []struct {
		name     string
		negative bool
	}{
		{"RollingWindow", c.RollingWindow < 0},
		{"Buckets", c.Buckets < 0},
		{"HealthSnapshotInterval", c.HealthSnapshotInterval < 0},
		{"PercentileWindow", c.PercentileWindow < 0},
		{"PercentileBuckets", c.PercentileBuckets < 0},
		{"SlowCallDuration", c.SlowCallDuration < 0},
	} {
		if f.negative {
			bad = append(bad, f.name)
		}
	}
	if len(bad) > 0 {
		return bad
	}
	d := resolvedConfig(c)
	if d.RollingWindow > metricsstream.MaxWindow {
		bad = append(bad, "RollingWindow")
	}
	if d.PercentileWindow > metricsstream.MaxWindow {
		bad = append(bad, "PercentileWindow")
	}
	if d.RollingWindow < time.Duration(d.Buckets) || d.Buckets > metricsstream.MaxBuckets {
		bad = append(bad, "Buckets")
	}
	if d.HealthSnapshotInterval > d.RollingWindow || d.RollingWindow/d.HealthSnapshotInterval > metricsstream.MaxBuckets {
		bad = append(bad, "HealthSnapshotInterval")
	}
	if d.PercentileWindow < time.Duration(d.PercentileBuckets) || d.PercentileBuckets > metricsstream.MaxBuckets {
		bad = append(bad, "PercentileBuckets")
	}
	return bad
}

// FuzzConfig feeds arbitrary windows to Config.Validate and
// Registry.Command. An invalid Config must be refused with an error that
// names a bad field (and Command must panic with it); a valid one must make
// metrics that count, judge health and measure latency over the windows
// it describes, however short or long they are.
func FuzzConfig(f *testing.F) {
	f.Add(int64(0), 0, int64(0), int64(0), 0, false, int64(0))
	f.Add(int64(10*time.Second), 10, int64(500*time.Millisecond), int64(time.Minute), 6, false, int64(0))
	f.Add(int64(time.Second), 10, int64(10*time.Millisecond), int64(time.Second), 10, true, int64(time.Millisecond))
	f.Add(int64(5), 10, int64(0), int64(3), 6, false, int64(0))
	f.Add(int64(0), 0, int64(11*time.Second), int64(0), 0, false, int64(0))
	f.Add(int64(-1), -1, int64(-1), int64(-1), -1, false, int64(-1))
	f.Add(int64(10), 10, int64(1), int64(6), 6, false, int64(1))
	f.Add(int64(math.MaxInt64), 1, int64(math.MaxInt64), int64(math.MaxInt64), 1, false, int64(math.MaxInt64))
	f.Add(int64(0), 0, int64(1), int64(0), 0, false, int64(0))
	f.Add(int64(time.Second), 1_000_000_000, int64(0), int64(0), 0, false, int64(0))
	f.Add(int64(0), 0, int64(0), int64(time.Hour), math.MaxInt, false, int64(0))
	f.Add(int64(10*time.Second), 10_000, int64(time.Millisecond), int64(0), 0, false, int64(0))
	f.Add(int64(metricsstream.MaxWindow), 1, int64(metricsstream.MaxWindow), int64(metricsstream.MaxWindow), 1, false, int64(0))

	f.Fuzz(func(t *testing.T, rolling int64, buckets int, health, percentile int64, percentileBuckets int,
		percentileDisabled bool, slow int64) {
		cfg := metricsstream.Config{
			RollingWindow:          time.Duration(rolling),
			Buckets:                buckets,
			HealthSnapshotInterval: time.Duration(health),
			PercentileWindow:       time.Duration(percentile),
			PercentileBuckets:      percentileBuckets,
			PercentileDisabled:     percentileDisabled,
			SlowCallDuration:       time.Duration(slow),
		}
		bad := invalidMetricsFields(cfg)
		err := cfg.Validate()
		if len(bad) > 0 {
			require.Error(t, err, "fields %v are invalid", bad)
			assert.ErrorIs(t, err, metricsstream.ErrInvalidConfig)
			named := false
			for _, field := range bad {
				named = named || strings.Contains(err.Error(), "Config."+field+" ")
			}
			assert.True(t, named, "%q names one of %v", err, bad)
			r := metricsstream.NewRegistry(clock.NewManual(fuzzEpoch))
			assert.Panics(t, func() { r.Command("k", cfg) })
			return
		}
		require.NoError(t, err, "a valid config")
		checkRolling(t, cfg)
		checkHealth(t, cfg)
		checkLatency(t, cfg)
	})
}

var fuzzEpoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// recordThree records a success, a failure and a timeout that ran 5ms and
// kept their callers 6ms, ending now.
func recordThree(m *metricsstream.CommandMetrics) {
	for _, e := range []metricsstream.EventType{metricsstream.Success, metricsstream.Failure, metricsstream.Timeout} {
		c := metricsstream.Completion{CommandKey: m.Key(), Executed: true,
			ExecutionLatency: 5 * time.Millisecond, TotalLatency: 6 * time.Millisecond}
		c.Events.Add(e, 1)
		if e != metricsstream.Success {
			c.Events.Add(metricsstream.FallbackSuccess, 1)
		}
		m.MarkCompletion(&c)
	}
}

func newFuzzMetrics(t *testing.T, cfg metricsstream.Config) (*metricsstream.CommandMetrics, *clock.Manual) {
	clk := clock.NewManual(fuzzEpoch)
	m := metricsstream.NewRegistry(clk).Command("k", cfg)
	want := resolvedConfig(cfg)
	require.Equal(t, want, m.Config(), "the zero fields take their defaults")
	return m, clk
}

// checkRolling: the bucket in progress does not count; once it closes it
// counts in the rolling and cumulative counts.
func checkRolling(t *testing.T, cfg metricsstream.Config) {
	m, clk := newFuzzMetrics(t, cfg)
	recordThree(m)
	assert.Zero(t, m.RollingCount(metricsstream.Success), "the bucket in progress")
	width := m.Config().RollingWindow / time.Duration(m.Config().Buckets)
	clk.Advance(width)
	for _, e := range []metricsstream.EventType{metricsstream.Success, metricsstream.Failure, metricsstream.Timeout} {
		assert.Equal(t, int64(1), m.RollingCount(e), "rolling %v after one bucket of %v", e, width)
		assert.Equal(t, int64(1), m.CumulativeCount(e), "cumulative %v after one bucket of %v", e, width)
	}
	assert.Equal(t, int64(2), m.RollingCount(metricsstream.FallbackSuccess))
}

// checkHealth: the health stream delivers the counts of the closed health
// bucket when it closes.
func checkHealth(t *testing.T, cfg metricsstream.Config) {
	m, clk := newFuzzMetrics(t, cfg)
	var (
		mu   sync.Mutex
		last metricsstream.HealthCounts
		n    int
	)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m.HealthStream().SubscribeFunc(ctx, func(hc metricsstream.HealthCounts) {
		mu.Lock()
		last, n = hc, n+1
		mu.Unlock()
	}, nil, nil)
	recordThree(m)
	clk.Advance(m.Config().HealthSnapshotInterval)
	want := metricsstream.HealthCounts{Total: 3, Errors: 2, ErrorPercentage: 66}
	if cfg.SlowCallDuration > 0 && cfg.SlowCallDuration <= 5*time.Millisecond {
		want.Slow = 3
	}
	assert.Equal(t, want, m.HealthCounts())
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, want, last, "the stream's value at the bucket's close")
	assert.Equal(t, 2, n, "the value at subscription, then one tick")
}

// checkLatency: the latencies of a closed percentile bucket are in the
// distributions, unless percentiles are disabled.
func checkLatency(t *testing.T, cfg metricsstream.Config) {
	m, clk := newFuzzMetrics(t, cfg)
	recordThree(m)
	clk.Advance(m.Config().PercentileWindow / time.Duration(m.Config().PercentileBuckets))
	exec, total := m.ExecutionLatencyPercentile(100), m.TotalLatencyPercentile(50)
	if cfg.PercentileDisabled {
		assert.Zero(t, exec)
		assert.Zero(t, total)
		return
	}
	assert.InEpsilon(t, float64(5*time.Millisecond), float64(exec), 0.01, "execution latency %v", exec)
	assert.InEpsilon(t, float64(6*time.Millisecond), float64(total), 0.01, "total latency %v", total)
}
