package command

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/limit"
	"github.com/rxhystrix/rxhystrix/metricsstream"
)

// turnstile is a run whose call of input i enters (its i is sent on
// entered) and returns once i is let through.
type turnstile struct {
	entered chan int
	through [8]chan struct{}
}

func newTurnstile(t *testing.T) *turnstile {
	ts := &turnstile{entered: make(chan int, len(turnstile{}.through))}
	for i := range ts.through {
		ts.through[i] = make(chan struct{})
	}
	t.Cleanup(func() {
		for i := range ts.through {
			ts.letThrough(i)
		}
	})
	return ts
}

func (ts *turnstile) run(_ context.Context, i int) (string, error) {
	ts.entered <- i
	<-ts.through[i]
	return fmt.Sprint(i), nil
}

// letThrough lets the call of input i return, if it has not already.
func (ts *turnstile) letThrough(i int) {
	select {
	case <-ts.through[i]:
	default:
		close(ts.through[i])
	}
}

// backlogConfig is a key of one permit, no timeout, and a backlog of
// size waiters.
func backlogConfig(size int, order BacklogOrder) Config {
	return Config{Isolation: SemaphoreIsolation, MaxConcurrentRequests: 1, Timeout: -1,
		Backlog: BacklogConfig{Size: size, Order: order}}
}

// waitInBacklog starts an execution of input i of c by m and waits until
// n executions of key wait in its backlog.
func waitInBacklog(t *testing.T, h *harness, m execMode, c *Command[int, string], i, n int) <-chan callResult[string] {
	t.Helper()
	call := goCall(func() (string, error) { return m.exec(context.Background(), c, i) })
	waitFor(t, fmt.Sprintf("%d executions in the backlog", n), func() bool { return h.state(c.Key()).backlog.waiting.Load() == int64(n) })
	return call
}

// holdingThePermit returns a command "Backlogged" of h with cfg, whose
// call of input 0 (first) holds the key's one permit until ts lets it
// through.
func holdingThePermit(t *testing.T, h *harness, cfg Config) (*Command[int, string], *turnstile, <-chan callResult[string]) {
	t.Helper()
	ts := newTurnstile(t)
	c := New("Backlogged", ts.run, WithRegistry(h.reg), WithConfig(cfg))
	first := goCall(func() (string, error) { return c.Execute(context.Background(), 0) })
	recv(t, ts.entered, "the first call")
	return c, ts, first
}

// A permit given back goes to the waiter the order names: the newest
// (LIFO, the default) or the oldest (FIFO).
func TestBacklogHandsPermitsOverInOrder(t *testing.T) {
	for _, tc := range []struct {
		order BacklogOrder
		want  []int
	}{
		{LIFO, []int{3, 2, 1}},
		{FIFO, []int{1, 2, 3}},
	} {
		t.Run(tc.order.String(), func(t *testing.T) {
			forEachMode(t, func(t *testing.T, h *harness, m execMode) {
				ts := newTurnstile(t)
				c := New("Backlogged", ts.run, WithRegistry(h.reg), WithConfig(backlogConfig(3, tc.order)))
				calls := map[int]<-chan callResult[string]{0: goCall(func() (string, error) { return m.exec(context.Background(), c, 0) })}
				require.Equal(t, 0, recv(t, ts.entered, "the first call"))
				for i := 1; i <= 3; i++ {
					calls[i] = waitInBacklog(t, h, m, c, i, i)
				}
				ts.letThrough(0)
				assert.Equal(t, "0", awaitCall(t, calls[0]).v)
				for _, i := range tc.want {
					require.Equal(t, i, recv(t, ts.entered, "the next waiter to run"))
					assert.Equal(t, int64(1), h.execPermits("Backlogged"), "one permit, handed over")
					ts.letThrough(i)
					r := awaitCall(t, calls[i])
					require.NoError(t, r.err)
					assert.Equal(t, fmt.Sprint(i), r.v)
				}
				for range 4 {
					assert.Equal(t, evs("SUCCESS"), h.events())
				}
				assert.Zero(t, h.state("Backlogged").backlog.waiting.Load())
				h.assertReleased("Backlogged")
			})
		})
	}
}

