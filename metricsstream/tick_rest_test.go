package metricsstream

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rxhystrix/rxhystrix/internal/clock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// snapshot is a health snapshot and the time, since t0, it came at.
type snapshot struct {
	at time.Duration
	HealthCounts
}

// collectTimed subscribes to m's health stream and returns a function that
// returns the snapshots so far.
func collectTimed(t *testing.T, m *CommandMetrics, mc *clock.Manual) func() []snapshot {
	t.Helper()
	var (
		mu  sync.Mutex
		got []snapshot
	)
	sub := m.HealthStream().SubscribeFunc(context.Background(), func(h HealthCounts) {
		mu.Lock()
		got = append(got, snapshot{mc.Since(t0), h})
		mu.Unlock()
	}, nil, nil)
	t.Cleanup(sub.Unsubscribe)
	return func() []snapshot {
		mu.Lock()
		defer mu.Unlock()
		return append([]snapshot(nil), got...)
	}
}

// The health stream of an idle key runs no timer; a completion wakes it,
// it ticks while the window holds counts, and once the window is empty and
// its zero snapshot delivered it rests again, until the next completion,
// whose snapshot comes at the boundary of its health bucket.
func TestHealthStreamRestsWhileTheWindowIsEmpty(t *testing.T) {
	m, mc := newTestMetrics(t, Config{})
	got := collectTimed(t, m, mc)
	assert.Zero(t, mc.Pending(), "nothing to snapshot: no timer")
	mc.Advance(time.Minute)
	require.Equal(t, []snapshot{{0, HealthCounts{}}}, got(), "only the value at subscription")

	mc.Advance(300 * time.Millisecond) // 60.3s
	record(m, Failure, FallbackMissing)
	assert.Equal(t, 1, mc.Pending(), "a completion wakes the stream")
	mc.Advance(11 * time.Second) // to 71.3s
	failed := HealthCounts{Total: 1, Errors: 1, ErrorPercentage: 100}
	want := []snapshot{{0, HealthCounts{}}}
	for i := range 20 { // the 20 buckets of the window hold the failure
		want = append(want, snapshot{60*time.Second + time.Duration(i+1)*healthBucket, failed})
	}
	want = append(want, snapshot{70*time.Second + healthBucket, HealthCounts{}})
	assert.Equal(t, want, got(), "a snapshot every bucket, from the close of the failure's bucket to the zero one")
	assert.Zero(t, mc.Pending(), "the window is empty and its zero snapshot delivered")

	mc.Advance(time.Minute) // 131.3s
	assert.Len(t, got(), len(want), "nothing new: no snapshot")
	record(m, Success)
	mc.Advance(199 * time.Millisecond)
	assert.Len(t, got(), len(want), "the success's bucket is open until 131.5s")
	mc.Advance(time.Millisecond)
	assert.Equal(t, snapshot{131*time.Second + healthBucket, HealthCounts{Total: 1}}, got()[len(want)],
		"at the boundary of the success's bucket, the cadence of the ticks since the metrics were made")
}

// After ResetStream the ticks of a woken stream follow the new buckets.
func TestHealthStreamWakesOnTheBucketsOfTheReset(t *testing.T) {
	m, mc := newTestMetrics(t, Config{})
	got := collectTimed(t, m, mc)
	mc.Advance(time.Second + 200*time.Millisecond)
	m.ResetStream() // at 1.2s: health buckets close at 1.7s, 2.2s...
	assert.Zero(t, mc.Pending())
	mc.Advance(100 * time.Millisecond)
	record(m, Timeout, FallbackMissing)
	mc.Advance(399 * time.Millisecond)
	assert.Len(t, got(), 1)
	mc.Advance(time.Millisecond)
	assert.Equal(t, []snapshot{{0, HealthCounts{}}, {1700 * time.Millisecond, HealthCounts{Total: 1, Errors: 1, ErrorPercentage: 100}}}, got())
}

// Completions that do not count for health (short-circuits, bad requests,
// cache hits) do not wake a resting stream: its snapshot would not change.
func TestHealthStreamRestsThroughWhatHealthDoesNotCount(t *testing.T) {
	m, mc := newTestMetrics(t, Config{})
	got := collectTimed(t, m, mc)
	record(m, ShortCircuited, FallbackSuccess)
	record(m, BadRequest)
	record(m, ResponseFromCache)
	assert.Zero(t, mc.Pending())
	mc.Advance(time.Minute)
	assert.Len(t, got(), 1)
}

