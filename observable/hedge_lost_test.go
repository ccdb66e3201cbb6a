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

// LostAttempt tells an attempt that its race ended it (another attempt
// answered) from one whose caller left, and from one still running.
func TestLostAttemptTellsTheRacesEndFromTheCallers(t *testing.T) {
	for _, callerLeaves := range []bool{false, true} {
		mc := clock.NewManual(epoch)
		started := make(chan bool, 2) // LostAttempt as each attempt begins
		lost := make(chan bool, 1)    // LostAttempt once the first has ended
		hedge := make(chan struct{})
		var n atomic.Int32
		o := FromFunc(func(ctx context.Context) (int, error) {
			first := n.Add(1) == 1
			started <- LostAttempt(ctx)
			if first {
				<-ctx.Done()
				lost <- LostAttempt(ctx)
				return 0, ctx.Err()
			}
			<-hedge
			return 2, nil
		}).HedgeOn(HedgePolicy{Delay: func() time.Duration { return 100 * time.Millisecond }}, mc)

		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			_, err := o.First(ctx)
			done <- err
		}()
		assert.False(t, <-started, "a live attempt has not lost")
		require.NoError(t, mc.BlockUntil(context.Background(), 1))
		mc.Advance(100 * time.Millisecond)
		assert.False(t, <-started)
		if callerLeaves {
			cancel()
			assert.False(t, <-lost, "its caller left: nothing was lost to the race")
			close(hedge)
			<-done
		} else {
			close(hedge)
			assert.True(t, <-lost, "the hedge answered: the race ended the first")
			assert.NoError(t, <-done)
		}
		cancel()
	}
	assert.False(t, LostAttempt(context.Background()), "no race")
	assert.False(t, LostAttempt(nil)) //nolint:staticcheck // nil is answered, not a panic
}

// Hedge of a Discarder Single hands a loser's value to the Single's
// Discard, as HedgeStreamOn of the same Single does
// (TestHedgeStreamOfASingleDiscardsTheValueOfTheAttemptThatLost): the
// value was taken from the Single and nobody receives it.
func TestHedgeOfADiscarderSingleDiscardsTheLosersValue(t *testing.T) {
	t.Run("subscribed", func(t *testing.T) {
		mc := clock.NewManual(epoch)
		s := &firstAnswersLate{release: make(chan struct{}), lateDone: make(chan struct{})}
		o := FromSingle[int](s).HedgeOn(HedgePolicy{Delay: delayOf(time.Second)}, mc)
		r := newRecorder[int]()
		o.Subscribe(context.Background(), r)
		require.NoError(t, mc.BlockUntil(context.Background(), 1))
		mc.Advance(time.Second)
		r.wait(t)
		r.check(t, []int{10}, nil, true)
		close(s.release)
		<-s.lateDone
		assert.Equal(t, []string{"5"}, s.discards(), "the loser's value")
	})
	t.Run("called", func(t *testing.T) {
		mc := clock.NewManual(epoch)
		s := &firstCallOutlivesItsContext{}
		o := FromSingle[int](s).HedgeOn(HedgePolicy{Delay: delayOf(time.Second)}, mc)
		got := make(chan int, 1)
		go func() {
			v, err := o.First(context.Background())
			assert.NoError(t, err)
			got <- v
		}()
		require.NoError(t, mc.BlockUntil(context.Background(), 1))
		mc.Advance(time.Second)
		assert.Equal(t, 10, <-got, "the hedge won")
		assert.Equal(t, []string{"5"}, s.discards(), "the loser's value")
	})
}

// firstCallOutlivesItsContext is a synchronous Discarder Single whose
// first Call waits for its context to end and answers 5 all the same;
// the others answer 10 at once.
type firstCallOutlivesItsContext struct {
	ownedSingle
	n atomic.Int32
}

func (s *firstCallOutlivesItsContext) Call(ctx context.Context) (int, error) {
	if s.n.Add(1) == 1 {
		<-ctx.Done()
		return 5, nil
	}
	return 10, nil
}

func (s *firstCallOutlivesItsContext) SubscribeSingle(ctx context.Context, r SingleObserver[int]) {
	r.OnResult(s.Call(ctx))
}
