package command

import (
	"context"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/breaker"
	"github.com/rxhystrix/rxhystrix/internal/clock"
	"github.com/rxhystrix/rxhystrix/metricsstream"
)

// Callers that time out while their runs wait in the queue, as workers
// take queued runs and other callers queue new ones, must all return. A
// caller that left a queued run used to take it out of the queue only
// after it had marked it abandoned; a worker could take the run in
// between, find it abandoned and hand it to another caller, whose run the
// first caller's late removal then took out of the queue, so that the
// second caller waited for ever. Runs here move the manual clock on by up
// to two timeouts, so that many callers time out at once while their runs
// are queued.
func TestPoolCallersLeavingQueuedRunsAllReturn(t *testing.T) {
	for _, m := range execModes {
		t.Run(m.name, func(t *testing.T) {
			calls := 1500
			if m.name != "Execute" {
				calls = 300 // the pipeline is slower; its tasks are not recycled
			}
			callersLeavingQueuedRuns(t, m, calls)
		})
	}
}

func callersLeavingQueuedRuns(t *testing.T, m execMode, calls int) {
	const timeout = 10 * time.Millisecond
	clk := clock.NewManual(time.Unix(0, 0))
	r := NewRegistry(WithClock(clk))
	defer r.Close()
	require.NoError(t, r.ConfigurePool("q", PoolConfig{CoreSize: 2, MaxQueueSize: 32, QueueSizeRejectionThreshold: 32}))
	c := New("queued", func(ctx context.Context, n int) (string, error) {
		if n%2 == 0 {
			clk.Advance(time.Duration(n%5) * timeout / 2)
		}
		return "", nil
	}, WithRegistry(r), WithConfig(Config{Pool: "q", Timeout: timeout, Breaker: breaker.Config{Disabled: true}}))

	const callers = 32
	runCallersUntilReturned(t, callers, calls, func() { _, _ = m.exec(context.Background(), c, rand.IntN(10)) })
	assertEveryExecutionAccounted(t, clk, c.Metrics(), callers*calls)
}

// runCallersUntilReturned has callers goroutines make calls calls each of
// call, and fails the test with every goroutine's stack if they stop
// returning.
func runCallersUntilReturned(t *testing.T, callers, calls int, call func()) {
	t.Helper()
	var returned atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		var wg sync.WaitGroup
		for range callers {
			wg.Go(func() {
				for range calls {
					call()
					returned.Add(1)
				}
			})
		}
		wg.Wait()
	}()
	awaitProgress(t, done, &returned)
}

// assertEveryExecutionAccounted checks that no execution of m is still
// counted as running and that each of the n executions succeeded, timed
// out or was rejected, once the buckets have closed.
func assertEveryExecutionAccounted(t *testing.T, clk *clock.Manual, m *metricsstream.CommandMetrics, n int) {
	t.Helper()
	assert.Zero(t, m.ConcurrentExecutions())
	clk.Advance(time.Minute)
	counts := m.CumulativeCounts()
	assert.Equal(t, int64(n),
		counts[metricsstream.Success]+counts[metricsstream.Timeout]+counts[metricsstream.PoolRejected],
		"each execution succeeded, timed out or was rejected: %v", counts)
}

// awaitProgress waits for done, failing the test with every goroutine's
// stack if count stops moving for stuckAfter: the callers counting there
// are stuck.
func awaitProgress(t *testing.T, done <-chan struct{}, count *atomic.Int64) {
	t.Helper()
	last, since := count.Load(), time.Now()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return
		case <-tick.C:
		}
		if n := count.Load(); n != last {
			last, since = n, time.Now()
		} else if time.Since(since) > stuckAfter {
			buf := make([]byte, 1<<20)
			t.Fatalf("callers stuck after %d returns\n%s", n, buf[:runtime.Stack(buf, true)])
		}
	}
}
