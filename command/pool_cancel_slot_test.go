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
// worker cannot start before the caller blocks.
func TestPoolSlotBackWhenTheSubscriberLeavesBeforeTheRunStarts(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	h := newHarness(t)
	require.NoError(t, h.reg.ConfigurePool("one", PoolConfig{CoreSize: 1}))
	var started atomic.Int32
	c := New("leaving", func(ctx context.Context, id int) (string, error) {
		started.Add(1)
		return "", nil
	}, WithRegistry(h.reg), WithConfig(Config{Pool: "one", Timeout: -1}))
	unstarted := 0
	for i := range 50 {
		before := started.Load()
		sub := c.ToObservable(context.Background(), i).Subscribe(context.Background(), ignore[string]{})
		sub.Unsubscribe()
		if started.Load() != before {
			h.completion() // the caller yielded to the worker (see yieldEvery)
			continue
		}
		unstarted++
		running, queued := h.pool("one").size()
		assert.Zero(t, running, "the slot came back with the cancel")
		assert.Zero(t, queued)
		assert.Equal(t, evs("CANCELLED"), h.events())
	}
	require.NotZero(t, unstarted, "no run was left unstarted")
	h.waitIdle(t, "one")
	assert.Zero(t, started.Load()-int32(50-unstarted), "no abandoned run started")
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
// the caller returns, unless the caller yields to it (see yieldEvery).
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
	unstarted := 0
	for i := range 50 {
		before := started.Load()
		_, err := c.Execute(context.Background(), i)
		events := h.events()
		if started.Load() != before {
			continue // the caller yielded to the worker
		}
		unstarted++
		assert.ErrorIs(t, err, ErrTimeout, "call %d", i)
		assert.Equal(t, evs("TIMEOUT", "FALLBACK_MISSING"), events, "call %d", i)
		running, queued := h.pool("one").size()
		assert.Zero(t, running, "call %d: the slot came back with the timeout", i)
		assert.Zero(t, queued)
	}
	require.NotZero(t, unstarted, "no run was left unstarted")
	h.waitIdle(t, "one")
	waitFor(t, "the workers to finish", func() bool { return !poolWorkerRunning() })
	assert.Zero(t, h.pool("one").busy.Load(), "every slot was given back once")
	assert.Zero(t, started.Load()-int32(50-unstarted), "no abandoned run started")
}
