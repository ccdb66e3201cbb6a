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

// fallbackAttempts is a Single whose calls, as a command's executions
// with a fallback do, turn their failure into a value unless the race
// does without them: the first waits for fail, then asks FailingAttempt;
// the others answer at once with their number.
type fallbackAttempts struct {
	calls   atomic.Int32
	started chan int
	fail    chan struct{}
	asked   chan bool // what FailingAttempt answered the first
}

func newFallbackAttempts() *fallbackAttempts {
	return &fallbackAttempts{started: make(chan int, 4), fail: make(chan struct{}), asked: make(chan bool, 1)}
}

const fallbackValue = -1

// firstAside calls First of o, a race of a's attempts on mc, on a
// goroutine of its own, and returns once the first attempt has begun and
// the race waits for its hedge's delay: the race's value, which must come
// with no error, arrives on the channel.
func (a *fallbackAttempts) firstAside(t *testing.T, o Observable[int], mc *clock.Manual) <-chan int {
	done := make(chan int, 1)
	go func() {
		v, err := o.First(context.Background())
		assert.NoError(t, err)
		done <- v
	}()
	assert.Equal(t, 0, <-a.started)
	require.NoError(t, mc.BlockUntil(context.Background(), 1))
	return done
}

func (a *fallbackAttempts) observable() Observable[int] {
	return FromFunc(func(ctx context.Context) (int, error) {
		n := int(a.calls.Add(1)) - 1
		a.started <- n
		if n > 0 {
			return n, nil
		}
		<-a.fail
		goesOn := FailingAttempt(ctx, errBoom)
		a.asked <- goesOn
		if goesOn {
			return 0, errFlaky
		}
		return fallbackValue, nil
	})
}

// A hedge that has started decides the race when the first attempt then
// fails, even if the hedge's goroutine has not begun it yet: the first's
// fallback does not end the race with its value.
func TestFailingAttemptLeavesTheRaceToAStartedHedge(t *testing.T) {
	mc := clock.NewManual(epoch)
	a := newFallbackAttempts()
	// The hedge waits for its turn, so that the first fails while it has
	// been started and not begun.
	turn := make(chan struct{})
	o := FromFunc(func(ctx context.Context) (int, error) {
		if a.calls.Load() > 0 {
			<-turn
		}
		return a.observable().First(ctx)
	}).HedgeOn(HedgePolicy{Delay: func() time.Duration { return 100 * time.Millisecond }}, mc)
	done := a.firstAside(t, o, mc)
	mc.Advance(100 * time.Millisecond)
	close(a.fail)
	assert.True(t, <-a.asked, "the hedge started: the race does without the first")
	close(turn)
	assert.Equal(t, 1, <-a.started)
	assert.Equal(t, 1, <-done, "the hedge's value, not the first's fallback")
}

// The last attempt to fail has the race's last word: its fallback's value
// is the result, and no hedge starts after it.
func TestFailingAttemptThatIsTheLastClosesTheRace(t *testing.T) {
	mc := clock.NewManual(epoch)
	a := newFallbackAttempts()
	o := a.observable().HedgeOn(HedgePolicy{Delay: func() time.Duration { return 100 * time.Millisecond }}, mc)
	done := a.firstAside(t, o, mc)
	close(a.fail)
	assert.False(t, <-a.asked, "no other attempt: the first's answer is the race's")
	mc.Advance(time.Hour)
	assert.Equal(t, fallbackValue, <-done)
	assert.Equal(t, int32(1), a.calls.Load(), "no hedge after the last word")
}

// OnError starts the next hedge when an attempt says it fails, and so the
// race does without it; a hedge Permit refuses leaves it the last word.
func TestFailingAttemptStartsOnErrorsHedgeUnlessRefused(t *testing.T) {
	for _, permit := range []bool{true, false} {
		mc := clock.NewManual(epoch)
		a := newFallbackAttempts()
		o := a.observable().HedgeOn(HedgePolicy{
			Delay:   func() time.Duration { return time.Hour },
			OnError: true,
			Permit:  func() bool { return permit },
		}, mc)
		close(a.fail)
		v, err := o.First(context.Background())
		require.NoError(t, err)
		assert.Equal(t, permit, <-a.asked)
		if permit {
			assert.Equal(t, 1, v, "the hedge OnError started")
		} else {
			assert.Equal(t, fallbackValue, v, "refused: the first's fallback")
			assert.Equal(t, int32(1), a.calls.Load())
		}
	}
}

func TestFailingAttemptOfNoRaceIsFalse(t *testing.T) {
	assert.False(t, FailingAttempt(context.Background(), errBoom))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	assert.False(t, FailingAttempt(ctx, errBoom))
}

// An attempt that ends with context.Canceled was cancelled, not failed:
// OnError starts no hedge for it, as its caller is leaving.
func TestHedgeOnErrorStartsNothingForACancelledAttempt(t *testing.T) {
	mc := clock.NewManual(epoch)
	var calls atomic.Int32
	o := FromFunc(func(ctx context.Context) (int, error) {
		calls.Add(1)
		return 0, context.Canceled
	}).HedgeOn(HedgePolicy{Delay: func() time.Duration { return time.Hour }, OnError: true}, mc)
	_, err := o.First(context.Background())
	assert.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, int32(1), calls.Load())
}
