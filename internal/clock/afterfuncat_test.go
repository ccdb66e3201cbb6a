package clock

import (
	"math"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// AfterFuncAt calls f once when the clock reaches at. On the real clock
// a timer armed for an instant passed fires at once, on a goroutine of
// its own: AfterFuncAt must not arm it a second time after it fired.
func TestAfterFuncAtOnRealCallsFOnce(t *testing.T) {
	for i := range 20000 {
		var calls atomic.Int32
		first := make(chan struct{})
		timer, reached := AfterFuncAt(Real, Real.Now().Add(-time.Millisecond), func() {
			if calls.Add(1) == 1 {
				close(first)
			}
		})
		require.True(t, reached)
		<-first
		rearmed := timer.Stop()
		require.False(t, rearmed || calls.Load() > 1, "f armed again after it fired (round %d, calls %d)", i, calls.Load())
	}
}

// ResetAt arms a timer for the instant t, however far ahead: an instant
// further than a time.Duration reaches (about 292 years) is not brought
// forward to now plus the longest Duration.
func TestManualResetAtBeyondTheLongestDuration(t *testing.T) {
	m := NewManual(start)
	at := start.Add(math.MaxInt64).Add(time.Hour)
	timer := m.NewTimer(time.Hour)
	timer.ResetAt(at)
	m.Advance(math.MaxInt64)
	_, ok := received(timer.C())
	require.False(t, ok, "fired at %v, an hour before %v", m.Now(), at)
	m.Set(at)
	_, ok = received(timer.C())
	require.True(t, ok, "fires at its instant")
}
