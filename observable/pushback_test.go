package observable

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rxhystrix/rxhystrix/internal/clock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pushedBack is a failure whose source said when to try again.
type pushedBack struct {
	wait time.Duration
	said bool
}

func (p pushedBack) Error() string                     { return fmt.Sprintf("pushed back %v", p.wait) }
func (p pushedBack) RetryAfter() (time.Duration, bool) { return p.wait, p.said }

func TestRetryPolicyNextWaitsWhatAPushbackSays(t *testing.T) {
	p := RetryPolicy{
		MaxAttempts: 5,
		Backoff:     Backoff{Initial: 100 * time.Millisecond, Max: 2 * time.Second},
		Rand:        func() float64 { return 0.5 },
	}
	live := context.Background()
	for _, tc := range []struct {
		name  string
		err   error
		wait  time.Duration
		retry bool
	}{
		{"a wait, in place of the jittered backoff", pushedBack{1500 * time.Millisecond, true}, 1500 * time.Millisecond, true},
		{"found in a wrapped error", fmt.Errorf("call: %w", pushedBack{300 * time.Millisecond, true}), 300 * time.Millisecond, true},
		{"a wait of zero: at once", pushedBack{0, true}, 0, true},
		{"Backoff.Max itself", pushedBack{2 * time.Second, true}, 2 * time.Second, true},
		{"longer than Backoff.Max: no retry", pushedBack{2*time.Second + 1, true}, 0, false},
		{"do not try again", pushedBack{-1, true}, 0, false},
		{"nothing said: the backoff", pushedBack{time.Hour, false}, 50 * time.Millisecond, true},
		{"no pushback at all: the backoff", errFlaky, 50 * time.Millisecond, true},
	} {
		d, retry := p.Next(live, epoch, 1, tc.err)
		assert.Equal(t, tc.retry, retry, tc.name)
		assert.Equal(t, tc.wait, d, tc.name)
	}
}

func TestRetryPolicyNextFitsAPushbackBeforeTheDeadline(t *testing.T) {
	p := RetryPolicy{MaxAttempts: 3, AttemptTime: func() time.Duration { return 100 * time.Millisecond }}
	ctx, cancel := context.WithDeadline(context.Background(), epoch.Add(time.Second))
	defer cancel()
	_, retry := p.Next(ctx, epoch, 1, pushedBack{899 * time.Millisecond, true})
	assert.True(t, retry, "899ms and an attempt of 100ms end before the deadline")
	_, retry = p.Next(ctx, epoch, 1, pushedBack{900 * time.Millisecond, true})
	assert.False(t, retry, "900ms and an attempt of 100ms end at the deadline, not before it")

	var asked int
	p.Permit = func() bool { asked++; return false }
	_, retry = p.Next(context.Background(), epoch, 1, pushedBack{time.Millisecond, true})
	assert.False(t, retry, "Permit has the last word after a pushback too")
	assert.Equal(t, 1, asked)
}

func TestRetryWaitsThePushbackOnTheClock(t *testing.T) {
	mc := clock.NewManual(epoch)
	var calls atomic.Int32
	o := FromFunc(func(context.Context) (int, error) {
		if calls.Add(1) == 1 {
			return 0, pushedBack{3 * time.Second, true}
		}
		return 7, nil
	})
	p := RetryPolicy{MaxAttempts: 2, Backoff: Backoff{Initial: time.Millisecond, Max: 5 * time.Second, Jitter: NoJitter}}
	got := make(chan int, 1)
	go func() {
		v, err := o.RetryOn(p, mc).First(context.Background())
		assert.NoError(t, err)
		got <- v
	}()
	require.NoError(t, mc.BlockUntil(context.Background(), 1))
	mc.Advance(3*time.Second - 1)
	assert.Equal(t, int32(1), calls.Load(), "not before the pushback, though the backoff was 1ms")
	mc.Advance(1)
	assert.Equal(t, 7, <-got)
	assert.Equal(t, int32(2), calls.Load())
}
