package metricsstream

import (
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// With HealthWindowCalls the health counts are those of the latest
// calls, however old: what health counts (successes, failures,
// timeouts, rejections), from the moment each is recorded.
func TestHealthWindowCallsCountsTheLatestCalls(t *testing.T) {
	m, mc := newTestMetrics(t, Config{HealthWindowCalls: 4})
	record(m, Success)
	record(m, Failure, FallbackMissing)
	assert.Equal(t, HealthCounts{Total: 2, Errors: 1, ErrorPercentage: 50}, m.HealthCounts(), "counted at once")
	record(m, Failure, FallbackSuccess)
	record(m, Success)
	record(m, Timeout, FallbackSuccess)
	record(m, SemaphoreRejected, FallbackSuccess)
	want := HealthCounts{Total: 4, Errors: 3, ErrorPercentage: 75} // failure, success, timeout, rejection
	assert.Equal(t, want, m.HealthCounts(), "the latest 4")

	record(m, BadRequest)
	record(m, ShortCircuited, FallbackSuccess)
	record(m, Cancelled)
	assert.Equal(t, want, m.HealthCounts(), "what health does not count takes no place")

	mc.Advance(time.Hour)
	assert.Equal(t, want, m.HealthCounts(), "however old")
	assert.Equal(t, int64(0), m.RollingCount(Failure), "the rolling counts stay time-based")

	m.ResetStream()
	assert.Equal(t, HealthCounts{}, m.HealthCounts(), "a reset empties the window")
	record(m, Success)
	assert.Equal(t, HealthCounts{Total: 1}, m.HealthCounts())
}

func TestHealthWindowCallsCountsSlowCalls(t *testing.T) {
	m, _ := newTestMetrics(t, Config{HealthWindowCalls: 3, SlowCallDuration: 10 * time.Millisecond})
	recordEvents(m, 20*time.Millisecond, 20*time.Millisecond, Success)
	recordEvents(m, 5*time.Millisecond, 5*time.Millisecond, Success)
	recordEvents(m, 30*time.Millisecond, 30*time.Millisecond, Failure, FallbackMissing)
	assert.Equal(t, HealthCounts{Total: 3, Errors: 1, ErrorPercentage: 33, Slow: 2}, m.HealthCounts())
}

// The health stream sends the window of calls at its usual ticks.
func TestHealthWindowCallsOnTheHealthStream(t *testing.T) {
	m, mc := newTestMetrics(t, Config{HealthWindowCalls: 10})
	got := collectTimed(t, m, mc)
	for range 3 {
		record(m, Failure, FallbackMissing)
		mc.Advance(time.Minute)
	}
	snaps := got()
	require.NotEmpty(t, snaps)
	assert.Equal(t, HealthCounts{Total: 3, Errors: 3, ErrorPercentage: 100}, snaps[len(snaps)-1].HealthCounts,
		"a failure a minute: three in the window, where 10 seconds hold none")
}

// Calls recorded at once from many goroutines fill the window exactly.
func TestHealthWindowCallsConcurrently(t *testing.T) {
	m, _ := newTestMetrics(t, Config{HealthWindowCalls: 100})
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 50 {
				record(m, Failure, FallbackMissing)
			}
		})
	}
	wg.Wait()
	assert.Equal(t, HealthCounts{Total: 100, Errors: 100, ErrorPercentage: 100}, m.HealthCounts())
}

func TestHealthWindowCallsValidation(t *testing.T) {
	for _, n := range []int{-1, MaxHealthWindowCalls + 1} {
		err := Config{HealthWindowCalls: n}.Validate()
		require.Error(t, err, "%d", n)
		assert.True(t, errors.Is(err, ErrInvalidConfig))
		assert.Contains(t, err.Error(), "Config.HealthWindowCalls")
	}
	assert.NoError(t, Config{HealthWindowCalls: MaxHealthWindowCalls}.Validate())
}

// A command whose health counts its latest calls says how many in its
// "metrics", after Hystrix's fields.
func TestConfigHandlerShowsTheHealthWindowCalls(t *testing.T) {
	reg, _ := newStreamRegistry()
	reg.Command("Search", Config{HealthWindowCalls: 50})
	reg.Command("Lookup", Config{})
	srv := newStreamServer(t, ConfigHandler(WithRegistry(reg)))
	o := oneEvent(t, connect(t, srv.URL))
	metrics := o.object(t, "commands").object(t, "Search").object(t, "metrics")
	assert.Equal(t, "healthWindowCalls", metrics.keys[len(metrics.keys)-1])
	assert.Equal(t, json.Number("50"), metrics.get(t, "healthWindowCalls"))
	assert.NotContains(t, o.object(t, "commands").object(t, "Lookup").object(t, "metrics").keys, "healthWindowCalls")
}

// ResetStream empties the window of calls, which changes the health
// counts even when the health buckets are empty and the stream rests:
// a subscriber must be sent the empty window, at the next boundary of
// the new buckets, not keep the counts of the calls from before.
func TestHealthWindowCallsResetReachesARestingStream(t *testing.T) {
	m, mc := newTestMetrics(t, Config{HealthWindowCalls: 10})
	got := collectTimed(t, m, mc)
	recordN(m, 5, Failure, FallbackMissing)
	mc.Advance(12 * time.Second) // the buckets are empty: the stream rests
	snaps := got()
	require.Equal(t, HealthCounts{Total: 5, Errors: 5, ErrorPercentage: 100}, snaps[len(snaps)-1].HealthCounts)

	m.ResetStream()
	require.Equal(t, HealthCounts{}, m.HealthCounts())
	mc.Advance(2 * time.Second)
	snaps = got()
	assert.Equal(t, HealthCounts{}, snaps[len(snaps)-1].HealthCounts,
		"the subscriber still holds the calls the reset dropped")
}