// An execution that finds the backlog full is refused at once, as one at
// the limit without a backlog.
func TestFullBacklogRejectsAtOnce(t *testing.T) {
	forEachMode(t, func(t *testing.T, h *harness, m execMode) {
		ts := newTurnstile(t)
		cfg := backlogConfig(1, LIFO)
		cfg.Backlog.Timeout = time.Minute
		c := New("Backlogged", ts.run, WithRegistry(h.reg), WithConfig(cfg))
		first := goCall(func() (string, error) { return m.exec(context.Background(), c, 0) })
		recv(t, ts.entered, "the first call")
		waiter := waitInBacklog(t, h, m, c, 1, 1)

		st, _ := c.Metrics().Status()
		assert.Equal(t, metricsstream.BacklogStatus{Size: 1, Timeout: time.Minute, Order: "LIFO", Waiting: 1}, st.Backlog)

		_, err := m.exec(context.Background(), c, 2)
		assert.ErrorIs(t, err, ErrSemaphoreRejected)
		assert.Equal(t, evs("SEMAPHORE_REJECTED", "FALLBACK_MISSING"), h.events())

		ts.letThrough(0)
		ts.letThrough(1)
		assert.NoError(t, awaitCall(t, first).err)
		assert.NoError(t, awaitCall(t, waiter).err)
		h.assertReleased("Backlogged")
	})
}

// The key's status counts what the waits came to: the waiters that took
// a permit and how long they waited, on the registry's clock, and the
// executions refused as the backlog was full or as their wait ran out.
func TestBacklogStatusCountsTheWaits(t *testing.T) {
	h := newHarness(t)
	cfg := backlogConfig(1, LIFO)
	cfg.Backlog.Timeout = time.Minute
	c, ts, first := holdingThePermit(t, h, cfg)
	m := execModes[0]
	served := waitInBacklog(t, h, m, c, 1, 1)
	_, err := m.exec(context.Background(), c, 2)
	require.ErrorIs(t, err, ErrSemaphoreRejected, "the backlog is full")

	h.clock.Advance(10 * time.Second)
	ts.letThrough(0)
	require.Equal(t, 1, recv(t, ts.entered, "the waiter, after 10s"))
	expires := waitInBacklog(t, h, m, c, 3, 1)
	h.clock.Advance(time.Minute)
	require.ErrorIs(t, awaitCall(t, expires).err, ErrSemaphoreRejected, "its wait ran out")

	st, _ := c.Metrics().Status()
	assert.Equal(t, metricsstream.BacklogStatus{Size: 1, Timeout: time.Minute, Order: "LIFO",
		Admitted: 1, WaitTime: 10 * time.Second, Full: 1, Expired: 1}, st.Backlog)
	ts.letThrough(1)
	require.NoError(t, awaitCall(t, first).err)
	require.NoError(t, awaitCall(t, served).err)
	h.assertReleased("Backlogged")
}

// A wait ends at Backlog.Timeout, on the registry's clock, in a
// SEMAPHORE_REJECTED; the permit given back later wakes nobody.
func TestBacklogWaitEndsAtItsTimeout(t *testing.T) {
	forEachMode(t, func(t *testing.T, h *harness, m execMode) {
		ts := newTurnstile(t)
		cfg := backlogConfig(2, LIFO)
		cfg.Backlog.Timeout = 100 * time.Millisecond
		c := New("Backlogged", ts.run, WithRegistry(h.reg), WithConfig(cfg))
		first := goCall(func() (string, error) { return m.exec(context.Background(), c, 0) })
		recv(t, ts.entered, "the first call")
		waiter := waitInBacklog(t, h, m, c, 1, 1)

		h.clock.Advance(99 * time.Millisecond)
		notReturned(t, waiter)
		h.clock.Advance(time.Millisecond)
		assert.ErrorIs(t, awaitCall(t, waiter).err, ErrSemaphoreRejected)
		assert.Equal(t, evs("SEMAPHORE_REJECTED", "FALLBACK_MISSING"), h.events())
		assert.Zero(t, h.state("Backlogged").backlog.waiting.Load())

		ts.letThrough(0)
		assert.NoError(t, awaitCall(t, first).err)
		assert.Equal(t, evs("SUCCESS"), h.events())
		h.assertReleased("Backlogged")
	})
}

