package breaker_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/breaker"
	"github.com/rxhystrix/rxhystrix/internal/clock"
	"github.com/rxhystrix/rxhystrix/metricsstream"
)

// The breakers of keys that nobody executes keep no timer running: their
// health streams rest until a completion counts for health, and start
// resting again once the window has emptied.
func TestBreakersOfIdleKeysRunNoTimer(t *testing.T) {
	const keys = 100
	clk := clock.NewManual(epoch)
	reg := metricsstream.NewRegistry(clk)
	var ms []*metricsstream.CommandMetrics
	for i := range keys {
		m := reg.Command(fmt.Sprint("key", i), metricsstream.Config{})
		b := breaker.New(breaker.Config{}, m, breaker.WithClock(clk))
		t.Cleanup(b.Close)
		ms = append(ms, m)
	}
	assert.Zero(t, clk.Pending(), "new keys")
	clk.Advance(time.Minute)

	for _, m := range ms {
		m.MarkCompletion(completion(metricsstream.Success))
	}
	assert.Equal(t, keys, clk.Pending(), "a health timer per key with a success in its window")
	clk.Advance(10*time.Second + 500*time.Millisecond)
	assert.Zero(t, clk.Pending(), "the windows are empty again")
}

// A breaker on a resting health stream trips at the same moment as on a
// stream that never rested: at the close of the health bucket that brings
// the window over its thresholds.
func TestBreakerTripsOnTimeAfterIdling(t *testing.T) {
	clk := clock.NewManual(epoch)
	m := metricsstream.NewRegistry(clk).Command("k", metricsstream.Config{})
	b := breaker.New(breaker.Config{RequestVolumeThreshold: 2}, m, breaker.WithClock(clk))
	finish := collect(t, b)
	clk.Advance(time.Minute + 200*time.Millisecond)
	m.MarkCompletion(completion(metricsstream.Failure, metricsstream.FallbackMissing))
	m.MarkCompletion(completion(metricsstream.Timeout, metricsstream.FallbackMissing))
	clk.Advance(299 * time.Millisecond)
	require.Equal(t, breaker.Closed, b.State(), "the failures' health bucket closes at 60.5s")
	clk.Advance(time.Millisecond)
	assert.Equal(t, breaker.Open, b.State())

	got := finish()
	require.Len(t, got, 1)
	assert.Equal(t, epoch.Add(time.Minute+500*time.Millisecond), got[0].Time)
	assert.Equal(t, metricsstream.HealthCounts{Total: 2, Errors: 2, ErrorPercentage: 100}, got[0].Health)
}

// completion returns the record of an execution made of events that
// ended now.
func completion(events ...metricsstream.EventType) *metricsstream.Completion {
	c := &metricsstream.Completion{}
	for _, e := range events {
		c.Events.Add(e, 1)
	}
	return c
}
