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

// HedgePolicy.MaxHedges is "the number of attempts that may start beside
// the first", and Validate takes any that is not negative: the largest
// (no limit but Permit's) must start hedges, not none. attempts() added
// one to it and wrapped around to a negative count.
func TestHedgeWithTheLargestMaxHedgesStartsHedges(t *testing.T) {
	mc := clock.NewManual(epoch)
	a := newAttempts()
	p := HedgePolicy{MaxHedges: math.MaxInt, Delay: func() time.Duration { return time.Second }}
	require.NoError(t, p.Validate())
	o := a.observable().HedgeOn(p, mc)

	done := callAside(func() (int, error) { return o.First(context.Background()) })
	assert.Equal(t, 0, <-a.started)
	wait, cancel := context.WithTimeout(context.Background(), 10*time.Second) // a safety net, not a timing
	defer cancel()
	if err := mc.BlockUntil(wait, 1); err != nil {
		a.answers[0] <- nil // let the call end
		<-done
		t.Fatal("no wait armed for the first hedge")
	}
	mc.Advance(time.Second)
	assert.Equal(t, 1, <-a.started, "the hedge starts at the delay")
	a.answers[1] <- nil
	assert.Equal(t, note{v: 1}, <-done)
	assert.ErrorIs(t, <-a.ended[0], context.Canceled)
	<-a.ended[1]
}
