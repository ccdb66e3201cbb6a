package clock

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// These tests use the wall clock with tiny durations; they assert what
// happens, never how long it took.

func TestRealNowAndSince(t *testing.T) {
	before := time.Now()
	now := Real.Now()
	assert.False(t, now.Before(before))
	assert.GreaterOrEqual(t, Real.Since(before), time.Duration(0))
}

// UnixNano reads Real as Now does, between the readings around it, and
// a manual clock exactly.
func TestUnixNano(t *testing.T) {
	before := Real.Now().UnixNano()
	read := UnixNano(Real)
	after := Real.Now().UnixNano()
	assert.LessOrEqual(t, before, read)
	assert.LessOrEqual(t, read, after)

	m := NewManual(time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC))
	assert.Equal(t, m.Now().UnixNano(), UnixNano(m))
	m.Advance(1500 * time.Millisecond)
	assert.Equal(t, time.Date(2026, 1, 2, 3, 4, 6, 500000006, time.UTC).UnixNano(), UnixNano(m))
}

func TestRealAfterFunc(t *testing.T) {
	fired := make(chan struct{})
	timer := Real.AfterFunc(time.Millisecond, func() { close(fired) })
	<-fired
	assert.Nil(t, timer.C())
	assert.False(t, timer.Stop(), "already fired")

	stopped := Real.AfterFunc(time.Hour, func() { t.Error("stopped timer fired") })
	assert.True(t, stopped.Stop())
}

func TestRealTimer(t *testing.T) {
	timer := Real.NewTimer(time.Millisecond)
	<-timer.C()
	assert.False(t, timer.Reset(time.Millisecond), "it had fired")
	<-timer.C()
	long := Real.NewTimer(time.Hour)
	assert.True(t, long.Stop())
}

func TestRealTicker(t *testing.T) {
	ticker := Real.NewTicker(time.Millisecond)
	defer ticker.Stop()
	<-ticker.C()
	<-ticker.C()
	ticker.Reset(time.Millisecond)
	<-ticker.C()
}

func TestRealWithTimeout(t *testing.T) {
	ctx, cancel := Real.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	<-ctx.Done()
	assert.ErrorIs(t, ctx.Err(), context.DeadlineExceeded)

	ctx, cancel = Real.WithTimeout(context.Background(), time.Hour)
	_, ok := ctx.Deadline()
	require.True(t, ok)
	cancel()
	assert.ErrorIs(t, ctx.Err(), context.Canceled)
}

func TestRealTimerResetAt(t *testing.T) {
	timer := Real.NewTimer(time.Hour)
	defer timer.Stop()
	at := Real.Now().Add(time.Millisecond)
	assert.True(t, timer.ResetAt(at), "it was active")
	got := <-timer.C()
	assert.False(t, got.Before(at.Add(-time.Millisecond)), "it fired about when it was set to")
}

// A time read from the system clock (a caller's deadline) is placed on
// Real's time line by its monotonic reading, and Real's readings go out
// with one, so that both compare rightly after the system clock has been
// stepped either way, which Real does not follow.
func TestRealPlacesSystemTimesAcrossAStep(t *testing.T) {
	for _, step := range []time.Duration{time.Hour, -time.Hour} {
		t.Run(step.String(), func(t *testing.T) {
			defer StepSystemClock(step)()
			deadline := time.Now().Add(5 * time.Second)
			now := UnixNano(Real)
			in := UnixNanoOf(Real, deadline) - now
			assert.Greater(t, in, int64(0))
			assert.LessOrEqual(t, in, int64(5*time.Second))

			// Real reads ahead of time.Now by the moment between its two
			// readings at start (monoAtStart, then wallAtStart): a few
			// microseconds when the process started on a busy machine.
			out := TimeAt(Real, now+int64(5*time.Second))
			assert.Greater(t, time.Until(out), time.Duration(0))
			assert.LessOrEqual(t, time.Until(out), 5*time.Second+time.Millisecond)
			assert.Equal(t, now+int64(5*time.Second), UnixNanoOf(Real, out), "a round trip")
		})
	}
}

// Without a step, Real's readings and the system clock's agree, and the
// conversions change nothing; far-off times saturate rather than wrap.
func TestRealConversionsWithoutAStep(t *testing.T) {
	n := UnixNano(Real)
	assert.Equal(t, n, TimeAt(Real, n).UnixNano())
	assert.Equal(t, n, UnixNanoOf(Real, time.Unix(0, n)))
	assert.Equal(t, int64(math.MaxInt64), UnixNanoOf(Real, time.Now().Add(math.MaxInt64)))
	assert.Less(t, UnixNanoOf(Real, time.Unix(-1<<40, 0)), int64(0))

	m := NewManual(time.Unix(1000, 0))
	at := time.Unix(2000, 5)
	assert.Equal(t, at.UnixNano(), UnixNanoOf(m, at))
	assert.True(t, TimeAt(m, at.UnixNano()).Equal(at))
}
