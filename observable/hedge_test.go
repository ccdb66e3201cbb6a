package observable

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rxhystrix/rxhystrix/internal/clock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// attempts is a Single whose calls each wait for an answer sent on the
// channel of their number, or for their context's end, which they record.
type attempts struct {
	calls   atomic.Int32
	started chan int
	answers [4]chan error
	ended   [4]chan error
}

func newAttempts() *attempts {
	a := &attempts{started: make(chan int, 4)}
	for i := range a.answers {
		a.answers[i] = make(chan error, 1)
		a.ended[i] = make(chan error, 1)
	}
	return a
}

func (a *attempts) observable() Observable[int] {
	return FromFunc(func(ctx context.Context) (int, error) {
		n := int(a.calls.Add(1)) - 1
		a.started <- n
		select {
		case err := <-a.answers[n]:
			a.ended[n] <- nil
			return n, err
		case <-ctx.Done():
			a.ended[n] <- ctx.Err()
			return 0, ctx.Err()
		}
	})
}

// callAside calls f on a goroutine of its own; its result comes on the
// channel.
func callAside(f func() (int, error)) <-chan note {
	done := make(chan note, 1)
	go func() {
		v, err := f()
		done <- note{v: v, err: err}
	}()
	return done
}

func TestHedgeStartsAtTheDelayAndCancelsTheLoser(t *testing.T) {
	mc := clock.NewManual(epoch)
	a := newAttempts()
	o := a.observable().HedgeOn(HedgePolicy{Delay: func() time.Duration { return 100 * time.Millisecond }}, mc)

	done := callAside(func() (int, error) { return o.First(context.Background()) })
	assert.Equal(t, 0, <-a.started)
	require.NoError(t, mc.BlockUntil(context.Background(), 1))
	mc.Advance(100*time.Millisecond - 1)
	assert.Equal(t, int32(1), a.calls.Load(), "no hedge before the delay")
	mc.Advance(1)
	assert.Equal(t, 1, <-a.started, "the hedge starts at the delay")
	assert.Equal(t, 0, mc.Pending(), "one hedge at most: no timer for another")

	a.answers[1] <- nil // the hedge wins
	assert.Equal(t, note{v: 1}, <-done)
	assert.ErrorIs(t, <-a.ended[0], context.Canceled, "the first attempt is cancelled")
	assert.NoError(t, <-a.ended[1])
}

func TestHedgeNeverStartsWhenTheFirstAnswersInTime(t *testing.T) {
	mc := clock.NewManual(epoch)
	a := newAttempts()
	o := a.observable().HedgeOn(HedgePolicy{Delay: func() time.Duration { return time.Second }}, mc)
	a.answers[0] <- nil
	v, err := o.First(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 0, v)
	// The races of a clock share one timer, which a race that ended in
	// time leaves armed: it fires for nothing, and stays unarmed.
	mc.Advance(time.Hour)
	assert.Equal(t, int32(1), a.calls.Load())
	assert.Equal(t, 0, mc.Pending(), "the timer stays armed with no race waiting")
}

func TestHedgeFailureBeforeTheDelayIsTheResultUnlessOnError(t *testing.T) {
	mc := clock.NewManual(epoch)
	a := newAttempts()
	delay := func() time.Duration { return time.Second }
	a.answers[0] <- errFlaky
	_, err := a.observable().HedgeOn(HedgePolicy{Delay: delay}, mc).First(context.Background())
	assert.ErrorIs(t, err, errFlaky)
	assert.Equal(t, int32(1), a.calls.Load(), "a failure starts no hedge")

	a = newAttempts()
	a.answers[0] <- errFlaky
	a.answers[1] <- nil
	v, err := a.observable().HedgeOn(HedgePolicy{Delay: delay, OnError: true}, mc).First(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 1, v, "OnError: the failure starts the hedge at once")
}

