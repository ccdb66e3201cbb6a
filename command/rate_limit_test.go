package command

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An execution whose start was read before others took the places up to
// now is not refused on that old reading: reserve reads the clock again
// first, and refuses only if the place is not due on the new reading
// either.
func TestRateLimiterReadsTheClockAgainBeforeRefusing(t *testing.T) {
	const interval = int64(100 * time.Millisecond)
	l := &rateLimiter{tat: new(atomic.Int64)}
	l.params.Store(paramsOf(RateLimitConfig{Enabled: true, Rate: 10, Burst: 1}))
	_, _, _, ok := l.reserve(0, nil, 0)
	require.True(t, ok, "the first place")

	reads := 0
	clock := func() int64 { reads++; return interval }
	taken, wait, _, ok := l.reserve(0, clock, 0)
	assert.True(t, ok, "the place is due at the clock's time, an interval after the start read")
	assert.Equal(t, interval, taken, "taken at the new reading")
	assert.Zero(t, wait)
	assert.Equal(t, 1, reads)

	_, wait, _, ok = l.reserve(interval, clock, 0)
	assert.False(t, ok, "no place is due on the new reading either")
	assert.Equal(t, time.Duration(interval), wait, "the next place is an interval away")
	assert.Equal(t, 2, reads)
}
