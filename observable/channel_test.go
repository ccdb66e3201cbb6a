package observable

import (
	"context"
	"testing"
	"time"

	"github.com/rxhystrix/rxhystrix/internal/clock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestFromChannel(t *testing.T) {
	ch := make(chan int, 3)
	ch <- 1
	ch <- 2
	ch <- 3
	close(ch)
	got, err := FromChannel(ch).ToSlice(context.Background())
	require.NoError(t, err)
	assert.Equal(t, []int{1, 2, 3}, got)

	got, err = FromChannel(ch).ToSlice(context.Background())
	require.NoError(t, err)
	assert.Empty(t, got, "a drained channel is not replayed")
}

func TestFromChannelStopsReadingWhenTheSubscriptionEnds(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ch := make(chan int)
	result := make(chan []int)
	go func() {
		got, _ := FromChannel(ch).Take(2).ToSlice(context.Background())
		result <- got
	}()
	ch <- 1
	ch <- 2
	assert.Equal(t, []int{1, 2}, <-result)
	// goleak checks that the reading goroutine has returned.
}

func TestFromChannelUnsubscribe(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ch := make(chan int)
	r := newRecorder[int]()
	sub := FromChannel(ch).Subscribe(context.Background(), r)
	ch <- 1
	ch <- 2 // received once 1 has been delivered
	sub.Unsubscribe()
	waitDone(t, sub.Done(), "subscription")
	values, _, _ := r.snapshot()
	require.NotEmpty(t, values)
	assert.Equal(t, 1, values[0])
	assert.LessOrEqual(t, len(values), 2, "2 may be lost to the Unsubscribe")
}

func TestIntervalOnManualClock(t *testing.T) {
	mc := clock.NewManual(epoch)
	r := newRecorder[int64]()
	sub := IntervalOn(time.Second, mc).Subscribe(context.Background(), r)
	mc.Advance(500 * time.Millisecond)
	r.check(t, nil, nil, false)
	mc.Advance(3 * time.Second)
	r.check(t, []int64{0, 1, 2}, nil, false)
	sub.Unsubscribe()
	assert.Zero(t, mc.Pending(), "the timer is stopped")
	mc.Advance(time.Hour)
	r.check(t, []int64{0, 1, 2}, nil, false)
}

func TestIntervalWithTake(t *testing.T) {
	mc := clock.NewManual(epoch)
	r := newRecorder[int64]()
	IntervalOn(time.Second, mc).Take(2).Subscribe(context.Background(), r)
	mc.Advance(10 * time.Second)
	r.check(t, []int64{0, 1}, nil, true)
	assert.Zero(t, mc.Pending())
}

func TestIntervalOnTheRealClock(t *testing.T) {
	got, err := Interval(time.Millisecond).Take(3).ToSlice(context.Background())
	require.NoError(t, err)
	assert.Equal(t, []int64{0, 1, 2}, got)
}

// A subscription that has ended takes nothing more from the channel: the
// values it did not want are left there for the next reader.
func TestFromChannelLeavesWhatItNoLongerWantsInTheChannel(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	for i := range 50 {
		ch := make(chan int, 3)
		ch <- 1
		ch <- 2
		ch <- 3
		got, err := FromChannel(ch).Take(2).ToSlice(context.Background())
		require.NoError(t, err)
		require.Equal(t, []int{1, 2}, got)
		require.NoError(t, goleak.Find(ignore), "the reading goroutine returns")
		require.Equal(t, 1, len(ch), "round %d: 3 was taken from the channel and dropped", i)
	}
}
