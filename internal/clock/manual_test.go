package clock

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var start = time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)

// received returns what is waiting on c, if anything, without blocking.
func received(c <-chan time.Time) (time.Time, bool) {
	select {
	case t := <-c:
		return t, true
	default:
		return time.Time{}, false
	}
}

func TestManualNowAndSince(t *testing.T) {
	m := NewManual(start)
	assert.Equal(t, start, m.Now())
	m.Advance(time.Minute)
	assert.Equal(t, start.Add(time.Minute), m.Now())
	assert.Equal(t, time.Minute, m.Since(start))
	m.Set(start.Add(time.Hour))
	assert.Equal(t, start.Add(time.Hour), m.Now())
	m.Set(start) // backwards: only Now changes
	assert.Equal(t, start, m.Now())
}

func TestManualFiresInTimeOrder(t *testing.T) {
	m := NewManual(start)
	var log []string
	record := func(name string) func() {
		return func() { log = append(log, fmt.Sprintf("%s@%v", name, m.Since(start))) }
	}
	m.AfterFunc(3*time.Second, record("c"))
	m.AfterFunc(time.Second, record("a"))
	m.AfterFunc(2*time.Second, record("b1"))
	m.AfterFunc(2*time.Second, record("b2")) // a tie: in the order scheduled
	ticker := m.NewTicker(1500 * time.Millisecond)
	m.AfterFunc(10*time.Second, record("late"))

	m.Advance(5 * time.Second)
	assert.Equal(t, []string{"a@1s", "b1@2s", "b2@2s", "c@3s"}, log, "Now reads each one's due time while it fires")
	assert.Equal(t, start.Add(5*time.Second), m.Now())
	tick, ok := received(ticker.C())
	require.True(t, ok)
	assert.Equal(t, start.Add(1500*time.Millisecond), tick, "a slow reader keeps the first tick; later ones are dropped")
	_, ok = received(ticker.C())
	assert.False(t, ok)
	assert.Equal(t, 2, m.Pending(), "the ticker and the late timer")
	ticker.Stop()
	assert.Equal(t, 1, m.Pending())
}

func TestManualCallbacksMayUseTheClock(t *testing.T) {
	m := NewManual(start)
	var fired []time.Duration
	var again func()
	again = func() {
		fired = append(fired, m.Since(start))
		if len(fired) < 3 {
			m.AfterFunc(time.Second, again)
		}
	}
	m.AfterFunc(time.Second, again)
	m.Advance(10 * time.Second)
	assert.Equal(t, []time.Duration{time.Second, 2 * time.Second, 3 * time.Second}, fired,
		"a timer scheduled by a callback fires within the same Advance if due")
}

func TestManualTimer(t *testing.T) {
	m := NewManual(start)
	timer := m.NewTimer(time.Second)
	assertFiresAt(t, m, timer, start.Add(time.Second))
	assert.False(t, timer.Stop(), "already fired")
	assert.False(t, timer.Reset(time.Second), "was not active")
	m.Advance(time.Second)
	_, ok := received(timer.C())
	assert.True(t, ok, "Reset re-arms a fired timer")
}

// assertFiresAt moves m to just before at, checks that timer has not
// fired, then to at, and checks that it fired with at.
func assertFiresAt(t *testing.T, m *Manual, timer Timer, at time.Time) {
	t.Helper()
	m.Set(at.Add(-time.Millisecond))
	_, ok := received(timer.C())
	assert.False(t, ok, "fired before %v", at)
	m.Set(at)
	got, ok := received(timer.C())
	require.True(t, ok, "did not fire at %v", at)
	assert.Equal(t, at, got)
}

func TestManualStopAndReset(t *testing.T) {
	m := NewManual(start)
	fired := 0
	timer := m.AfterFunc(time.Second, func() { fired++ })
	assert.Nil(t, timer.C(), "an AfterFunc timer has no channel")
	assert.True(t, timer.Stop())
	assert.False(t, timer.Stop())
	m.Advance(time.Hour)
	assert.Zero(t, fired)

	assert.False(t, timer.Reset(time.Second), "it had been stopped")
	assert.True(t, timer.Reset(2*time.Second), "it was active")
	m.Advance(time.Second)
	assert.Zero(t, fired, "Reset moved the due time")
	m.Advance(time.Second)
	assert.Equal(t, 1, fired)
}

