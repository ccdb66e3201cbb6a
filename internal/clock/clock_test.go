package clock

import (
	"context"
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
