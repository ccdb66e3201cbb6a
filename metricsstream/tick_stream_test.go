package metricsstream

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A tick stream's timer holds the stream only while it runs: once the last
// subscriber leaves, what the stopped timer holds (it may stay in the
// runtime's timer heap for a while) no longer leads to the stream, its
// key or its metrics.
func TestStoppedTickTimerLetsGoOfTheStream(t *testing.T) {
	mc := newManual()
	next := func(now time.Time) time.Time { return now.Add(time.Second) }
	s := newTickStream(mc, next, func(time.Time) int { return 1 }, nil, nil)
	ctx, cancel := context.WithCancel(context.Background())
	sub := s.observable().SubscribeFunc(ctx, func(int) {}, nil, nil)
	s.mu.Lock()
	target := s.target
	s.mu.Unlock()
	require.NotNil(t, target, "a subscriber starts the timer")
	assert.Same(t, s, target.s.Load())

	sub.Unsubscribe()
	cancel()
	s.mu.Lock()
	defer s.mu.Unlock()
	assert.Nil(t, s.timer)
	assert.Nil(t, s.target)
	assert.Nil(t, target.s.Load(), "the stopped timer still leads to the stream")
}

// A tick whose value takes long to compute must not deliver it after the
// value of a later tick: a subscriber sees the stream's values in the order
// of their ticks (on the real clock each tick runs on a goroutine of its
// own, so a later tick can overtake one that was delayed).
func TestTickStreamKeepsTheOrderOfSlowTicks(t *testing.T) {
	mc := newManual()
	const interval = 100 * time.Millisecond
	var drops atomic.Int64
	var panics atomic.Uint64
	var calls atomic.Int32
	entered := make(chan struct{})
	release := make(chan struct{})
	s := newTickStream(mc, func(now time.Time) time.Time { return now.Add(interval) }, func(now time.Time) time.Time {
		if calls.Add(1) == 2 { // the first tick's value, after the subscription's
			close(entered)
			<-release
		}
		return now
	}, &drops, &panics)
	got, _ := collect(t, s.observable())

	slow := make(chan struct{})
	go func() {
		defer close(slow)
		mc.Advance(interval) // the first tick, stuck computing its value
	}()
	<-entered
	mc.Advance(interval) // the second tick, on another goroutine
	close(release)
	<-slow

	values := got.get()
	for i := 1; i < len(values); i++ {
		assert.False(t, values[i].Before(values[i-1]), "value %d (%v) came after a later one (%v): %v", i, values[i], values[i-1], values)
	}
	if assert.NotEmpty(t, values) {
		assert.Equal(t, t0.Add(2*interval), values[len(values)-1], "the subscriber holds the latest tick's value")
	}
}