func TestManualResetAt(t *testing.T) {
	m := NewManual(start)
	timer := m.NewTimer(time.Hour)
	assert.True(t, timer.ResetAt(start.Add(time.Second)), "it was active")
	assertFiresAt(t, m, timer, start.Add(time.Second))

	assert.False(t, timer.ResetAt(start), "a fired timer was not active")
	_, ok := received(timer.C())
	assert.False(t, ok, "an instant already past fires at the next move, not inside ResetAt")
	m.Advance(0)
	got, ok := received(timer.C())
	require.True(t, ok)
	assert.Equal(t, start.Add(time.Second), got, "the clock does not go back")
}

func TestManualTimerStopLeavesNoStaleValue(t *testing.T) {
	m := NewManual(start)
	timer := m.NewTimer(time.Second)
	m.Advance(time.Second) // fires, nobody reads
	assert.True(t, timer.Stop(), "the value was never received, so Stop stops it (as time.Timer since Go 1.23)")
	_, ok := received(timer.C())
	assert.False(t, ok, "no stale value after Stop")

	m.Advance(time.Second)
	timer.Reset(time.Second)
	m.Advance(500 * time.Millisecond)
	_, ok = received(timer.C())
	assert.False(t, ok, "no stale value after Reset")
}

func TestManualTicker(t *testing.T) {
	m := NewManual(start)
	ticker := m.NewTicker(time.Second)
	for i := 1; i <= 3; i++ {
		m.Advance(time.Second)
		got, ok := received(ticker.C())
		require.True(t, ok)
		assert.Equal(t, start.Add(time.Duration(i)*time.Second), got)
	}
	ticker.Reset(10 * time.Second)
	m.Advance(9 * time.Second)
	_, ok := received(ticker.C())
	assert.False(t, ok, "Reset restarts the period")
	m.Advance(time.Second)
	_, ok = received(ticker.C())
	assert.True(t, ok)
	ticker.Stop()
	m.Advance(time.Minute)
	_, ok = received(ticker.C())
	assert.False(t, ok)
	assert.Zero(t, m.Pending())
}

func TestManualBadInput(t *testing.T) {
	m := NewManual(start)
	assert.PanicsWithValue(t, "clock: AfterFunc with nil f", func() { m.AfterFunc(time.Second, nil) })
	assert.PanicsWithValue(t, "clock: NewTicker with non-positive interval", func() { m.NewTicker(0) })
	ticker := m.NewTicker(time.Second)
	assert.PanicsWithValue(t, "clock: Ticker.Reset with non-positive interval", func() { ticker.Reset(-1) })
}

func TestManualWithTimeout(t *testing.T) {
	m := NewManual(start)
	ctx, cancel := m.WithTimeout(context.Background(), time.Second)
	defer cancel()
	deadline, ok := ctx.Deadline()
	require.True(t, ok)
	assert.Equal(t, start.Add(time.Second), deadline)
	derived, cancelDerived := context.WithCancel(ctx)
	defer cancelDerived()

	m.Advance(999 * time.Millisecond)
	assert.NoError(t, ctx.Err())
	m.Advance(time.Millisecond)
	select {
	case <-ctx.Done():
	default:
		t.Fatal("not done at the deadline")
	}
	assert.ErrorIs(t, ctx.Err(), context.DeadlineExceeded)
	assert.ErrorIs(t, context.Cause(ctx), context.DeadlineExceeded)
	<-derived.Done()
	assert.ErrorIs(t, derived.Err(), context.DeadlineExceeded, "a derived context sees the deadline too, as with context.WithTimeout")
}

func TestManualWithTimeoutCancel(t *testing.T) {
	m := NewManual(start)
	ctx, cancel := m.WithTimeout(context.Background(), time.Second)
	cancel()
	<-ctx.Done()
	assert.ErrorIs(t, ctx.Err(), context.Canceled)
	assert.Zero(t, m.Pending(), "cancel stops the timer")
	m.Advance(time.Hour)
	assert.ErrorIs(t, ctx.Err(), context.Canceled, "cancelled first, so not a deadline")
}

func TestManualWithTimeoutParent(t *testing.T) {
	m := NewManual(start)
	type key struct{}
	parent, cancelParent := context.WithCancel(context.WithValue(context.Background(), key{}, "v"))
	ctx, cancel := m.WithTimeout(parent, time.Hour)
	defer cancel()
	assert.Equal(t, "v", ctx.Value(key{}))
	cancelParent()
	<-ctx.Done()
	assert.ErrorIs(t, ctx.Err(), context.Canceled)

	// The earlier of the parent's deadline and its own wins.
	early, cancelEarly := m.WithTimeout(context.Background(), time.Second)
	defer cancelEarly()
	late, cancelLate := m.WithTimeout(early, time.Minute)
	defer cancelLate()
	deadline, _ := late.Deadline()
	assert.Equal(t, m.Now().Add(time.Second), deadline)
	m.Advance(time.Second)
	<-late.Done()
	assert.ErrorIs(t, late.Err(), context.DeadlineExceeded)
}