// Without a Backlog.Timeout, or with a longer one, the wait ends when
// the execution's timeout would: a refusal, which the breaker does not
// count, not a TIMEOUT.
func TestBacklogWaitEndsBeforeTheExecutionTimeout(t *testing.T) {
	for _, backlogTimeout := range []time.Duration{0, 200 * time.Millisecond} {
		t.Run(fmt.Sprint(backlogTimeout), func(t *testing.T) {
			h := newHarness(t)
			ts := newTurnstile(t)
			cfg := backlogConfig(2, LIFO)
			cfg.Timeout = 50 * time.Millisecond
			cfg.Backlog.Timeout = backlogTimeout
			// The first call's run ignores its deadline, and keeps its permit.
			c := New("Backlogged", ts.run, WithRegistry(h.reg), WithConfig(cfg))
			first := goCall(func() (string, error) { return c.Execute(context.Background(), 0) })
			recv(t, ts.entered, "the first call")
			h.clock.Advance(30 * time.Millisecond)
			waiter := waitInBacklog(t, h, execModes[0], c, 1, 1)

			h.clock.Advance(49 * time.Millisecond) // the waiter's timeout is at 80 ms: 30 + 50
			notReturned(t, waiter)
			h.clock.Advance(time.Millisecond)
			assert.ErrorIs(t, awaitCall(t, waiter).err, ErrSemaphoreRejected)
			assert.Equal(t, evs("SEMAPHORE_REJECTED", "FALLBACK_MISSING"), h.events())

			ts.letThrough(0)
			assert.ErrorIs(t, awaitCall(t, first).err, ErrTimeout)
			h.assertReleased("Backlogged")
		})
	}
}

// A waiter whose caller leaves ends CANCELLED, with nothing taken, and
// the permit given back later goes to the waiter still there.
func TestBacklogWaiterCancelled(t *testing.T) {
	forEachMode(t, func(t *testing.T, h *harness, m execMode) {
		ts := newTurnstile(t)
		c := New("Backlogged", ts.run, WithRegistry(h.reg), WithConfig(backlogConfig(2, LIFO)))
		first := goCall(func() (string, error) { return m.exec(context.Background(), c, 0) })
		recv(t, ts.entered, "the first call")
		stays := waitInBacklog(t, h, m, c, 1, 1)
		ctx, cancel := context.WithCancel(context.Background())
		leaves := goCall(func() (string, error) { return m.exec(ctx, c, 2) })
		waitFor(t, "two waiters", func() bool { return h.state("Backlogged").backlog.waiting.Load() == 2 })

		cancel()
		assert.ErrorIs(t, awaitCall(t, leaves).err, context.Canceled)
		assert.Equal(t, evs("CANCELLED"), h.events())
		assert.Equal(t, int64(1), h.state("Backlogged").backlog.waiting.Load())

		ts.letThrough(0)
		assert.Equal(t, 1, recv(t, ts.entered, "the waiter that stayed"))
		ts.letThrough(1)
		assert.NoError(t, awaitCall(t, first).err)
		assert.NoError(t, awaitCall(t, stays).err)
		h.assertReleased("Backlogged")
	})
}

// Configure wakes the waiters, which take the permits it adds.
func TestConfigureWakesTheBacklog(t *testing.T) {
	h := newHarness(t)
	cfg := backlogConfig(2, LIFO)
	c, ts, first := holdingThePermit(t, h, cfg)
	calls := []<-chan callResult[string]{first, waitInBacklog(t, h, execModes[0], c, 1, 1), waitInBacklog(t, h, execModes[0], c, 2, 2)}

	cfg.MaxConcurrentRequests = 3
	require.NoError(t, h.reg.Configure("Backlogged", cfg))
	entered := map[int]bool{recv(t, ts.entered, "a waiter"): true, recv(t, ts.entered, "the other"): true}
	assert.Equal(t, map[int]bool{1: true, 2: true}, entered)
	assert.Equal(t, int64(3), h.execPermits("Backlogged"))
	for i, call := range calls {
		ts.letThrough(i)
		assert.NoError(t, awaitCall(t, call).err)
	}
	h.assertReleased("Backlogged")
}

