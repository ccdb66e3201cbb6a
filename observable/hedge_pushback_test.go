package observable

import (
	"context"
	"testing"
	"time"

	"github.com/rxhystrix/rxhystrix/internal/clock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// settling is a Single whose results of subscriptions (the hedges') are
// told on settled once the race has taken them, and their start on
// begun, as the race timed it (AttemptStart).
type settling struct {
	Single[int]
	settled chan struct{}
	begun   chan time.Time
}

func (s settling) SubscribeSingle(ctx context.Context, r SingleObserver[int]) {
	start, _ := AttemptStart(ctx)
	s.begun <- time.Unix(0, start)
	s.Single.SubscribeSingle(ctx, settledObserver{r, s.settled})
}

type settledObserver struct {
	r       SingleObserver[int]
	settled chan<- struct{}
}

func (o settledObserver) OnResult(v int, err error) {
	o.r.OnResult(v, err)
	o.settled <- struct{}{}
}

// hedgeAside starts First of a race of a's attempts under p on mc, and
// returns once the first attempt has begun and the race waits for its
// hedge's delay; each hedge's start is told on s.begun and its result,
// once the race has taken it, on s.settled.
func hedgeAside(t *testing.T, a *attempts, p HedgePolicy, mc *clock.Manual) (done <-chan note, s settling) {
	t.Helper()
	one, ok := a.observable().AsSingle()
	require.True(t, ok)
	s = settling{one, make(chan struct{}, len(a.answers)), make(chan time.Time, len(a.answers))}
	o := FromSingle[int](&HedgeSingle[int]{Attempt: s, Policy: &p, Clock: mc})
	done = callAside(func() (int, error) { return o.First(context.Background()) })
	require.Equal(t, 0, <-a.started)
	require.NoError(t, mc.BlockUntil(context.Background(), 1))
	return done, s
}

// noStart asserts that no attempt has started beyond the first n.
func noStart(t *testing.T, a *attempts, n int32, why string) {
	t.Helper()
	require.Equal(t, n, a.calls.Load(), why)
}

// With OnError a failure starts the next hedge at once; one that carries
// a pushback starts it the pushback's wait after the failure instead.
func TestHedgeFailureWithPushbackWaitsItInPlaceOfOnError(t *testing.T) {
	mc := clock.NewManual(epoch)
	a := newAttempts()
	done, s := hedgeAside(t, a, HedgePolicy{MaxHedges: 2, OnError: true, Delay: func() time.Duration { return 100 * time.Millisecond }}, mc)
	mc.Advance(100 * time.Millisecond)
	require.Equal(t, 1, <-a.started)

	a.answers[1] <- pushedBack{wait: 300 * time.Millisecond, said: true}
	<-s.settled
	mc.Advance(300*time.Millisecond - 1) // past the delay of 100ms the next hedge had
	noStart(t, a, 2, "no hedge before the pushback's wait")
	mc.Advance(1)
	assert.Equal(t, 2, <-a.started, "the next hedge, the pushback's wait after the failure")
	<-s.begun // the first hedge's
	assert.Equal(t, epoch.Add(400*time.Millisecond), (<-s.begun).UTC(), "began at the pushback's end, not before")

	a.answers[2] <- nil
	assert.Equal(t, note{v: 2}, <-done)
	assert.ErrorIs(t, <-a.ended[0], context.Canceled)
}

// Without OnError a failure starts nothing sooner; one that carries a
// pushback moves the next hedge to the pushback's wait after it.
func TestHedgeFailureWithPushbackMovesTheNextHedge(t *testing.T) {
	mc := clock.NewManual(epoch)
	a := newAttempts()
	done, s := hedgeAside(t, a, HedgePolicy{MaxHedges: 2, Delay: func() time.Duration { return 100 * time.Millisecond }}, mc)
	mc.Advance(100 * time.Millisecond)
	require.Equal(t, 1, <-a.started)
	mc.Advance(50 * time.Millisecond)

	a.answers[1] <- pushedBack{wait: 200 * time.Millisecond, said: true}
	<-s.settled
	mc.Advance(200*time.Millisecond - 1) // past the next hedge's own time, 200ms after the start
	noStart(t, a, 2, "no hedge before the pushback's wait")
	mc.Advance(1)
	assert.Equal(t, 2, <-a.started)
	<-s.begun // the first hedge's
	assert.Equal(t, epoch.Add(350*time.Millisecond), (<-s.begun).UTC(), "began at the pushback's end, not before")

	a.answers[0] <- nil
	assert.Equal(t, note{v: 0}, <-done)
	assert.ErrorIs(t, <-a.ended[2], context.Canceled)
}

// A pushback that says not to try again starts no more hedges: the
// attempts running go on, and when none is left its failure is the
// result; a pushback that said nothing leaves the policy as it is.
func TestHedgePushbackNotToTryAgainStartsNoMoreHedges(t *testing.T) {
	mc := clock.NewManual(epoch)
	a := newAttempts()
	done, s := hedgeAside(t, a, HedgePolicy{MaxHedges: 3, OnError: true, Delay: func() time.Duration { return 100 * time.Millisecond }}, mc)
	mc.Advance(100 * time.Millisecond)
	require.Equal(t, 1, <-a.started)

	stop := pushedBack{wait: -1, said: true}
	a.answers[1] <- stop
	<-s.settled
	mc.Advance(time.Hour)
	noStart(t, a, 2, "no hedge after the pushback")

	a.answers[0] <- errFlaky
	assert.Equal(t, note{err: errFlaky}, <-done, "the last failure, once none is left")

	a = newAttempts()
	done, _ = hedgeAside(t, a, HedgePolicy{OnError: true, Delay: func() time.Duration { return time.Hour }}, mc)
	a.answers[0] <- pushedBack{wait: time.Second, said: false}
	assert.Equal(t, 1, <-a.started, "OnError, as if there were no pushback")
	a.answers[1] <- nil
	assert.Equal(t, note{v: 1}, <-done)
}

// An attempt that tells the race it fails (FailingAttempt) with a
// pushback has it heard as a result's: here it says not to try again.
func TestFailingAttemptWithPushback(t *testing.T) {
	mc := clock.NewManual(epoch)
	a := newAttempts()
	asked := make(chan bool, 1)
	o := FromFunc(func(ctx context.Context) (int, error) {
		if n := a.calls.Load(); n == 1 { // the hedge: it fails, with a pushback
			a.calls.Add(1)
			a.started <- 1
			asked <- FailingAttempt(ctx, pushedBack{wait: -1, said: true})
			return 0, errFlaky
		}
		return a.observable().First(ctx)
	}).HedgeOn(HedgePolicy{MaxHedges: 2, OnError: true, Delay: func() time.Duration { return 100 * time.Millisecond }}, mc)
	done := callAside(func() (int, error) { return o.First(context.Background()) })
	require.Equal(t, 0, <-a.started)
	require.NoError(t, mc.BlockUntil(context.Background(), 1))
	mc.Advance(100 * time.Millisecond)
	require.Equal(t, 1, <-a.started)
	assert.True(t, <-asked, "the first attempt runs on")
	mc.Advance(time.Hour)
	assert.Equal(t, int32(2), a.calls.Load(), "no hedge after the pushback")
	a.answers[0] <- nil
	assert.Equal(t, note{v: 0}, <-done)
}
