package observable

import (
	"context"
	"testing"
	"time"

	"github.com/rxhystrix/rxhystrix/internal/clock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hedgeOf returns a HedgeSingle of o's Single, with a delay of d on c.
func hedgeOf(t *testing.T, o Observable[int], d time.Duration, c clock.Clock) *HedgeSingle[int] {
	t.Helper()
	s, ok := o.AsSingle()
	require.True(t, ok)
	return &HedgeSingle[int]{Attempt: s, Policy: &HedgePolicy{Delay: func() time.Duration { return d }}, Clock: c}
}

func TestHedgeSingleResetsAfterACallThatLeftNothingBehind(t *testing.T) {
	assert.True(t, (&HedgeSingle[int]{}).Reset(), "one never used")

	mc := clock.NewManual(epoch)
	a := newAttempts()
	h := hedgeOf(t, a.observable(), 100*time.Millisecond, mc)
	a.answers[0] <- nil
	v, err := h.Call(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 0, v)
	require.True(t, h.Reset(), "the first attempt answered before the delay")

	// Reset, it hedges again exactly at the delay.
	done := make(chan int)
	go func() {
		v, _ := h.Call(context.Background())
		done <- v
	}()
	assert.Equal(t, 0, <-a.started)
	assert.Equal(t, 1, <-a.started)
	mc.Advance(100*time.Millisecond - 1)
	assert.Equal(t, int32(2), a.calls.Load(), "no hedge before the delay")
	mc.Advance(1)
	assert.Equal(t, 2, <-a.started, "the hedge starts at the delay")
	a.answers[2] <- nil
	assert.Equal(t, 2, <-done)
	assert.ErrorIs(t, <-a.ended[1], context.Canceled)
	assert.False(t, h.Reset(), "a hedge started: it may still hold the race")
}

// A race whose wait for a hedge came due holds on to nothing a Reset could
// tell is over, even when no hedge started: the timer list may still be
// telling it.
func TestHedgeSingleKeepsARaceWhoseDelayCameDue(t *testing.T) {
	mc := clock.NewManual(epoch)
	a := newAttempts()
	h := hedgeOf(t, a.observable(), 100*time.Millisecond, mc)
	h.Policy.Permit = func() bool { return false }
	done := make(chan int)
	go func() {
		v, _ := h.Call(context.Background())
		done <- v
	}()
	assert.Equal(t, 0, <-a.started)
	mc.Advance(100 * time.Millisecond)
	a.answers[0] <- nil
	assert.Equal(t, 0, <-done)
	assert.Equal(t, int32(1), a.calls.Load(), "the permit refused the hedge")
	assert.False(t, h.Reset())
}

// The first attempt's context is the call's own: a run that keeps it finds
// it ended after its call, whatever later calls of a reset HedgeSingle do.
func TestHedgeSingleResetNeverReusesTheFirstAttemptsContext(t *testing.T) {
	var kept []context.Context
	o := FromFunc(func(ctx context.Context) (int, error) {
		kept = append(kept, ctx)
		return len(kept), nil
	})
	h := hedgeOf(t, o, time.Hour, clock.NewManual(epoch))
	for range 2 {
		_, err := h.Call(context.Background())
		require.NoError(t, err)
		require.True(t, h.Reset())
	}
	require.Len(t, kept, 2)
	assert.NotSame(t, kept[0], kept[1])
	assert.ErrorIs(t, kept[0].Err(), context.Canceled, "the first call's context stays ended")
	assert.ErrorIs(t, kept[1].Err(), context.Canceled)
}

// A race tells each attempt when it began it, on its clock, through
// AttemptStart; any other context tells nothing.
func TestAttemptStartIsWhenTheRaceBeganTheAttempt(t *testing.T) {
	mc := clock.NewManual(epoch)
	type start struct {
		at int64
		ok bool
	}
	starts := make(chan start, 2)
	release := make(chan struct{})
	o := FromFunc(func(ctx context.Context) (int, error) {
		at, ok := AttemptStart(ctx)
		starts <- start{at, ok}
		<-release
		return 1, nil
	})
	h := hedgeOf(t, o, 100*time.Millisecond, mc)
	done := make(chan int)
	go func() {
		v, _ := h.Call(context.Background())
		done <- v
	}()
	assert.Equal(t, start{epoch.UnixNano(), true}, <-starts, "the first attempt")
	mc.Advance(100 * time.Millisecond)
	assert.Equal(t, start{epoch.Add(100 * time.Millisecond).UnixNano(), true}, <-starts, "the hedge")
	close(release)
	assert.Equal(t, 1, <-done)

	_, ok := AttemptStart(context.Background())
	assert.False(t, ok)
}