// A completion recorded while the stream goes to rest, at the same moment,
// is never left out: either the stream's last look at the buckets sees it,
// or the completion finds the stream resting and wakes it.
func TestHealthStreamNeverRestsOverACompletion(t *testing.T) {
	for range 200 {
		m, mc := newTestMetrics(t, Config{})
		sub := m.HealthStream().SubscribeFunc(context.Background(), nil, nil, nil)
		record(m, Success)
		mc.Advance(10*time.Second + 400*time.Millisecond) // the 10.5s tick would rest
		var wg sync.WaitGroup
		wg.Go(func() { mc.Advance(100 * time.Millisecond) })
		wg.Go(func() { record(m, Success) })
		wg.Wait()
		require.Equal(t, 1, mc.Pending(), "the stream rests with a success in its window")
		mc.Advance(healthBucket)
		require.Equal(t, HealthCounts{Total: 1}, m.HealthCounts())
		sub.Unsubscribe()
	}
}

// countingClock is a manual clock that counts the AfterFunc callbacks it
// fires: the wake-ups a real clock's timers would cost.
type countingClock struct {
	*clock.Manual
	fired atomic.Int64
}

func (c *countingClock) AfterFunc(d time.Duration, f func()) clock.Timer {
	return c.Manual.AfterFunc(d, func() {
		c.fired.Add(1)
		f()
	})
}

// Keys whose circuit breakers (here, plain subscribers) watch their health
// cost no timer wake-up once they are idle.
func TestIdleKeysCostNoWakeUps(t *testing.T) {
	const keys = 1000
	mc := &countingClock{Manual: clock.NewManual(t0)}
	reg := NewRegistry(mc)
	for i := range keys {
		m := reg.Command(fmt.Sprint("key", i), Config{})
		sub := m.HealthStream().SubscribeFunc(context.Background(), nil, nil, nil)
		t.Cleanup(sub.Unsubscribe)
		record(m, Failure, FallbackMissing)
	}
	require.Equal(t, keys, mc.Pending())
	mc.Advance(10*time.Second + healthBucket)
	require.Equal(t, int64(keys*21), mc.fired.Load(), "20 snapshots of the failure, then the zero one")
	require.Zero(t, mc.Pending(), "every key idle")

	mc.fired.Store(0)
	for range time.Minute / (100 * time.Millisecond) {
		mc.Advance(100 * time.Millisecond)
	}
	assert.Zero(t, mc.fired.Load(), "wake-ups of idle keys over a minute")
	assert.Zero(t, mc.Pending())
}

// jumpingClock is a manual clock that moves on by jump inside the
// after-th call of Now once armed: another goroutine advancing the
// clock between two readings of the caller's.
type jumpingClock struct {
	*clock.Manual
	calls atomic.Int32 // readings left before the jump, when > 0
	jump  time.Duration
}

func (c *jumpingClock) Now() time.Time {
	if c.calls.Add(-1) == 0 {
		c.Manual.Advance(c.jump)
	}
	return c.Manual.Now()
}

// A first subscriber whose value was read just before the window emptied
// (the clock moved on between the reading of the value and the decision
// to rest) must not be left with those counts: the stream rests only on
// a value the subscriber has.
func TestHealthStreamDoesNotRestOnAStaleFirstValue(t *testing.T) {
	mc := &jumpingClock{Manual: clock.NewManual(t0), jump: 10 * time.Second}
	m := NewRegistry(mc).Command("cmd", Config{})
	recordN(m, 5, Failure, FallbackMissing)
	mc.Manual.Advance(healthBucket) // the failures are in the window until 10.5s

	var mu sync.Mutex
	var got []HealthCounts
	mc.calls.Store(2) // the stream's second reading, when it decides whether to rest
	sub := m.HealthStream().SubscribeFunc(context.Background(), func(h HealthCounts) {
		mu.Lock()
		got = append(got, h)
		mu.Unlock()
	}, nil, nil)
	defer sub.Unsubscribe()
	require.Equal(t, HealthCounts{}, m.HealthCounts(), "the window is empty by now")

	mc.Manual.Advance(time.Second)
	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, got)
	assert.Equal(t, HealthCounts{Total: 5, Errors: 5, ErrorPercentage: 100}, got[0], "the value at subscription")
	assert.Equal(t, HealthCounts{}, got[len(got)-1], "the subscriber is left with counts long gone")
}
