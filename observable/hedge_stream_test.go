package observable

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rxhystrix/rxhystrix/internal/clock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// note is one notification of a stream: a value, an error, or completion.
type note struct {
	v    int
	err  error
	done bool
}

// streamAttemptsOf is a source whose subscriptions each emit what is sent
// on the channel of their number, until an error or completion, or until
// their context ends, which they record.
type streamAttemptsOf struct {
	calls   atomic.Int32
	started chan int
	notes   [3]chan note
	ended   [3]chan error
	// failing, if set, is asked by an attempt that is told to fail, with
	// its context, before it fails.
	failing func(n int, ctx context.Context) (fallback bool)
}

func newStreamAttempts() *streamAttemptsOf {
	s := &streamAttemptsOf{started: make(chan int, 3)}
	for i := range s.notes {
		s.notes[i] = make(chan note, 4)
		s.ended[i] = make(chan error, 1)
	}
	return s
}

func (s *streamAttemptsOf) observable() Observable[int] {
	return Create(func(ctx context.Context, o Observer[int]) {
		n := int(s.calls.Add(1)) - 1
		s.started <- n
		for {
			select {
			case e := <-s.notes[n]:
				switch {
				case e.err != nil && s.failing != nil && s.failing(n, ctx):
					o.OnNext(fallbackValue)
					o.OnCompleted()
				case e.err != nil:
					o.OnError(e.err)
				case e.done:
					o.OnCompleted()
				default:
					o.OnNext(e.v)
					continue
				}
				s.ended[n] <- nil
				return
			case <-ctx.Done():
				s.ended[n] <- ctx.Err()
				return
			}
		}
	})
}

// subscribeAside subscribes to o on a goroutine of its own, and returns
// once the first attempt has begun and waits for its hedge's delay on
// mc; the subscriber's notifications arrive on the channel.
func (s *streamAttemptsOf) subscribeAside(t *testing.T, ctx context.Context, o Observable[int], mc *clock.Manual) <-chan note {
	got := make(chan note, 8)
	go o.SubscribeFunc(ctx,
		func(v int) { got <- note{v: v} },
		func(err error) { got <- note{err: err} },
		func() { got <- note{done: true} })
	require.Equal(t, 0, <-s.started)
	require.NoError(t, mc.BlockUntil(context.Background(), 1))
	return got
}

func delayOf(d time.Duration) func() time.Duration { return func() time.Duration { return d } }

func TestHedgeStreamCommitsToTheFirstAttemptThatEmits(t *testing.T) {
	mc := clock.NewManual(epoch)
	s := newStreamAttempts()
	o := HedgeStreamOn(s.observable(), HedgePolicy{Delay: delayOf(100 * time.Millisecond)}, mc)
	got := s.subscribeAside(t, context.Background(), o, mc)

	mc.Advance(100*time.Millisecond - 1)
	assert.Equal(t, int32(1), s.calls.Load(), "no hedge before the delay")
	mc.Advance(1)
	require.Equal(t, 1, <-s.started, "the hedge starts at the delay")

	s.notes[1] <- note{v: 10}
	assert.Equal(t, note{v: 10}, <-got, "the hedge's first value is the subscriber's")
	assert.ErrorIs(t, <-s.ended[0], context.Canceled, "the first attempt, which had not emitted, is cancelled")
	s.notes[1] <- note{v: 11}
	s.notes[1] <- note{err: errFlaky}
	assert.Equal(t, note{v: 11}, <-got, "the winner's later values follow")
	assert.Equal(t, note{err: errFlaky}, <-got, "and its failure: no attempt answers for it")
	assert.NoError(t, <-s.ended[1])
	assert.Equal(t, int32(2), s.calls.Load())
}

func TestHedgeStreamFirstValueInTimeStartsNoHedge(t *testing.T) {
	mc := clock.NewManual(epoch)
	s := newStreamAttempts()
	o := HedgeStreamOn(s.observable(), HedgePolicy{Delay: delayOf(time.Second)}, mc)
	got := s.subscribeAside(t, context.Background(), o, mc)

	s.notes[0] <- note{v: 1}
	assert.Equal(t, note{v: 1}, <-got)
	mc.Advance(time.Hour)
	s.notes[0] <- note{v: 2}
	s.notes[0] <- note{done: true}
	assert.Equal(t, note{v: 2}, <-got)
	assert.Equal(t, note{done: true}, <-got)
	assert.NoError(t, <-s.ended[0])
	assert.Equal(t, int32(1), s.calls.Load(), "the stream that emitted in time is never hedged")
}

func TestHedgeStreamCompletionWithoutValuesWins(t *testing.T) {
	mc := clock.NewManual(epoch)
	s := newStreamAttempts()
	o := HedgeStreamOn(s.observable(), HedgePolicy{Delay: delayOf(time.Second)}, mc)
	got := s.subscribeAside(t, context.Background(), o, mc)
	mc.Advance(time.Second)
	require.Equal(t, 1, <-s.started)

	s.notes[0] <- note{done: true}
	assert.Equal(t, note{done: true}, <-got, "an empty stream is an answer")
	assert.ErrorIs(t, <-s.ended[1], context.Canceled, "the hedge is cancelled")
	assert.NoError(t, <-s.ended[0])
}