func TestManualBlockUntil(t *testing.T) {
	m := NewManual(start)
	var wg sync.WaitGroup
	fired := make(chan struct{})
	wg.Go(func() {
		timer := m.NewTimer(time.Second)
		<-timer.C()
		close(fired)
	})
	require.NoError(t, m.BlockUntil(context.Background(), 1))
	m.Advance(time.Second)
	<-fired
	wg.Wait()

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.ErrorIs(t, m.BlockUntil(ctx, 5), context.Canceled, "gives up when ctx is done")

	wctx, stop := context.WithCancel(context.Background())
	result := make(chan error)
	go func() { result <- m.BlockUntil(wctx, 1) }()
	stop()
	assert.ErrorIs(t, <-result, context.Canceled, "wakes up when ctx ends while waiting")
}

func TestManualIsSafeForConcurrentUse(t *testing.T) {
	m := NewManual(start)
	var wg sync.WaitGroup
	var mu sync.Mutex
	fired := 0
	for range 8 {
		wg.Go(func() {
			for range 50 {
				timer := m.AfterFunc(time.Millisecond, func() {
					mu.Lock()
					fired++
					mu.Unlock()
				})
				if !timer.Stop() {
					timer.Reset(time.Millisecond)
				}
				timer.Reset(time.Millisecond)
				_ = m.Now()
			}
		})
		wg.Go(func() {
			for range 50 {
				m.Advance(time.Millisecond)
			}
		})
	}
	wg.Wait()
	m.Advance(time.Second)
	assert.Zero(t, m.Pending())
	assert.Positive(t, fired)
}

// Manual and Real are Clocks.
var _ = []Clock{Real, NewManual(start)}

func TestResetAtReportsAReachedDeadline(t *testing.T) {
	m := NewManual(start)
	timer := m.NewTimer(time.Hour)
	assert.False(t, ResetAt(m, timer, start.Add(time.Second)))
	assertFiresAt(t, m, timer, start.Add(time.Second))
	assert.True(t, ResetAt(m, timer, start), "the clock is past it: the caller acts on it")
	assert.True(t, ResetAt(m, timer, m.Now()), "the clock reads it")
}

func TestAfterFuncAt(t *testing.T) {
	m := NewManual(start)
	fired := 0
	at := start.Add(time.Second)
	timer, reached := AfterFuncAt(m, at, func() { fired++ })
	assert.False(t, reached)
	m.Set(at.Add(-time.Millisecond))
	assert.Zero(t, fired, "before its instant")
	m.Set(at)
	assert.Equal(t, 1, fired, "at its instant")
	assert.False(t, timer.Stop(), "fired")

	_, reached = AfterFuncAt(m, at, func() { fired++ })
	assert.True(t, reached, "an instant the clock reads already")
	assert.Equal(t, 1, fired, "left to the next move of the clock")
}

// Advance fires what falls due synchronously, so a WithTimeout context
// made under another Manual WithTimeout context is done once the Advance
// that reaches the outer one's deadline returns, as a context.WithTimeout
// under a context.WithTimeout is done once its parent is.
func TestManualNestedWithTimeoutEndsInsideAdvance(t *testing.T) {
	for range 200 {
		m := NewManual(start)
		outer, cancelOuter := m.WithTimeout(context.Background(), time.Second)
		inner, cancelInner := m.WithTimeout(outer, time.Minute)
		m.Advance(time.Second)
		err := inner.Err()
		cancelInner()
		cancelOuter()
		require.ErrorIs(t, err, context.DeadlineExceeded, "the inner context was not done when Advance returned")
	}
}

// A context.WithTimeout is done once its parent's cancel returns; so must
// a Manual WithTimeout context be, by the time anybody asks its Err.
func TestManualWithTimeoutErrOnceItsParentIsCancelled(t *testing.T) {
	m := NewManual(start)
	for range 200 {
		parent, cancelParent := context.WithCancel(context.Background())
		ctx, cancel := m.WithTimeout(parent, time.Hour)
		cancelParent()
		err := ctx.Err()
		cancel()
		require.ErrorIs(t, err, context.Canceled, "the parent was cancelled, but Err is nil")
	}
}
