package command

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/breaker"
)

// A subscriber that leaves before the worker it was handed to has started
// the run gives the pool slot back at once: a caller that goes on without
// blocking must not find the pool full of workers that are only waiting for
// a processor to find out they have nothing to do. With one processor the
// worker cannot start before the caller blocks, unless the caller yields
// to it (see yieldEvery) or is preempted: then the worker may take the run
// while the caller cancels, and the slot is the worker's until it finds
// the run cancelled.
func TestPoolSlotBackWhenTheSubscriberLeavesBeforeTheRunStarts(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	h := newHarness(t)
	require.NoError(t, h.reg.ConfigurePool("one", PoolConfig{CoreSize: 1}))
	var started atomic.Int32
	c := New("leaving", func(ctx context.Context, id int) (string, error) {
		started.Add(1)
		return "", nil
	}, WithRegistry(h.reg), WithConfig(Config{Pool: "one", Timeout: -1}))
	unstarted, taken := 0, 0
	for i := range 50 {
		before := started.Load()
		sub := c.ToObservable(context.Background(), i).Subscribe(context.Background(), ignore[string]{})
		sub.Unsubscribe()
		if started.Load() != before {
			h.completion() // the caller yielded to the worker (see yieldEvery)
			continue
		}
		running, queued := h.pool("one").size()
		assert.Zero(t, queued)
		assert.Equal(t, evs("CANCELLED"), h.events())
		if running != 0 {
			taken++ // the worker took the run while the caller cancelled
			h.waitIdle(t, "one")
			continue
		}
		unstarted++ // the slot came back with the cancel
	}
	require.Greater(t, unstarted, taken, "the slot came back with the cancel less often than a worker held it")
	h.waitIdle(t, "one")
	assert.Zero(t, started.Load()-int32(50-unstarted-taken), "no abandoned run started")
}

// A Future cancelled before its execution started: run never starts,
// every permit is back, and the execution is CANCELLED in either
// isolation, as Hystrix's is when its subscriber leaves before the run
// starts (testCancelledTasksInQueueGetRemoved). The work a Future hands
// over begins once its context has ended, so that nothing can run it
// first; the starter's grace is held, so that it cannot start the work
// before the Cancel, as it may when the caller is descheduled between
// Queue and Cancel for longer than the grace.
func TestQueueCancelledBeforeTheExecutionStarted(t *testing.T) {
	for _, isolation := range []Isolation{PoolIsolation, SemaphoreIsolation} {
		t.Run(isolation.String(), func(t *testing.T) {
			holdStarts(t)
			h := newHarness(t)
			var started atomic.Int32
			c := New("cancelled", func(ctx context.Context, id int) (string, error) {
				started.Add(1)
				return "", nil
			}, WithRegistry(h.reg), WithConfig(Config{Isolation: isolation, Timeout: -1}))
			f := c.Queue(context.Background(), 1)
			f.Cancel()
			_, err := f.Get(context.Background())
			require.ErrorIs(t, err, context.Canceled)
			assert.Equal(t, evs("CANCELLED"), h.events())
			assert.Zero(t, started.Load(), "run started")
			h.assertReleased("cancelled")
			h.noMoreCompletions()
		})
	}
}

// advanceOnStart moves the clock by d as each execution begins, after it
// read its start: its timeout has passed by the time its caller waits.
type advanceOnStart struct {
	NoOpHook
	h *harness
	d time.Duration
}

func (a advanceOnStart) Start(string) { a.h.clock.Advance(a.d) }

