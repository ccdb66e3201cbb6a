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

// A run whose deadline passed while it waited in the queue never starts,
// for a caller waiting for it (Execute, Queue.Get) as for a subscriber
// (starting): the worker that takes it after its timeout has fired does
// not run it, whether or not its caller has woken to take it out of the
// queue yet. Hystrix's worker finds the command TIMED_OUT (set by the
// timer thread) and never runs it. Here the worker that frees the slot
// moves the clock past the queued run's deadline itself, firing its
// caller's timer, and goes on to take the queued run at once, before the
// caller can be scheduled.
func TestPoolCallerRunTimedOutInTheQueueNeverStarts(t *testing.T) {
	for _, m := range execModes[:3] { // Execute, ToObservable.First, Queue.Get
		t.Run(m.name, func(t *testing.T) {
			for i := range 20 {
				h := newHarness(t)
				require.NoError(t, h.reg.ConfigurePool("P", PoolConfig{CoreSize: 1, MaxQueueSize: 5}))
				blocker := newGate()
				x := New("Blocker", func(ctx context.Context, _ int) (string, error) {
					_ = blocker.wait(ctx, false)
					h.clock.Advance(200 * time.Millisecond) // past B's deadline: its caller's timer fires
					return "blocked", nil
				}, WithRegistry(h.reg), WithConfig(Config{Pool: "P", Timeout: -1}))
				var ran atomic.Int32
				b := New("B", func(ctx context.Context, _ int) (string, error) {
					ran.Add(1)
					return "ran", nil
				}, WithRegistry(h.reg), WithConfig(Config{Pool: "P", Timeout: 100 * time.Millisecond})).WithFallback(fallbackName)

				first := goCall(func() (string, error) { return x.Execute(context.Background(), 1) })
				blocker.arrived(t)
				second := goCall(func() (string, error) { return m.exec(context.Background(), b, 2) })
				h.waitQueued(t, "P", 1)
				blocker.release()

				assert.Equal(t, "anonymous", awaitCall(t, second).v, "B timed out (%d)", i)
				awaitCall(t, first)
				h.waitIdle(t, "P")
				require.Zero(t, ran.Load(), "B's run started after its timeout had fired (%d)", i)
			}
		})
	}
}