func TestHedgeStreamFailureBeforeAValue(t *testing.T) {
	t.Run("alone, it is the stream's failure", func(t *testing.T) {
		mc := clock.NewManual(epoch)
		s := newStreamAttempts()
		o := HedgeStreamOn(s.observable(), HedgePolicy{Delay: delayOf(time.Second)}, mc)
		got := s.subscribeAside(t, context.Background(), o, mc)
		s.notes[0] <- note{err: errFlaky}
		assert.Equal(t, note{err: errFlaky}, <-got)
		assert.Equal(t, int32(1), s.calls.Load(), "a failure starts no hedge")
		<-s.ended[0]
	})
	t.Run("OnError starts the hedge at once", func(t *testing.T) {
		mc := clock.NewManual(epoch)
		s := newStreamAttempts()
		o := HedgeStreamOn(s.observable(), HedgePolicy{Delay: delayOf(time.Second), OnError: true}, mc)
		got := s.subscribeAside(t, context.Background(), o, mc)
		s.notes[0] <- note{err: errFlaky}
		require.Equal(t, 1, <-s.started)
		s.notes[1] <- note{v: 7}
		s.notes[1] <- note{done: true}
		assert.Equal(t, note{v: 7}, <-got)
		assert.Equal(t, note{done: true}, <-got)
		<-s.ended[0]
		<-s.ended[1]
	})
	t.Run("with a hedge in flight, the hedge may still win", func(t *testing.T) {
		mc := clock.NewManual(epoch)
		s := newStreamAttempts()
		o := HedgeStreamOn(s.observable(), HedgePolicy{Delay: delayOf(time.Second)}, mc)
		got := s.subscribeAside(t, context.Background(), o, mc)
		mc.Advance(time.Second)
		require.Equal(t, 1, <-s.started)
		s.notes[0] <- note{err: errFlaky}
		assert.NoError(t, <-s.ended[0])
		s.notes[1] <- note{v: 3}
		s.notes[1] <- note{done: true}
		assert.Equal(t, note{v: 3}, <-got, "the first's failure was not the stream's")
		assert.Equal(t, note{done: true}, <-got)
		<-s.ended[1]
	})
}

func TestHedgeStreamFailingAttemptAnswersForTheSubscriptionsContext(t *testing.T) {
	mc := clock.NewManual(epoch)
	s := newStreamAttempts()
	asked := make(chan bool, 2)
	// An attempt whose failure would become a fallback's value asks the
	// race first, with the context its subscription saw.
	s.failing = func(_ int, ctx context.Context) bool {
		goesOn := FailingAttempt(ctx, errBoom)
		asked <- goesOn
		return !goesOn
	}
	o := HedgeStreamOn(s.observable(), HedgePolicy{Delay: delayOf(time.Second)}, mc)
	got := s.subscribeAside(t, context.Background(), o, mc)
	mc.Advance(time.Second)
	require.Equal(t, 1, <-s.started)

	s.notes[0] <- note{err: errFlaky}
	assert.True(t, <-asked, "the hedge may still answer: the first fails as it is")
	<-s.ended[0]
	s.notes[1] <- note{err: errFlaky}
	assert.False(t, <-asked, "the last attempt's answer is the stream's")
	assert.Equal(t, note{v: fallbackValue}, <-got, "so its fallback's value wins")
	assert.Equal(t, note{done: true}, <-got)
	<-s.ended[1]
}

func TestHedgeStreamUnsubscribedCancelsEveryAttempt(t *testing.T) {
	mc := clock.NewManual(epoch)
	s := newStreamAttempts()
	o := HedgeStreamOn(s.observable(), HedgePolicy{Delay: delayOf(time.Second)}, mc)
	ctx, cancel := context.WithCancel(context.Background())
	got := s.subscribeAside(t, ctx, o, mc)
	mc.Advance(time.Second)
	require.Equal(t, 1, <-s.started)

	cancel()
	assert.ErrorIs(t, <-s.ended[0], context.Canceled)
	assert.ErrorIs(t, <-s.ended[1], context.Canceled)
	select {
	case n := <-got:
		t.Fatalf("the subscriber that left was told %+v", n)
	default:
	}
}

func TestHedgeStreamOfASynchronousSourceIsTheSource(t *testing.T) {
	mc := clock.NewManual(epoch)
	o := HedgeStreamOn(Just(1, 2, 3), HedgePolicy{Delay: delayOf(time.Second)}, mc)
	for range 2 { // each subscription is a race of its own
		got, err := o.ToSlice(context.Background())
		require.NoError(t, err)
		assert.Equal(t, []int{1, 2, 3}, got)
	}
	v, err := HedgeStreamOn(Error[int](errFlaky), HedgePolicy{Delay: delayOf(time.Second)}, mc).First(context.Background())
	assert.ErrorIs(t, err, errFlaky)
	assert.Zero(t, v)
}

func TestHedgeStreamRefusesABadPolicy(t *testing.T) {
	assert.PanicsWithValue(t, "observable: HedgeStream: HedgePolicy.Delay: nil", func() {
		HedgeStream(Just(1), HedgePolicy{})
	})
}

// A hedged stream whose subscriber leaves before the delay starts no hedge
// when the delay passes, and asks Permit for none: the attempt that ended
// with the subscription may not have told the race.
func TestHedgeStreamStartsNoHedgeOnceItsSubscriberLeft(t *testing.T) {
	mc := clock.NewManual(epoch)
	s := newStreamAttempts()
	var asked atomic.Int32
	o := HedgeStreamOn(s.observable(), HedgePolicy{
		Delay:  delayOf(time.Second),
		Permit: func() bool { asked.Add(1); return true },
	}, mc)
	ctx, cancel := context.WithCancel(context.Background())
	s.subscribeAside(t, ctx, o, mc)
	cancel()
	assert.ErrorIs(t, <-s.ended[0], context.Canceled)
	mc.Advance(time.Second)
	assert.Zero(t, asked.Load(), "Permit asked for a hedge")
	assert.Equal(t, int32(1), s.calls.Load(), "a hedge started")
}
