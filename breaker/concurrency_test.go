package breaker_test

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/breaker"
)

// race runs f on n goroutines released together and returns how many
// returned true.
func race(n int, f func() bool) int {
	var (
		start = make(chan struct{})
		wg    sync.WaitGroup
		won   atomic.Int64
	)
	for range n {
		wg.Go(func() {
			<-start
			if f() {
				won.Add(1)
			}
		})
	}
	close(start)
	wg.Wait()
	return int(won.Load())
}

func TestConcurrentAttemptExecutionAdmitsOneTrial(t *testing.T) {
	b, _, clk := tripped(t)
	for window := range 20 {
		clk.Advance(afterSleepWindow)
		got := race(64, b.AttemptExecution)
		assert.Equal(t, 1, got, "window %d: trials admitted by 64 concurrent callers", window)
		require.Equal(t, breaker.HalfOpen, b.State())
		b.MarkNonSuccess()
	}
}

// A trial that fails at once re-opens the breaker with a new sleep window;
// callers that saw the old window over just before must not slip through
// as trials of their own while the clock stands still.
func TestConcurrentFailedTrialStartsANewWindow(t *testing.T) {
	for round := range 20 {
		b, h, clk := newBreaker(t, hystrixTestConfig)
		h.emit(health(0, 4, 0))
		clk.Advance(afterSleepWindow)
		var trials atomic.Int64
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for range 500 {
					if b.AttemptExecution() {
						trials.Add(1)
						b.MarkNonSuccess()
					}
				}
			})
		}
		wg.Wait()
		require.Equal(t, int64(1), trials.Load(), "round %d: one trial per sleep window", round)
	}
}

func TestConcurrentAttemptExecutionAdmitsHalfOpenTrials(t *testing.T) {
	cfg := hystrixTestConfig
	cfg.HalfOpenTrials = 5
	b, h, clk := newBreaker(t, cfg)
	h.emit(health(0, 4, 0))
	for window := range 20 {
		clk.Advance(afterSleepWindow)
		assert.Equal(t, 5, race(64, b.AttemptExecution), "window %d", window)
		b.MarkNonSuccess()
	}
}

func TestConcurrentTrialReportsCloseOnce(t *testing.T) {
	cfg := hystrixTestConfig
	cfg.HalfOpenTrials = 32
	b, h, clk := newBreaker(t, cfg)
	finish := collect(t, b)
	h.emit(health(0, 4, 0))
	clk.Advance(afterSleepWindow)
	require.Equal(t, 32, race(64, b.AttemptExecution))
	race(32, func() bool { b.MarkSuccess(); return true })
	assert.Equal(t, breaker.Closed, b.State())
	assert.Equal(t, 1, h.resetCount(), "one close, one reset")
	assert.Equal(t, 1, h.live(), "one live subscription")

	got := finish()
	require.Len(t, got, 3)
	assert.Equal(t, breaker.Closed, got[2].To)
}

// Everything at once, for the race detector: snapshots, attempts, reports,
// configuration changes and reads, while the clock moves.
func TestConcurrentUse(t *testing.T) {
	cfg := hystrixTestConfig
	cfg.HalfOpenTrials = 2
	b, h, clk := newBreaker(t, cfg, breaker.WithTransitionBuffer(1<<16))
	finish := collect(t, b)
	h.emit(health(0, 4, 0))
	require.Equal(t, breaker.Open, b.State())

	const iterations = 2000
	var wg sync.WaitGroup
	loop := func(f func(i int)) {
		wg.Go(func() {
			for i := range iterations {
				f(i)
			}
		})
	}
	loop(func(i int) { h.emit(health(i%3, i%5, 0)) })
	loop(func(int) { clk.Advance(50 * time.Millisecond) })
	for range 4 {
		loop(func(i int) {
			if !b.AttemptExecution() {
				return
			}
			switch i % 3 {
			case 0:
				b.MarkSuccess()
			case 1:
				b.MarkNonSuccess()
			default:
				b.MarkIgnored()
			}
		})
	}
	loop(func(i int) {
		c := cfg
		c.ForceClosed = i%7 == 0
		c.HalfOpenTrials = 1 + i%3
		b.SetConfig(c)
	})
	loop(func(int) { b.AllowRequest(); b.IsOpen(); b.State() })
	wg.Wait()

	final := b.State()
	got := finish()
	require.Zero(t, b.DroppedTransitions())
	require.NotEmpty(t, got)
	assert.Equal(t, breaker.Closed, got[0].From)
	for i := 1; i < len(got); i++ {
		assert.Equal(t, got[i-1].To, got[i].From, "transition %d follows on from %d", i, i-1)
		assert.False(t, got[i].Time.Before(got[i-1].Time), "transition %d is not earlier than %d", i, i-1)
	}
	assert.Equal(t, final, got[len(got)-1].To, "the last transition is the current state")
}