func TestHedgeDelayIsAskedForEachHedgeAndPermitRefuses(t *testing.T) {
	mc := clock.NewManual(epoch)
	a := newAttempts()
	var asked atomic.Int32
	delays := []time.Duration{10 * time.Millisecond, 30 * time.Millisecond}
	var permit atomic.Bool
	permit.Store(true)
	p := HedgePolicy{
		MaxHedges: 3,
		Delay:     func() time.Duration { return delays[min(int(asked.Add(1))-1, 1)] },
		Permit:    func() bool { return permit.Load() },
	}
	f := a.observable().HedgeOn(p, mc).ToFuture(context.Background())
	<-a.started
	require.NoError(t, mc.BlockUntil(context.Background(), 1))
	mc.Advance(10 * time.Millisecond)
	assert.Equal(t, 1, <-a.started)
	require.NoError(t, mc.BlockUntil(context.Background(), 1))
	mc.Advance(30*time.Millisecond - 1)
	assert.Equal(t, int32(2), a.calls.Load(), "the second delay is asked anew")
	permit.Store(false)
	mc.Advance(1)
	assert.Equal(t, int32(2), a.calls.Load(), "the permit refused the second hedge")

	a.answers[0] <- errors.New("first fails")
	a.answers[1] <- nil
	v, err := f.Get(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 1, v, "a failure waits for the attempts still in flight")
}

func TestHedgeAllFailingIsTheLastFailure(t *testing.T) {
	mc := clock.NewManual(epoch)
	a := newAttempts()
	attempt, _ := a.observable().AsSingle()
	// The race asks Wins of each failure it takes, under its lock: the
	// second attempt answers only once the race has taken the first's
	// failure, and then it is the last.
	taken := make(chan error, 2)
	h := &HedgeSingle[int]{Attempt: attempt, Policy: &HedgePolicy{Delay: func() time.Duration { return 0 }}, Clock: mc,
		Wins: func(err error) bool { taken <- err; return false }}
	f := FromSingle[int](h).ToFuture(context.Background())
	<-a.started
	mc.Advance(0)
	<-a.started
	first := errors.New("first")
	a.answers[0] <- first
	assert.Same(t, first, <-taken)
	a.answers[1] <- errFlaky
	_, err := f.Get(context.Background())
	assert.ErrorIs(t, err, errFlaky)
}

func TestHedgePolicyValidate(t *testing.T) {
	assert.ErrorContains(t, HedgePolicy{MaxHedges: -1, Delay: func() time.Duration { return 0 }}.Validate(), "HedgePolicy.MaxHedges")
	assert.ErrorContains(t, HedgePolicy{}.Validate(), "HedgePolicy.Delay")
}

// The races of a clock share its hedge timers: each hedge still starts
// exactly at its own race's delay, whatever the order the races began
// in, and a race that ended takes no hedge with it when the timer fires.
func TestHedgesOfManyRacesStartEachAtItsDelay(t *testing.T) {
	mc := clock.NewManual(epoch)
	delays := []time.Duration{30 * time.Millisecond, 10 * time.Millisecond, 20 * time.Millisecond, 10 * time.Millisecond}
	races := make([]*attempts, len(delays))
	done := make(chan error, len(delays))
	for i, d := range delays {
		races[i] = newAttempts()
		o := races[i].observable().HedgeOn(HedgePolicy{Delay: func() time.Duration { return d }}, mc)
		go func() {
			_, err := o.First(context.Background())
			done <- err
		}()
		assert.Equal(t, 0, <-races[i].started)
	}
	// The last race ends before its delay: its hedge must not start.
	races[3].answers[0] <- nil
	require.NoError(t, <-done)

	hedged := func() (n []int) {
		for i, a := range races {
			if a.calls.Load() > 1 {
				n = append(n, i)
			}
		}
		return n
	}
	for _, step := range []struct {
		by   time.Duration
		want []int
	}{
		{10*time.Millisecond - 1, nil},
		{1, []int{1}},
		{10*time.Millisecond - 1, []int{1}},
		{1, []int{1, 2}},
		{10 * time.Millisecond, []int{0, 1, 2}},
	} {
		mc.Advance(step.by)
		for _, i := range step.want {
			if races[i].calls.Load() == 1 {
				select {
				case n := <-races[i].started:
					assert.Equal(t, 1, n, "race %d's hedge", i)
				case <-time.After(10 * time.Second):
					t.Fatalf("race %d's hedge did not start at %v", i, mc.Since(epoch))
				}
			}
		}
		assert.Equal(t, step.want, hedged(), "after %v", mc.Since(epoch))
	}
	for _, i := range []int{0, 1, 2} {
		races[i].answers[1] <- nil // each hedge wins
		require.NoError(t, <-done)
	}
	mc.Advance(time.Hour)
	assert.Equal(t, int32(1), races[3].calls.Load(), "the race that ended took no hedge")
}

