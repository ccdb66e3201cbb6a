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