// A Configure that takes the backlog away refuses its waiters.
func TestConfigureWithoutABacklogRefusesItsWaiters(t *testing.T) {
	h := newHarness(t)
	cfg := backlogConfig(2, LIFO)
	c, ts, first := holdingThePermit(t, h, cfg)
	waiter := waitInBacklog(t, h, execModes[0], c, 1, 1)

	cfg.Backlog = BacklogConfig{}
	require.NoError(t, h.reg.Configure("Backlogged", cfg))
	assert.ErrorIs(t, awaitCall(t, waiter).err, ErrSemaphoreRejected)
	assert.Equal(t, evs("SEMAPHORE_REJECTED", "FALLBACK_MISSING"), h.events())
	ts.letThrough(0)
	assert.NoError(t, awaitCall(t, first).err)
	h.assertReleased("Backlogged")
}

// An execution that waited samples the adaptive limit from when it took
// its permit: a long wait is not a slow downstream.
func TestBacklogWaitIsNotTheAdaptiveLimitsRoundTrip(t *testing.T) {
	h := newHarness(t)
	cfg := backlogConfig(1, LIFO)
	cfg.AdaptiveLimit = limit.AIMD{InitialLimit: 1, MinLimit: 1, MaxLimit: 10, Timeout: 100 * time.Millisecond}
	c, ts, first := holdingThePermit(t, h, cfg)
	waiter := waitInBacklog(t, h, execModes[0], c, 1, 1)
	h.clock.Advance(200 * time.Millisecond)
	ts.letThrough(0)
	assert.NoError(t, awaitCall(t, first).err) // a drop: 200 ms over the 100 ms timeout, the limit stays at its floor
	recv(t, ts.entered, "the waiter")
	h.clock.Advance(10 * time.Millisecond)
	ts.letThrough(1)
	assert.NoError(t, awaitCall(t, waiter).err)
	l := h.state("Backlogged").limiter.Load()
	assert.Equal(t, 2, l.Limit(), "the waiter's run took no time: the limit grows")
}

// A waiter that leaves after a wake took it out passes the wake on: it
// may stand for a permit the leaver does not take.
func TestBacklogLeaverPassesItsWakeOn(t *testing.T) {
	var b backlog
	older, newer := &permitWaiter{woken: make(chan struct{}, 1)}, &permitWaiter{woken: make(chan struct{}, 1)}
	require.True(t, b.join(older, 2))
	require.True(t, b.join(newer, 2))
	assert.False(t, b.join(&permitWaiter{}, 2), "full")

	b.wake(LIFO)
	assert.Equal(t, int64(1), b.waiting.Load())
	b.leave(newer, LIFO)
	select {
	case <-older.woken:
	default:
		t.Fatal("the wake the newer waiter left with did not go to the older")
	}
	assert.Zero(t, b.waiting.Load())
	assert.Empty(t, b.waiters)
}

// A waiter woken that finds its permit taken joins again in the place it
// first joined at: between the waiters that joined before and after it.
func TestBacklogWaiterWokenKeepsItsPlace(t *testing.T) {
	var b backlog
	ws := make([]*permitWaiter, 3)
	for i := range ws {
		ws[i] = &permitWaiter{woken: make(chan struct{}, 1)}
		require.True(t, b.join(ws[i], 3))
	}
	b.wake(FIFO)
	<-ws[0].woken
	b.wake(LIFO)
	<-ws[2].woken
	require.True(t, b.join(ws[2], 1), "a waiter that joins again is not refused for Size")
	require.True(t, b.join(ws[0], 1))
	assert.Equal(t, ws, b.waiters)
	assert.Equal(t, int64(3), b.waiting.Load())
}