// A HedgeSingle's Wins names the errors that end the race as a value
// does: the first attempt's failure then is the answer, and the hedge is
// cancelled; without it, the hedge may still win.
func TestHedgeSingleWinsEndsTheRaceOnTheErrorsItNames(t *testing.T) {
	for _, tc := range []struct {
		name  string
		wins  func(error) bool
		wantV int
		want  error
	}{
		{"named", func(err error) bool { return errors.Is(err, errFlaky) }, 0, errFlaky},
		{"not named", nil, 1, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mc := clock.NewManual(epoch)
			a := newAttempts()
			one, _ := a.observable().AsSingle()
			h := &HedgeSingle[int]{Attempt: one, Clock: mc, Wins: tc.wins,
				Policy: &HedgePolicy{MaxHedges: 1, Delay: func() time.Duration { return 100 * time.Millisecond }}}
			done := callAside(func() (int, error) { return h.Call(context.Background()) })
			assert.Equal(t, 0, <-a.started)
			require.NoError(t, mc.BlockUntil(context.Background(), 1))
			mc.Advance(100 * time.Millisecond)
			assert.Equal(t, 1, <-a.started, "the hedge starts at the delay")

			a.answers[0] <- errFlaky
			if tc.wins == nil {
				assert.NoError(t, <-a.ended[0])
				a.answers[1] <- nil
			} else {
				assert.ErrorIs(t, <-a.ended[1], context.Canceled, "the hedge is cancelled")
			}
			r := <-done
			assert.Equal(t, tc.wantV, r.v)
			assert.Equal(t, tc.want, r.err)
		})
	}
}

// errFinal is a failure that no other attempt makes good.
var errFinal = errors.New("the request is wrong")

func isFinal(err error) bool { return errors.Is(err, errFinal) }

// A failure HedgePolicy.Final names is the answer: the race ends with it,
// and the hedge in flight is cancelled; another failure leaves the race to
// the hedge.
func TestHedgeFinalFailureEndsTheRace(t *testing.T) {
	mc := clock.NewManual(epoch)
	a := newAttempts()
	o := a.observable().HedgeOn(HedgePolicy{Delay: func() time.Duration { return 100 * time.Millisecond }, Final: isFinal}, mc)
	done := callAside(func() (int, error) { return o.First(context.Background()) })
	assert.Equal(t, 0, <-a.started)
	require.NoError(t, mc.BlockUntil(context.Background(), 1))
	mc.Advance(100 * time.Millisecond)
	assert.Equal(t, 1, <-a.started)

	a.answers[1] <- errFinal // the hedge's answer, while the first hangs
	r := <-done
	assert.ErrorIs(t, r.err, errFinal)
	assert.ErrorIs(t, <-a.ended[0], context.Canceled, "the first attempt is cancelled")
}

// An attempt that tells the race it is failing with a failure Final names
// keeps its answer: the race ends with what it makes of it.
func TestHedgeFailingAttemptWithAFinalFailureAnswers(t *testing.T) {
	mc := clock.NewManual(epoch)
	var told atomic.Bool
	calls := atomic.Int32{}
	first := make(chan struct{})
	o := FromFunc(func(ctx context.Context) (int, error) {
		if calls.Add(1) == 1 {
			close(first)
			<-ctx.Done()
			return 0, ctx.Err()
		}
		told.Store(FailingAttempt(ctx, errFinal))
		return 42, nil // what the attempt makes of its failure
	}).HedgeOn(HedgePolicy{Delay: func() time.Duration { return 0 }, Final: isFinal}, mc)
	v, err := o.First(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 42, v)
	assert.False(t, told.Load(), "the race does not do without its answer")
	<-first
}