// A caller that times out before the worker it was handed to has started
// the run gives the pool slot back at once, as a subscriber that leaves
// does: the next call must not be rejected by a pool whose only slot is
// held by a worker that is only waiting for a processor to find out it
// has nothing to do. With one processor the worker cannot start before
// the caller returns, unless the caller yields to it (see yieldEvery) or
// is preempted: then the worker may take the run before the timeout, and
// run it.
func TestPoolSlotBackWhenTheCallerTimesOutBeforeTheRunStarts(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	h := newHarness(t)
	require.NoError(t, h.reg.ConfigurePool("one", PoolConfig{CoreSize: 1}))
	const timeout = 10 * time.Millisecond
	h.reg.AddKeyHook("timing-out", advanceOnStart{h: h, d: timeout})
	var started atomic.Int32
	c := New("timing-out", func(ctx context.Context, id int) (string, error) {
		started.Add(1)
		return "", nil
	}, WithRegistry(h.reg), WithConfig(Config{Pool: "one", Timeout: timeout, Breaker: breaker.Config{ForceClosed: true}}))
	unstarted, taken := 0, 0
	for i := range 50 {
		before := started.Load()
		_, err := c.Execute(context.Background(), i)
		events := h.events()
		if started.Load() != before {
			continue // the caller yielded to the worker
		}
		assert.ErrorIs(t, err, ErrTimeout, "call %d", i)
		assert.Equal(t, evs("TIMEOUT", "FALLBACK_MISSING"), events, "call %d", i)
		running, queued := h.pool("one").size()
		assert.Zero(t, queued)
		if running != 0 {
			taken++ // the worker took the run before the timeout, and runs it
			h.waitIdle(t, "one")
			continue
		}
		unstarted++ // the slot came back with the timeout
	}
	require.Greater(t, unstarted, taken, "the slot came back with the timeout less often than a worker held it")
	h.waitIdle(t, "one")
	waitFor(t, "the workers to finish", func() bool { return !poolWorkerRunning() })
	assert.Zero(t, h.pool("one").busy.Load(), "every slot was given back once")
	assert.Zero(t, started.Load()-int32(50-unstarted), "no abandoned run started")
}

// A caller that leaves a run a worker has taken from the queue but not
// started gives the slot back itself (awaitRun's callQueued case,
// subscription.dequeue); the worker, finding the run abandoned, looks for
// the next queued run (pool.work) and may do so before the caller has
// given the slot back: it finds the slot still taken and exits. The
// caller must then start the next queued run itself, or that run waits
// beside a free slot, with no worker, until another submit or exit comes
// (and, with the queue full, every submit is rejected meanwhile).
//
// The test plays the worker: it takes the first queued run with the slot
// it holds, and looks for the next run while that slot is still taken, as
// a worker that found the run abandoned before its caller gave the slot
// back does; the caller then leaves.
func TestPoolCallerLeavingATakenRunStartsTheNextQueuedRun(t *testing.T) {
	forEachMode(t, func(t *testing.T, h *harness, m execMode) {
		require.NoError(t, h.reg.ConfigurePool("P", PoolConfig{CoreSize: 1, MaxQueueSize: 5}))
		c := New("Leaving", succeedRun, WithRegistry(h.reg), WithConfig(Config{Pool: "P", Timeout: -1}))
		p := h.reg.pool("P", false)
		require.True(t, p.acquire(p.config.Load()), "the test's worker holds the only slot")

		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		leaving := goCall(func() (string, error) { return m.exec(ctx, c, 1) })
		h.waitQueued(t, "P", 1)
		next := doneTask{make(chan struct{})}
		require.Equal(t, submitAccepted, p.submit(next, unread))
		h.waitQueued(t, "P", 2)

		// The worker takes the caller's run with its slot, then, having
		// found it abandoned, looks for the next run: the slot is taken.
		p.mu.Lock()
		taken := p.queue[0]
		p.queue = p.queue[1:]
		p.queued.Store(int64(len(p.queue)))
		p.mu.Unlock()
		require.Nil(t, p.next(), "the slot is the taken run's")

		cancel()
		assert.ErrorIs(t, awaitCall(t, leaving).err, context.Canceled)
		recv(t, next.done, "the next queued run, waiting beside a free slot with no worker")

		taken.runTask(p, unread) // the worker finds the run abandoned (and recycles it)
		assert.Equal(t, evs("CANCELLED"), h.events())
		h.waitIdle(t, "P")
		assert.Zero(t, p.busy.Load())
	})
}