func TestBacklogConfigValidate(t *testing.T) {
	sem := func(b BacklogConfig) Config { return Config{Isolation: SemaphoreIsolation, Backlog: b} }
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{sem(BacklogConfig{Size: -1}), "Config.Backlog.Size: -1 is negative"},
		{sem(BacklogConfig{Size: 1, Timeout: -time.Second}), "Config.Backlog.Timeout: -1s is negative"},
		{sem(BacklogConfig{Size: 1, Order: 2}), "Config.Backlog.Order: unknown value 2"},
		{Config{Backlog: BacklogConfig{Size: 1}}, "Config.Backlog: need Isolation SemaphoreIsolation"},
		{Config{Isolation: PoolIsolation, Backlog: BacklogConfig{Size: 1}}, "Config.Backlog: need Isolation SemaphoreIsolation"},
		{Config{Isolation: SemaphoreIsolation, Backlog: BacklogConfig{Size: 1}, Partitions: []Partition{{Name: "a", Share: 1}}}, "Config.Backlog: a key with Partitions"},
	} {
		err := tc.cfg.Validate()
		assert.ErrorIs(t, err, ErrInvalidConfig)
		assert.ErrorContains(t, err, tc.want)
	}
	assert.NoError(t, sem(BacklogConfig{Size: 5, Timeout: time.Second, Order: FIFO}).Validate())
	assert.NoError(t, Config{Backlog: BacklogConfig{Timeout: time.Second}}.Validate(), "no Size, no backlog")
}

// A sample that raises the adaptive limit gives the backlog the new
// permits at once, as a Configure that raises the permits does and as a
// pool's rising limit starts its queued runs: a waiter must not wait out
// its timeout while a permit is free.
func TestBacklogTakesTheAdaptiveLimitsNewPermits(t *testing.T) {
	h := newHarness(t)
	cfg := backlogConfig(2, LIFO)
	cfg.AdaptiveLimit = limit.AIMD{InitialLimit: 1, MinLimit: 1, MaxLimit: 10, Timeout: -1}
	c, ts, first := holdingThePermit(t, h, cfg)
	waiters := []<-chan callResult[string]{
		waitInBacklog(t, h, execModes[0], c, 1, 1),
		waitInBacklog(t, h, execModes[0], c, 2, 2),
	}
	h.clock.Advance(time.Millisecond)
	ts.letThrough(0)
	require.NoError(t, awaitCall(t, first).err)
	assert.Equal(t, 2, h.state("Backlogged").limiter.Load().Limit(), "1 in flight ≥ 1/2: L + 1")
	// The permit given back went to one waiter, the new one to the other.
	got := []int{recv(t, ts.entered, "a waiter"), recv(t, ts.entered, "the other waiter")}
	assert.ElementsMatch(t, []int{1, 2}, got)
	ts.letThrough(1)
	ts.letThrough(2)
	for _, w := range waiters {
		require.NoError(t, awaitCall(t, w).err)
	}
	h.assertReleased("Backlogged")
}

// A subscriber that leaves while its execution waits in the backlog ends
// it CANCELLED: the goroutine that ends the subscriber's scope tells the
// subscription before it closes the scope's Done channel, on which the
// wait is, so it must not wait for the execution's admission meanwhile.
func TestBacklogSubscriberLeavesWhileWaiting(t *testing.T) {
	h := newHarness(t)
	c, ts, first := holdingThePermit(t, h, backlogConfig(1, LIFO))
	subCtx, cancel := context.WithCancel(context.Background())
	defer cancel()
	subs := make(chan *collected[string], 1)
	go func() { subs <- subscribeAll(subCtx, c.ToObservable(context.Background(), 1)) }()
	waitFor(t, "a waiter", func() bool { return h.state("Backlogged").backlog.waiting.Load() == 1 })
	cancel()
	recv(t, subs, "Subscribe to return")
	assert.Equal(t, evs("CANCELLED"), h.events())
	assert.Equal(t, int64(0), h.state("Backlogged").backlog.waiting.Load(), "no place kept")
	ts.letThrough(0)
	require.NoError(t, awaitCall(t, first).err)
	assert.Equal(t, evs("SUCCESS"), h.events())
	h.assertReleased("Backlogged")
	h.noMoreCompletions()
}