// A hedged stream ends on a failure before a value that Final names.
func TestHedgeStreamFinalFailureEndsTheRace(t *testing.T) {
	mc := clock.NewManual(epoch)
	s := newStreamAttempts()
	o := HedgeStreamOn(s.observable(), HedgePolicy{Delay: delayOf(time.Second), Final: isFinal}, mc)
	got := s.subscribeAside(t, context.Background(), o, mc)
	mc.Advance(time.Second)
	require.Equal(t, 1, <-s.started)
	s.notes[1] <- note{err: errFinal}
	assert.Equal(t, note{err: errFinal}, <-got)
	assert.ErrorIs(t, <-s.ended[0], context.Canceled, "the first attempt is cancelled")
	<-s.ended[1]
}

// panickySingle answers its first answers calls on the caller's
// goroutine with 1, and panics in those after; it counts the
// subscriptions made to it (an asynchronous Single: a hedge of it starts
// on the goroutine of the hedge's timer).
type panickySingle struct {
	answers              int32
	calls, subscriptions atomic.Int32
}

func (p *panickySingle) Call(context.Context) (int, error) {
	if p.calls.Add(1) > p.answers {
		panic("user code")
	}
	return 1, nil
}

func (p *panickySingle) SubscribeSingle(ctx context.Context, r SingleObserver[int]) {
	p.subscriptions.Add(1)
	r.OnResult(0, ctx.Err())
}

func (*panickySingle) Async() bool { return true }

// A first attempt that panics ends the call: the panic propagates to the
// caller (the package doc), and no hedge of that call starts afterwards,
// long after its caller recovered, with nobody to receive its result.
func TestHedgeStartsNoHedgeAfterTheFirstAttemptPanicked(t *testing.T) {
	mc := clock.NewManual(epoch)
	p := &panickySingle{}
	o := FromSingle[int](p).HedgeOn(HedgePolicy{Delay: func() time.Duration { return time.Second }}, mc)

	mustPanicWith(t, "user code", func() { _, _ = o.First(context.Background()) })
	assert.Equal(t, int32(1), p.calls.Load())
	mc.Advance(time.Hour)
	assert.Equal(t, int32(0), p.subscriptions.Load(), "hedges started after the call panicked")
}

// panickyOnSubscribe is an asynchronous Single whose first subscription
// panics, and which counts the subscriptions after it.
type panickyOnSubscribe struct{ subscriptions atomic.Int32 }

func (p *panickyOnSubscribe) Call(context.Context) (int, error) { return 0, nil }

func (p *panickyOnSubscribe) SubscribeSingle(ctx context.Context, r SingleObserver[int]) {
	if p.subscriptions.Add(1) == 1 {
		panic("user code")
	}
	r.OnResult(0, ctx.Err())
}

func (*panickyOnSubscribe) Async() bool { return true }

func TestHedgeSubscriptionStartsNoHedgeAfterTheFirstAttemptPanicked(t *testing.T) {
	mc := clock.NewManual(epoch)
	p := &panickyOnSubscribe{}
	o := FromSingle[int](p).HedgeOn(HedgePolicy{Delay: func() time.Duration { return time.Second }}, mc)

	rec := newRecorder[int]()
	mustPanicWith(t, "user code", func() { o.Subscribe(context.Background(), rec) })
	mc.Advance(time.Hour)
	assert.Equal(t, int32(1), p.subscriptions.Load(), "hedges started after the subscription panicked")
	assert.False(t, rec.terminated(), "nothing is told after the panic")
}

// A HedgeSingle made ready by Reset after a call that returned abandons
// its next race too when that race's first attempt panics: the reused
// race does not remember that the last one returned.
func TestHedgeResetThenFirstAttemptPanicsStartsNoHedge(t *testing.T) {
	mc := clock.NewManual(epoch)
	p := &panickySingle{answers: 1}
	h := &HedgeSingle[int]{Attempt: p, Policy: &HedgePolicy{Delay: func() time.Duration { return time.Second }}, Clock: mc}
	v, err := h.Call(context.Background())
	require.NoError(t, err)
	require.Equal(t, 1, v)
	require.True(t, h.Reset())

	mustPanicWith(t, "user code", func() { _, _ = h.Call(context.Background()) })
	mc.Advance(time.Hour)
	assert.Equal(t, int32(0), p.subscriptions.Load(), "hedges started after the call panicked")
}
