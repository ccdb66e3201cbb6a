package metricsstream

import (
	"context"
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