// A Configure that takes the backlog away but adds permits wakes the
// waiters "to try again under the new permits": a waiter that finds one
// free takes it, as an execution arriving now would, rather than being
// refused with permits idle.
func TestConfigureWithoutABacklogButMorePermitsAdmitsItsWaiters(t *testing.T) {
	h := newHarness(t)
	cfg := backlogConfig(2, LIFO)
	c, ts, first := holdingThePermit(t, h, cfg)
	waiter := waitInBacklog(t, h, execModes[0], c, 1, 1)

	cfg.Backlog = BacklogConfig{}
	cfg.MaxConcurrentRequests = 2
	require.NoError(t, h.reg.Configure("Backlogged", cfg))
	select {
	case r := <-waiter:
		t.Fatalf("the waiter ended (%q, %v) with a permit free under the new Config", r.v, r.err)
	case i := <-ts.entered:
		assert.Equal(t, 1, i)
	case <-time.After(stuckAfter):
		t.Fatal("stuck")
	}
	assert.Equal(t, int64(2), h.execPermits("Backlogged"))
	ts.letThrough(1)
	require.NoError(t, awaitCall(t, waiter).err)
	ts.letThrough(0)
	require.NoError(t, awaitCall(t, first).err)
	h.assertReleased("Backlogged")
}

// A wait in the backlog is time the caller waited: an execution whose
// wait ends in a refusal (its Backlog.Timeout) or with its caller leaving
// has waited that long, TotalLatency being "how long the caller waited
// from the start of the execution to its end", and it ended then, not at
// its start.
func TestBacklogWaitThatEndsUnadmittedIsItsTotalLatency(t *testing.T) {
	for _, leaves := range []bool{false, true} {
		t.Run(map[bool]string{false: "refused", true: "left"}[leaves], func(t *testing.T) {
			forEachMode(t, func(t *testing.T, h *harness, m execMode) {
				cfg := backlogConfig(1, LIFO)
				cfg.Backlog.Timeout = 100 * time.Millisecond
				c, ts, first := holdingThePermit(t, h, cfg)
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				waiter := goCall(func() (string, error) { return m.exec(ctx, c, 1) })
				waitFor(t, "a waiter", func() bool { return h.state("Backlogged").backlog.waiting.Load() == 1 })
				var want []string
				if leaves {
					h.clock.Advance(30 * time.Millisecond)
					cancel()
					assert.ErrorIs(t, awaitCall(t, waiter).err, context.Canceled)
					want = evs("CANCELLED")
				} else {
					h.clock.Advance(100 * time.Millisecond)
					assert.ErrorIs(t, awaitCall(t, waiter).err, ErrSemaphoreRejected)
					want = evs("SEMAPHORE_REJECTED", "FALLBACK_MISSING")
				}
				waited := map[bool]time.Duration{false: 100 * time.Millisecond, true: 30 * time.Millisecond}[leaves]
				done := h.completion()
				assert.Equal(t, want, eventNames(done.Events))
				assert.Equal(t, waited, done.TotalLatency, "TotalLatency")
				assert.Equal(t, harnessStart.Add(waited).UnixNano(), done.End.UnixNano(), "End")
				ts.letThrough(0)
				require.NoError(t, awaitCall(t, first).err)
				h.assertReleased("Backlogged")
			})
		})
	}
}

// ExecutionLatency is "how long the user's code ran (Hystrix's execution
// latency)", which Hystrix starts once the semaphore is acquired: the
// wait in the backlog before the permit is in TotalLatency, not in it (nor,
// through it, in the latency percentiles and the breaker's slow calls).
func TestBacklogWaitIsNotExecutionLatency(t *testing.T) {
	forEachMode(t, func(t *testing.T, h *harness, m execMode) {
		c, ts, first := holdingThePermit(t, h, backlogConfig(1, LIFO))
		waiter := waitInBacklog(t, h, m, c, 1, 1)
		h.clock.Advance(200 * time.Millisecond)
		ts.letThrough(0)
		require.NoError(t, awaitCall(t, first).err)
		h.completion() // the first call's
		require.Equal(t, 1, recv(t, ts.entered, "the waiter"))
		h.clock.Advance(10 * time.Millisecond)
		ts.letThrough(1)
		require.NoError(t, awaitCall(t, waiter).err)
		done := h.completion()
		assert.Equal(t, evs("SUCCESS"), eventNames(done.Events))
		assert.Equal(t, 10*time.Millisecond, done.ExecutionLatency, "ExecutionLatency: the run alone")
		assert.Equal(t, 210*time.Millisecond, done.TotalLatency, "TotalLatency: the wait and the run")
		h.assertReleased("Backlogged")
	})
}
