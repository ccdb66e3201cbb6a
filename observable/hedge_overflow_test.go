package observable

import (
	"context"
	"math"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/internal/clock"
	"github.com/rxhystrix/rxhystrix/internal/timerlist"
)

// A Delay too large to reach (math.MaxInt64: "never hedge") is a hedge
// that never comes, not one whose due time wrapped round into the past
// and starts at once.
func TestHedgeDelayTooLargeToReachNeverStarts(t *testing.T) {
	mc := clock.NewManual(epoch)
	a := newAttempts()
	var permits atomic.Int32
	o := a.observable().HedgeOn(HedgePolicy{
		Delay:  func() time.Duration { return math.MaxInt64 },
		Permit: func() bool { permits.Add(1); return false },
	}, mc)

	done := callAside(func() (int, error) { return o.First(context.Background()) })
	assert.Equal(t, 0, <-a.started)
	require.NoError(t, mc.BlockUntil(context.Background(), 1))
	mc.Advance(time.Hour)
	assert.Equal(t, 1, timerlist.For(mc).Waiting(), "the hedge still waits for its delay")

	a.answers[0] <- nil
	assert.Equal(t, note{v: 0}, <-done)
	assert.Zero(t, permits.Load(), "no hedge was due")
	assert.Zero(t, timerlist.For(mc).Waiting())
}

// So is a pushback too large to reach, which a Pushback may say.
func TestHedgePushbackTooLargeToReachNeverStarts(t *testing.T) {
	mc := clock.NewManual(epoch)
	a := newAttempts()
	done, s := hedgeAside(t, a, HedgePolicy{MaxHedges: 2, OnError: true, Delay: func() time.Duration { return 100 * time.Millisecond }}, mc)
	mc.Advance(100 * time.Millisecond)
	require.Equal(t, 1, <-a.started)

	a.answers[1] <- pushedBack{wait: math.MaxInt64, said: true}
	<-s.settled
	mc.Advance(time.Hour)
	assert.Equal(t, 1, timerlist.For(mc).Waiting(), "the next hedge still waits for the pushback")
	noStart(t, a, 2, "no hedge before the pushback's wait")

	a.answers[0] <- nil
	assert.Equal(t, note{v: 0}, <-done)
	assert.Zero(t, timerlist.For(mc).Waiting())
}
