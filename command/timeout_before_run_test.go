package command

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/rxhystrix/rxhystrix/breaker"
	"github.com/rxhystrix/rxhystrix/internal/clock"
)

// A semaphore-isolated ToObservable whose timeout fires while run is about
// to start must not leave the execution counted as running: the timeout
// may end the execution (fallback served, Completion published, permit
// back) on the timer's goroutine before the caller's goroutine records
// run's start, and that start was then never matched. Callers here race
// a goroutine that moves the clock past their timeouts.
func TestObservableTimeoutRacingRunStartLeavesNothingRunning(t *testing.T) {
	const timeout = time.Millisecond
	clk := clock.NewManual(time.Unix(0, 0))
	r := NewRegistry(WithClock(clk))
	defer r.Close()
	c := New("racing-start", func(context.Context, int) (int, error) { return 1, nil }, WithRegistry(r), WithConfig(Config{Isolation: SemaphoreIsolation, Timeout: timeout,
		MaxConcurrentRequests: 64, FallbackMaxConcurrentRequests: 64, Breaker: breaker.Config{Disabled: true}})).WithFallback(func(context.Context, int, error) (int, error) { return -1, nil })

	ctx := context.Background()
	stop := make(chan struct{})
	var advancer sync.WaitGroup
	advancer.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
				clk.Advance(timeout)
			}
		}
	})
	var callers sync.WaitGroup
	for range 8 {
		callers.Go(func() {
			for i := range 2000 {
				if i%2 == 0 {
					_, _ = c.ToObservable(ctx, 0).First(ctx)
				} else {
					_, _ = c.Queue(ctx, 0).Get(ctx)
				}
			}
		})
	}
	callers.Wait()
	close(stop)
	advancer.Wait()
	assert.Zero(t, c.Metrics().ConcurrentExecutions(), "executions left running")
	assert.Zero(t, c.k.metrics.ConcurrentExecutions(), "execution permits held")
}
