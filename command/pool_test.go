package command

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/internal/clock"
	ms "github.com/rxhystrix/rxhystrix/metricsstream"
	"github.com/rxhystrix/rxhystrix/observable"
)

// 27: a pool of one worker and no queue, busy: the next execution is
// rejected with an *Error of PoolRejectedFailure and never runs.
func TestRejectedThreadWithNoFallback(t *testing.T) {
	forEachMode(t, func(t *testing.T, h *harness, m execMode) {
		require.NoError(t, h.reg.ConfigurePool("Users", PoolConfig{CoreSize: 1}))
		g := newGate()
		defer g.release()
		c := New("GetUser", func(ctx context.Context, id int) (string, error) {
			return "held", g.wait(ctx, true)
		}, WithRegistry(h.reg), WithConfig(Config{Pool: "Users", Timeout: -1}))
		holder := goCall(func() (string, error) { return c.Execute(context.Background(), 1) })
		g.arrived(t)

		_, err := m.exec(context.Background(), c, 2)
		assertCommandError(t, err, "GetUser", PoolRejectedFailure, ErrPoolRejected, ErrFallbackMissing)
		assert.Equal(t, "GetUser could not be queued for execution and no fallback available", err.Error())
		done := h.completion()
		assert.Equal(t, evs("THREAD_POOL_REJECTED", "FALLBACK_MISSING"), eventNames(done.Events))
		assert.False(t, done.Executed)
		assert.Empty(t, g.entered, "the rejected run never ran")

		g.release()
		require.NoError(t, awaitCall(t, holder).err)
		assert.Equal(t, evs("SUCCESS"), h.events())
		pm, ok := h.reg.Metrics().LookupPool("Users")
		require.True(t, ok)
		h.clock.Advance(ms.DefaultRollingWindow)
		assert.Equal(t, int64(1), pm.CumulativeCount(ms.PoolRejection))
		assert.Equal(t, int64(1), pm.CumulativeCount(ms.PoolExecuted))
	})
}

// 27: with a fallback, the rejection is covered.
func TestRejectedThreadWithFallback(t *testing.T) {
	forEachMode(t, func(t *testing.T, h *harness, m execMode) {
		require.NoError(t, h.reg.ConfigurePool("Users", PoolConfig{CoreSize: 1}))
		g := newGate()
		defer g.release()
		var seen error
		c := New("GetUser", func(ctx context.Context, id int) (string, error) {
			return "held", g.wait(ctx, true)
		}, WithRegistry(h.reg), WithConfig(Config{Pool: "Users", Timeout: -1})).WithFallback(func(ctx context.Context, id int, err error) (string, error) {
			seen = err
			return "anonymous", nil
		})
		holder := goCall(func() (string, error) { return c.Execute(context.Background(), 1) })
		g.arrived(t)
		v, err := m.exec(context.Background(), c, 2)
		require.NoError(t, err)
		assert.Equal(t, "anonymous", v)
		assertCommandError(t, seen, "GetUser", PoolRejectedFailure, ErrPoolRejected, nil)
		assert.Equal(t, evs("THREAD_POOL_REJECTED", "FALLBACK_SUCCESS"), h.events())
		g.release()
		awaitCall(t, holder)
		h.completion()
	})
}

// 28: QueueSizeRejectionThreshold rejects before MaxQueueSize is reached:
// one runs, one waits, the third is rejected.
func TestRejectedThreadUsingQueueSize(t *testing.T) {
	forEachMode(t, func(t *testing.T, h *harness, m execMode) {
		require.NoError(t, h.reg.ConfigurePool("Users", PoolConfig{CoreSize: 1, MaxQueueSize: 10, QueueSizeRejectionThreshold: 1}))
		g := newGate()
		defer g.release()
		c := New("GetUser", func(ctx context.Context, id int) (string, error) {
			return fmt.Sprint("ran ", id), g.wait(ctx, true)
		}, WithRegistry(h.reg), WithConfig(Config{Pool: "Users", Timeout: -1}))
		first := goCall(func() (string, error) { return c.Execute(context.Background(), 1) })
		g.arrived(t)
		second := goCall(func() (string, error) { return m.exec(context.Background(), c, 2) })
		h.waitQueued(t, "Users", 1)

		_, err := m.exec(context.Background(), c, 3)
		assertCommandError(t, err, "GetUser", PoolRejectedFailure, ErrPoolRejected, ErrFallbackMissing)
		assert.Equal(t, evs("THREAD_POOL_REJECTED", "FALLBACK_MISSING"), h.events())

		g.release()
		assert.Equal(t, "ran 1", awaitCall(t, first).v)
		assert.Equal(t, "ran 2", awaitCall(t, second).v, "the queued call ran once a worker was free")
		assert.Equal(t, evs("SUCCESS"), h.events())
		assert.Equal(t, evs("SUCCESS"), h.events())
	})
}

// 46: a call still waiting in the queue that is cancelled leaves the
// queue at once, never runs, and records CANCELLED.
func TestCancelledTasksInQueueGetRemoved(t *testing.T) {
	forEachMode(t, func(t *testing.T, h *harness, m execMode) {
		require.NoError(t, h.reg.ConfigurePool("Users", PoolConfig{CoreSize: 1, MaxQueueSize: 5}))
		g := newGate()
		defer g.release()
		var ran []int
		c := New("GetUser", func(ctx context.Context, id int) (string, error) {
			ran = append(ran, id)
			return "ran", g.wait(ctx, true)
		}, WithRegistry(h.reg), WithConfig(Config{Pool: "Users", Timeout: -1}))
		first := goCall(func() (string, error) { return c.Execute(context.Background(), 1) })
		g.arrived(t)
		ctx, cancel := context.WithCancel(context.Background())
		queued := goCall(func() (string, error) { return m.exec(ctx, c, 2) })
		h.waitQueued(t, "Users", 1)

		cancel()
		res := awaitCall(t, queued)
		assert.ErrorIs(t, res.err, context.Canceled)
		done := h.completion()
		assert.Equal(t, evs("CANCELLED"), eventNames(done.Events))
		assert.False(t, done.Executed)
		h.waitQueued(t, "Users", 0)

		g.release()
		awaitCall(t, first)
		h.completion()
		h.waitIdle(t, "Users")
		assert.Equal(t, []int{1}, ran, "the cancelled call never ran")
		h.assertReleased("GetUser")
	})
}

// A pool of CoreSize N never runs more than N calls of user code at once,
// however many time out: callers return at the timeout while the hung
// runs keep their workers, so further calls are rejected until the runs
// return.
func TestPoolIsolationBoundsUserCodeEvenWhenRunsHang(t *testing.T) {
	forEachMode(t, func(t *testing.T, h *harness, m execMode) {
		const coreSize = 3
		require.NoError(t, h.reg.ConfigurePool("Users", PoolConfig{CoreSize: coreSize}))
		g := newGate()
		defer g.release()
		c := New("GetUser", func(ctx context.Context, id int) (string, error) {
			g.wait(ctx, false) // hung: ignores its context
			return "late", nil
		}, WithRegistry(h.reg), WithConfig(Config{Pool: "Users"})).WithFallback(fallbackName)

		var calls []<-chan callResult[string]
		for i := range coreSize {
			calls = append(calls, goCall(func() (string, error) { return m.exec(context.Background(), c, i) }))
			g.arrived(t)
		}
		for range 5 {
			v, err := m.exec(context.Background(), c, 9)
			require.NoError(t, err)
			assert.Equal(t, "anonymous", v)
			assert.Equal(t, evs("THREAD_POOL_REJECTED", "FALLBACK_SUCCESS"), h.events())
		}

		h.clock.Advance(DefaultTimeout)
		for _, call := range calls {
			assert.Equal(t, "anonymous", awaitCall(t, call).v, "the caller returns at the timeout")
			assert.Equal(t, evs("TIMEOUT", "FALLBACK_SUCCESS"), h.events())
		}
		running, _ := h.pool("Users").size()
		assert.Equal(t, coreSize, running, "timed-out runs keep their workers")
		_, err := m.exec(context.Background(), c, 9)
		require.NoError(t, err)
		assert.Equal(t, evs("THREAD_POOL_REJECTED", "FALLBACK_SUCCESS"), h.events())
		assert.Equal(t, int64(coreSize), g.most.Load(), "never more than CoreSize runs at once")
		assert.Zero(t, c.Metrics().ConcurrentExecutions(), "timed-out executions are no longer counted as running")

		g.release()
		h.waitIdle(t, "Users")
		go func() { g.arrived(t) }()
		v, err := m.exec(context.Background(), c, 1)
		require.NoError(t, err)
		assert.Equal(t, "late", v)
		assert.Equal(t, evs("SUCCESS"), h.events())
	})
}

// Pool isolation runs run on a worker goroutine; semaphore isolation runs
// it on the caller's and starts no goroutine.
func TestIsolationGoroutines(t *testing.T) {
	for _, iso := range bothIsolations {
		t.Run(iso.String(), func(t *testing.T) {
			h := newHarness(t)
			var runGoroutine int64
			var inside int
			c := New("GetUser", func(ctx context.Context, id int) (string, error) {
				runGoroutine = goroutineID()
				inside = runtime.NumGoroutine()
				return "ok", nil
			}, WithRegistry(h.reg), WithConfig(Config{Isolation: iso}))
			before := runtime.NumGoroutine()
			_, err := c.Execute(context.Background(), 1)
			require.NoError(t, err)
			if iso == PoolIsolation {
				assert.NotEqual(t, goroutineID(), runGoroutine)
			} else {
				assert.Equal(t, goroutineID(), runGoroutine, "run runs on the caller's goroutine")
				assert.LessOrEqual(t, inside, before, "no goroutine started")
			}
			h.completion()
		})
	}
}

// A pool-isolated run that nothing can end early (no timeout, a caller's
// context that is never done) runs on the caller's goroutine, in a slot of
// the pool that counts it as any other; one whose caller can leave runs on
// a worker.
func TestPoolRunThatNothingCanEndEarlyRunsOnTheCaller(t *testing.T) {
	cancellable, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, tc := range []struct {
		name     string
		ctx      context.Context
		timeout  time.Duration
		onCaller bool
	}{
		{"no timeout, background", context.Background(), -1, true},
		{"no timeout, cancellable", cancellable, -1, false},
		{"timeout, background", context.Background(), time.Second, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			require.NoError(t, h.reg.ConfigurePool("Users", PoolConfig{CoreSize: 1}))
			var runGoroutine int64
			var running int
			armed := false
			c := New("GetUser", func(ctx context.Context, id int) (string, error) {
				runGoroutine = goroutineID()
				running, _ = h.pool("Users").size()
				if d, ok := ctx.(*deadlineContext); ok {
					armed = d.waiters.Load() != nil
				}
				return "ok", nil
			}, WithRegistry(h.reg), WithConfig(Config{Pool: "Users", Timeout: tc.timeout}))
			v, err := c.Execute(tc.ctx, 1)
			require.NoError(t, err)
			assert.Equal(t, "ok", v)
			assert.Equal(t, tc.onCaller, goroutineID() == runGoroutine)
			assert.Equal(t, 1, running, "the run held the pool's slot")
			assert.False(t, armed, "deciding where to run armed no timer on run's context")
			assert.True(t, h.pool("Users").idle(), "the slot is free again")
			done := h.completion()
			assert.Equal(t, evs("SUCCESS"), eventNames(done.Events))
			assert.True(t, done.Executed)
			assert.Equal(t, "Users", done.PoolKey)
			pm, ok := h.reg.Metrics().LookupPool("Users")
			require.True(t, ok)
			// The run is in the pool's metrics by the time its caller
			// has the result: a worker counts it before it hands it over.
			h.clock.Advance(ms.DefaultRollingWindow)
			assert.Equal(t, int64(1), pm.CumulativeCount(ms.PoolExecuted))
		})
	}
}

// Per-call pools (WithPoolKey): one pool per downstream, made on first
// use with the configuration ConfigurePool gave its name, resized live,
// and retired once idle for its IdleTimeout.
func TestPerCallPools(t *testing.T) {
	h := newHarness(t)
	g := newGate()
	defer g.release()
	c := New("Fetch", func(ctx context.Context, url string) (string, error) {
		if url == "http://slow" {
			return "slow", g.wait(ctx, true)
		}
		return "fetched " + url, nil
	}, WithRegistry(h.reg), WithConfig(Config{Timeout: -1})).WithPoolKey(func(url string) string { return url })
	require.NoError(t, h.reg.ConfigurePool("http://slow", PoolConfig{CoreSize: 1, MaxQueueSize: 5, IdleTimeout: time.Minute}))
	assert.Zero(t, h.reg.PoolCount(), "pools are made on first use")

	ctx := context.Background()
	v, err := c.Execute(ctx, "http://a")
	require.NoError(t, err)
	assert.Equal(t, "fetched http://a", v)
	done := h.completion()
	assert.Equal(t, "http://a", done.PoolKey)
	_, err = c.ToObservable(ctx, "http://b").First(ctx)
	require.NoError(t, err)
	assert.Equal(t, "http://b", h.completion().PoolKey)
	assert.Equal(t, 2, h.reg.PoolCount())
	_, ok := h.reg.pools.Load("Fetch")
	assert.False(t, ok, "the command's own pool is not used")

	// The slow downstream fills its own pool of one; the others are not
	// affected.
	slow1 := goCall(func() (string, error) { return c.Execute(ctx, "http://slow") })
	g.arrived(t)
	slow2 := goCall(func() (string, error) { return c.Execute(ctx, "http://slow") })
	h.waitQueued(t, "http://slow", 1)
	v, err = c.Execute(ctx, "http://a")
	require.NoError(t, err)
	assert.Equal(t, "fetched http://a", v)
	h.completion()

	// Resizing live starts the queued call at once.
	require.NoError(t, h.reg.ConfigurePool("http://slow", PoolConfig{CoreSize: 2, MaxQueueSize: 5, IdleTimeout: time.Minute}))
	g.arrived(t)
	running, queued := h.pool("http://slow").size()
	assert.Equal(t, 2, running)
	assert.Zero(t, queued)
	g.release()
	awaitCall(t, slow1)
	awaitCall(t, slow2)
	h.completion()
	h.completion()
	h.waitIdle(t, "http://slow")

	// Idle pools are retired after their IdleTimeout.
	require.Equal(t, 3, h.reg.PoolCount())
	h.clock.Advance(DefaultPoolIdleTimeout)
	assert.Zero(t, h.reg.PoolCount(), "every per-call pool was idle for a minute")
	for _, key := range []string{"http://a", "http://b", "http://slow"} {
		_, ok := h.reg.Metrics().LookupPool(key)
		assert.False(t, ok, "the metrics of retired pool %s are gone with it", key)
	}

	// A retired pool is made again on use.
	_, err = c.Execute(ctx, "http://a")
	require.NoError(t, err)
	h.completion()
	assert.Equal(t, 1, h.reg.PoolCount())
}

// A per-call pool's idle time counts from its last use, not from its
// making: one used every 40s is kept, and retired when a minute has
// passed since its last use.
func TestPerCallPoolIsRetiredItsIdleTimeoutAfterItsLastUse(t *testing.T) {
	h := newHarness(t)
	c := New("Fetch", func(ctx context.Context, url string) (string, error) { return url, nil },
		WithRegistry(h.reg), WithConfig(Config{Timeout: -1})).WithPoolKey(func(url string) string { return url })
	use := func() {
		t.Helper()
		_, err := c.Execute(context.Background(), "http://a")
		require.NoError(t, err)
		h.completion()
		h.waitIdle(t, "http://a")
	}
	use()
	for range 3 {
		h.clock.Advance(40 * time.Second)
		require.Equal(t, 1, h.reg.PoolCount(), "used 40s ago")
		use()
	}
	h.clock.Advance(DefaultPoolIdleTimeout - time.Millisecond)
	assert.Equal(t, 1, h.reg.PoolCount(), "not yet idle for its IdleTimeout")
	h.clock.Advance(time.Millisecond)
	assert.Zero(t, h.reg.PoolCount(), "idle for its IdleTimeout since its last use")
}

// A busy per-call pool is not retired, and pools named by Config.Pool
// never are.
func TestPerCallPoolsBusyAreKept(t *testing.T) {
	h := newHarness(t)
	g := newGate()
	defer g.release()
	c := New("Fetch", func(ctx context.Context, url string) (string, error) {
		return "slow", g.wait(ctx, true)
	}, WithRegistry(h.reg), WithConfig(Config{Timeout: -1})).WithPoolKey(func(url string) string { return url })
	plain := New("Plain", func(ctx context.Context, id int) (string, error) { return "ok", nil }, WithRegistry(h.reg))
	_, err := plain.Execute(context.Background(), 1)
	require.NoError(t, err)
	h.completion()

	call := goCall(func() (string, error) { return c.Execute(context.Background(), "http://slow") })
	g.arrived(t)
	h.clock.Advance(10 * DefaultPoolIdleTimeout)
	assert.Equal(t, 2, h.reg.PoolCount(), "a busy per-call pool and a named pool stay")
	g.release()
	awaitCall(t, call)
	h.completion()
	h.waitIdle(t, "http://slow")
	h.clock.Advance(DefaultPoolIdleTimeout)
	assert.Equal(t, 1, h.reg.PoolCount(), "only the named pool is left")
	_, ok := h.reg.pools.Load("Plain")
	assert.True(t, ok)
}

// A caller that looked a per-call pool up just before the sweep retired
// it does not run in it: the retired pool takes no task, and the caller
// submits to the pool made anew under the same key, so that a key never
// has two pools running at once.
func TestRetiredPoolSendsItsCallersToItsSuccessor(t *testing.T) {
	h := newHarness(t)
	c := New("Fetch", func(ctx context.Context, url string) (string, error) { return "fetched", nil }, WithRegistry(h.reg), WithConfig(Config{Timeout: -1})).WithPoolKey(func(url string) string { return url })
	_, err := c.Execute(context.Background(), "http://a")
	require.NoError(t, err)
	h.completion()
	stale := h.pool("http://a")

	h.clock.Advance(DefaultPoolIdleTimeout)
	require.Zero(t, h.reg.PoolCount(), "the sweep retired the idle pool")
	assert.True(t, stale.retired())
	assert.False(t, stale.enter(h.clock.Now().UnixNano()), "a retired pool lends no slot to its caller")
	release := make(chan struct{})
	close(release)
	assert.Equal(t, submitRetired, stale.submit(blockingTask{release}, h.clock.Now().UnixNano()))
	running, queued := stale.size()
	assert.Zero(t, running+queued)

	successor, ok := h.reg.submit(stale, blockingTask{release}, h.clock.Now().UnixNano())
	require.True(t, ok)
	assert.NotSame(t, stale, successor)
	assert.Same(t, successor, h.pool("http://a"), "the successor is the key's pool now")
	waitFor(t, "the task to end", successor.idle)
	assert.Equal(t, 1, h.reg.PoolCount())
	_, ok = h.reg.Metrics().LookupPool("http://a")
	assert.True(t, ok, "the successor has metrics of its own")
}

// A sweep never retires a pool a caller has taken a slot of, however the
// two interleave: at most CoreSize runs of a key are ever in user code.
func TestPoolSweepRacingExecutionsKeepsTheBound(t *testing.T) {
	h := newHarness(t)
	h.reg.onCompletion = nil // thousands of completions, none awaited
	require.NoError(t, h.reg.ConfigurePool("http://a", PoolConfig{CoreSize: 1, IdleTimeout: time.Millisecond}))
	var inside, most atomic.Int64
	c := New("Fetch", func(ctx context.Context, url string) (string, error) {
		storeMax(&most, inside.Add(1))
		inside.Add(-1)
		return "fetched", nil
	}, WithRegistry(h.reg), WithConfig(Config{Timeout: -1})).WithPoolKey(func(url string) string { return url })
	stop := make(chan struct{})
	sweeping := make(chan struct{})
	go func() {
		defer close(sweeping)
		for {
			select {
			case <-stop:
				return
			default:
				h.clock.Advance(time.Millisecond)
			}
		}
	}()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 300 {
				_, _ = c.Execute(context.Background(), "http://a")
			}
		})
	}
	wg.Wait()
	close(stop)
	<-sweeping
	assert.Equal(t, int64(1), most.Load(), "never two runs at once in a pool of one")
}

// A pool reports its sizes to its metrics, for the dashboard stream.
func TestPoolStatus(t *testing.T) {
	h := newHarness(t)
	require.NoError(t, h.reg.ConfigurePool("Users", PoolConfig{CoreSize: 2, MaxQueueSize: 8, QueueSizeRejectionThreshold: 3}))
	g := newGate()
	defer g.release()
	c := New("GetUser", func(ctx context.Context, id int) (string, error) { return "ok", g.wait(ctx, true) },
		WithRegistry(h.reg), WithConfig(Config{Pool: "Users", Timeout: -1}))
	var calls []<-chan callResult[string]
	for i := range 3 {
		calls = append(calls, goCall(func() (string, error) { return c.Execute(context.Background(), i) }))
	}
	g.arrived(t)
	g.arrived(t)
	pm, ok := h.reg.Metrics().LookupPool("Users")
	require.True(t, ok)
	// The pool publishes its queue length before it reports it to its
	// metrics, under its lock: wait for both.
	waitFor(t, "the third call to be queued", func() bool {
		_, n := h.pool("Users").size()
		return n == 1 && pm.QueueSize() == 1
	})
	st, ok := pm.Status()
	require.True(t, ok)
	assert.Equal(t, ms.PoolStatus{CoreSize: 2, MaximumSize: 2, PoolSize: 2, LargestPoolSize: 2,
		MaxQueueSize: 8, QueueSizeRejectionThreshold: 3}, st)
	assert.Equal(t, int64(2), pm.ActiveCount())
	g.release()
	for _, call := range calls {
		awaitCall(t, call)
		h.completion()
	}
	h.waitIdle(t, "Users")
	st, _ = pm.Status()
	assert.Zero(t, st.PoolSize)
	assert.Equal(t, 2, st.LargestPoolSize)
	waitFor(t, "the workers to report they are done", func() bool { return pm.ActiveCount() == 0 })
}

// A pool counts a run as executed before its caller has the result, in
// every mode: a caller that reads the pool's metrics at once (as a
// dashboard test or an alert does) finds every run it made. A worker that
// counted after it handed the result over left the count one short now
// and then.
func TestPoolCountsARunBeforeItsCallerHasTheResult(t *testing.T) {
	forEachMode(t, func(t *testing.T, h *harness, m execMode) {
		require.NoError(t, h.reg.ConfigurePool("Users", PoolConfig{CoreSize: 2}))
		var ran atomic.Int64
		c := New("GetUser", func(ctx context.Context, id int) (string, error) {
			ran.Add(1)
			return userName(id), nil
		}, WithRegistry(h.reg), WithConfig(Config{Pool: "Users", Timeout: time.Second}))
		var pm *ms.PoolMetrics
		bucket := ms.DefaultRollingWindow / time.Duration(ms.DefaultBuckets)
		for i := 1; i <= 100; i++ {
			_, err := m.exec(context.Background(), c, i)
			require.NoError(t, err)
			if pm == nil {
				var ok bool
				pm, ok = h.reg.Metrics().LookupPool("Users")
				require.True(t, ok)
			}
			h.clock.Advance(bucket) // the counts read are those of closed buckets
			if got, want := pm.CumulativeCount(ms.PoolExecuted), ran.Load(); got != want {
				t.Fatalf("after call %d the pool counted %d runs executed; %d ran", i, got, want)
			}
		}
	})
}

// A pool-isolated ObservableCommand whose subscriber leaves counts its run
// in the pool's rolling executions, as one that terminates does: the
// worker, which stops waiting for the stream, frees its slot at the time
// it does.
func TestObservableCommandInAPoolCountsItsRunWhenTheSubscriberLeaves(t *testing.T) {
	h := newHarness(t)
	started := make(chan struct{}, 1)
	c := NewObservable("Stream", func(context.Context, int) observable.Observable[int] {
		started <- struct{}{}
		return observable.Never[int]()
	}, WithRegistry(h.reg), WithConfig(Config{Isolation: PoolIsolation, Pool: "Streams", Timeout: -1}))
	ctx, cancel := context.WithCancel(context.Background())
	subscribed := make(chan *collected[int], 1)
	go func() { subscribed <- subscribeAll(ctx, c.ToObservable(context.Background(), 1)) }()
	recv(t, started, "the run")
	cancel()
	got := recv(t, subscribed, "the subscription")
	recv(t, got.sub.Done(), "the end of the subscription")
	assert.Equal(t, evs("CANCELLED"), h.events())
	h.waitIdle(t, "Streams")

	pm, ok := h.reg.Metrics().LookupPool("Streams")
	require.True(t, ok)
	h.clock.Advance(ms.DefaultRollingWindow / time.Duration(ms.DefaultBuckets)) // the bucket closes
	assert.Equal(t, int64(1), pm.RollingCount(ms.PoolExecuted))
	assert.Equal(t, int64(1), pm.CumulativeCount(ms.PoolExecuted))
}

// A per-call pool is retired once idle for its own IdleTimeout, though a
// pool of a longer IdleTimeout was made before it: the sweep armed for
// the first pool's hour does not keep the second pool's minute waiting.
func TestPerCallPoolIsRetiredAtItsIdleTimeoutBesideALongerOne(t *testing.T) {
	h := newHarness(t)
	c := New("Fetch", func(ctx context.Context, url string) (string, error) { return url, nil },
		WithRegistry(h.reg), WithConfig(Config{Timeout: -1})).WithPoolKey(func(url string) string { return url })
	require.NoError(t, h.reg.ConfigurePool("http://patient", PoolConfig{IdleTimeout: time.Hour}))
	for _, url := range []string{"http://patient", "http://a"} {
		_, err := c.Execute(context.Background(), url)
		require.NoError(t, err)
		h.completion()
		h.waitIdle(t, url)
	}
	require.Equal(t, 2, h.reg.PoolCount())
	h.clock.Advance(DefaultPoolIdleTimeout)
	assert.Equal(t, 1, h.reg.PoolCount(), "http://a was idle for its IdleTimeout, a minute")
	_, ok := h.reg.pools.Load("http://patient")
	assert.True(t, ok, "http://patient waits for its hour")
}

// ConfigurePool's IdleTimeout applies to a per-call pool that exists: one
// that was kept for ever (a negative IdleTimeout) or for an hour is
// retired once idle for the new one.
func TestConfigurePoolIdleTimeoutRetiresAPerCallPoolThatExists(t *testing.T) {
	for _, before := range []time.Duration{-1, time.Hour} {
		t.Run(before.String(), func(t *testing.T) {
			h := newHarness(t)
			c := New("Fetch", func(ctx context.Context, url string) (string, error) { return url, nil },
				WithRegistry(h.reg), WithConfig(Config{Timeout: -1})).WithPoolKey(func(url string) string { return url })
			require.NoError(t, h.reg.ConfigurePool("http://a", PoolConfig{IdleTimeout: before}))
			_, err := c.Execute(context.Background(), "http://a")
			require.NoError(t, err)
			h.completion()
			h.waitIdle(t, "http://a")
			h.clock.Advance(30 * time.Second)

			require.NoError(t, h.reg.ConfigurePool("http://a", PoolConfig{IdleTimeout: time.Minute}))
			h.clock.Advance(30*time.Second - time.Nanosecond)
			assert.Equal(t, 1, h.reg.PoolCount(), "idle for a minute less a nanosecond")
			h.clock.Advance(time.Nanosecond)
			assert.Zero(t, h.reg.PoolCount(), "idle for its new IdleTimeout")
		})
	}
}

// submitWaitingForTheLock reports whether a goroutine is in pool.submit,
// waiting for the pool's lock.
func submitWaitingForTheLock() bool {
	buf := make([]byte, 1<<20)
	for _, g := range strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
		if strings.Contains(g, "command.(*pool).submit(") && strings.Contains(g, "sync.(*Mutex).Lock") {
			return true
		}
	}
	return false
}

// A task submitted while ConfigurePool grows the pool runs in the new
// slot: a submitter that read the size before the pool grew, and queued
// its task after the pool had looked for queued tasks to start, left it
// waiting beside a free slot until a running task ended.
func TestPoolGrowingWhileATaskIsSubmittedStartsIt(t *testing.T) {
	mc := clock.NewManual(time.Unix(0, 0))
	pm := ms.NewRegistry(mc).Pool("p", ms.Config{})
	p := newPool("p", PoolConfig{CoreSize: 1, MaxQueueSize: 5}, false, mc, pm)
	release := make(chan struct{})
	defer close(release)
	require.Equal(t, submitAccepted, p.submit(blockingTask{release}, unread))

	p.mu.Lock() // the submitter reads the size, then waits here
	submitted := make(chan submitted, 1)
	go func() { submitted <- p.submit(blockingTask{release}, unread) }()
	waitFor(t, "the submitter to wait for the pool's lock", submitWaitingForTheLock)
	p.configure(PoolConfig{CoreSize: 2, MaxQueueSize: 5})
	p.mu.Unlock()

	require.Equal(t, submitAccepted, recv(t, submitted, "the submit"))
	running, queued := p.size()
	assert.Equal(t, 2, running, "the pool grew to two slots")
	assert.Zero(t, queued, "no task waits beside a free slot")
}

// A per-call pool's idle time counts from the end of its last work, not
// from the start of it: a pool whose one run took longer than its
// IdleTimeout has had work until that run returned, and is kept for its
// IdleTimeout after that, as PoolConfig.IdleTimeout says ("when it has had
// no work for this long"); it was retired, and its metrics forgotten, at
// the first sweep after the run returned.
func TestPerCallPoolIsKeptItsIdleTimeoutAfterALongRunReturns(t *testing.T) {
	h := newHarness(t)
	g := newGate()
	defer g.release()
	c := New("Fetch", func(ctx context.Context, url string) (string, error) {
		return "slow", g.wait(ctx, true)
	}, WithRegistry(h.reg), WithConfig(Config{Timeout: -1})).WithPoolKey(func(url string) string { return url })
	call := goCall(func() (string, error) { return c.Execute(context.Background(), "http://slow") })
	g.arrived(t)
	h.clock.Advance(DefaultPoolIdleTimeout)
	require.Equal(t, 1, h.reg.PoolCount(), "busy: kept")
	h.clock.Advance(DefaultPoolIdleTimeout - time.Second)
	g.release()
	require.NoError(t, awaitCall(t, call).err)
	h.completion()
	h.waitIdle(t, "http://slow")

	h.clock.Advance(time.Second)
	assert.Equal(t, 1, h.reg.PoolCount(), "its run returned a second ago")
	h.clock.Advance(DefaultPoolIdleTimeout - time.Second - time.Millisecond)
	assert.Equal(t, 1, h.reg.PoolCount(), "not yet idle for its IdleTimeout")
	h.clock.Advance(time.Millisecond)
	assert.Zero(t, h.reg.PoolCount(), "idle for its IdleTimeout since its run returned")
}

// A run that timed out while it waited in the pool's queue, found so by
// the worker that took it before the timeout's timer fired, gets the
// fallback without the pool slot: the slot the worker took for the run
// goes back before the fallback runs, as it does when the timer fires
// first or when run returns (runOnWorker frees it before the execution is
// concluded). A fallback must not count against the pool's CoreSize.
func TestQueuedRunTimedOutFindsFallbackWithoutPoolSlot(t *testing.T) {
	h := newHarness(t)
	require.NoError(t, h.reg.ConfigurePool("P", PoolConfig{CoreSize: 1, MaxQueueSize: 5}))
	blocker := newGate()
	defer blocker.release()
	b := New("Blocker", func(ctx context.Context, _ int) (string, error) {
		return "blocked", blocker.wait(ctx, false)
	}, WithRegistry(h.reg), WithConfig(Config{Pool: "P", Timeout: -1}))
	first := goCall(func() (string, error) { return b.Execute(context.Background(), 1) })
	blocker.arrived(t)

	fbEntered := make(chan struct{}, 1)
	fbGate := make(chan struct{})
	c := New("Slow", succeedRun, WithRegistry(h.reg), WithConfig(Config{Pool: "P", Timeout: 100 * time.Millisecond})).
		WithFallback(func(ctx context.Context, id int, err error) (string, error) {
			fbEntered <- struct{}{}
			<-fbGate
			return "fb", nil
		})

	// Due with the run's timeout, and armed before it: it fires first, and
	// frees the slot, so that the worker takes the run from the queue
	// before the timeout's timer fires.
	activeDuringFallback := int64(-1)
	h.clock.AfterFunc(100*time.Millisecond, func() {
		blocker.release()
		recv(t, fbEntered, "the fallback to start")
		activeDuringFallback = h.pool("P").active()
		close(fbGate)
	})
	// A subscription, which no waiter takes over (see Command.Queue).
	second := subscribeAll(context.Background(), observable.Map(c.ToObservable(context.Background(), 2), func(v string) string { return v }))
	h.waitQueued(t, "P", 1)
	h.clock.Advance(100 * time.Millisecond)

	values, err := second.wait(t)
	require.NoError(t, err)
	assert.Equal(t, []string{"fb"}, values)
	awaitCall(t, first)
	assert.Zero(t, activeDuringFallback, "pool slots taken while the fallback of a run that never started ran")
	for range 2 {
		h.completion()
	}
	h.waitIdle(t, "P")
}

// ConfigurePool with IdleTimeout 0, which means DefaultPoolIdleTimeout,
// retires a per-call pool that was kept for ever (a negative IdleTimeout)
// once it has been idle for a minute, as an explicit time.Minute does.
func TestConfigurePoolDefaultIdleTimeoutRetiresAPerCallPool(t *testing.T) {
	h := newHarness(t)
	c := New("Fetch", func(ctx context.Context, url string) (string, error) { return url, nil },
		WithRegistry(h.reg), WithConfig(Config{Timeout: -1})).WithPoolKey(func(url string) string { return url })
	require.NoError(t, h.reg.ConfigurePool("http://a", PoolConfig{IdleTimeout: -1}))
	_, err := c.Execute(context.Background(), "http://a")
	require.NoError(t, err)
	h.completion()
	h.waitIdle(t, "http://a")

	require.NoError(t, h.reg.ConfigurePool("http://a", PoolConfig{}))
	cfg := h.pool("http://a").config.Load()
	require.Equal(t, DefaultPoolIdleTimeout, cfg.IdleTimeout)
	h.clock.Advance(DefaultPoolIdleTimeout)
	assert.Zero(t, h.reg.PoolCount(), "idle for the default IdleTimeout, a minute")
}

// A pool that a command's Config.Pool names is never retired, though a
// WithPoolKey function of another command made it first under the same
// name: the name is both a per-call pool key and a named pool.
func TestNamedPoolFirstMadeForAPerCallKeyIsNotRetired(t *testing.T) {
	h := newHarness(t)
	perCall := New("Fetch", func(ctx context.Context, url string) (string, error) { return url, nil },
		WithRegistry(h.reg), WithConfig(Config{Timeout: -1})).WithPoolKey(func(url string) string { return url })
	named := New("GetUser", succeedRun, WithRegistry(h.reg), WithConfig(Config{Pool: "users", Timeout: -1}))

	_, err := perCall.Execute(context.Background(), "users")
	require.NoError(t, err)
	h.completion()
	h.waitIdle(t, "users")
	_, err = named.Execute(context.Background(), 1)
	require.NoError(t, err)
	h.completion()
	h.waitIdle(t, "users")
	p := h.pool("users")

	h.clock.Advance(10 * DefaultPoolIdleTimeout)
	assert.False(t, p.retired(), "Config.Pool names it: it is never retired")
	assert.Equal(t, 1, h.reg.PoolCount())
	_, ok := h.reg.Metrics().LookupPool("users")
	assert.True(t, ok, "its metrics are kept")
}

// A subscription's run that returns frees its slot before the execution
// is concluded on the worker (runOnWorker), and so does an
// ObservableCommand's Observable at its terminal event (slotHold): the run
// waiting in the queue starts then, not once the fallback of the run
// before it (or the subscriber it tells) has returned. No run waits in
// the queue beside a free slot.
func TestPoolStartsTheQueuedRunWhileTheFallbackOfTheRunBeforeRuns(t *testing.T) {
	for name, subscribe := range map[string]func(h *harness, run, fb *gate, fbEntered chan struct{}) *collected[string]{
		"Command": func(h *harness, run, fb *gate, fbEntered chan struct{}) *collected[string] {
			a := New("A", func(ctx context.Context, _ int) (string, error) {
				_ = run.wait(ctx, false)
				return "", errBoom
			}, WithRegistry(h.reg), WithConfig(Config{Pool: "P", Timeout: -1})).
				WithFallback(func(context.Context, int, error) (string, error) {
					fbEntered <- struct{}{}
					return "fb", fb.wait(context.Background(), false)
				})
			return subscribeAll(context.Background(), a.ToObservable(context.Background(), 1))
		},
		"ObservableCommand": func(h *harness, run, fb *gate, fbEntered chan struct{}) *collected[string] {
			a := NewObservable("A", func(context.Context, int) observable.Observable[string] {
				return observable.Create(func(ctx context.Context, o observable.Observer[string]) {
					_ = run.wait(ctx, false)
					o.OnError(errBoom)
				})
			}, WithRegistry(h.reg), WithConfig(Config{Isolation: PoolIsolation, Pool: "P", Timeout: -1})).
				WithFallback(func(context.Context, int, error) (string, error) {
					fbEntered <- struct{}{}
					return "fb", fb.wait(context.Background(), false)
				})
			return subscribeAll(context.Background(), a.ToObservable(context.Background(), 1))
		},
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t)
			require.NoError(t, h.reg.ConfigurePool("P", PoolConfig{CoreSize: 1, MaxQueueSize: 5}))
			run, fb, bRun := newGate(), newGate(), newGate()
			defer run.release()
			defer fb.release()
			defer bRun.release()
			fbEntered := make(chan struct{}, 1)
			b := New("B", bRun.runLate, WithRegistry(h.reg), WithConfig(Config{Pool: "P", Timeout: -1}))

			first := subscribe(h, run, fb, fbEntered)
			run.arrived(t)
			second := goCall(func() (string, error) { return b.Execute(context.Background(), 2) })
			h.waitQueued(t, "P", 1)

			run.release()
			recv(t, fbEntered, "A's fallback to start")
			running, queued := h.pool("P").size()
			require.Zero(t, queued, "B still waits in the queue while A's fallback runs on the worker")
			assert.Equal(t, 1, running, "B's run holds the slot A's run gave back")
			fb.release()
			bRun.release()

			assert.Equal(t, "late", awaitCall(t, second).v)
			values, err := first.wait(t)
			require.NoError(t, err)
			assert.Equal(t, []string{"fb"}, values)
			h.completion()
			h.completion()
			h.waitIdle(t, "P")
		})
	}
}

// A run that timed out in the queue, found so by the worker that took it
// (starting), gives its slot back before its fallback runs on that
// worker: the run queued behind it starts then, not once the fallback
// has returned.
func TestPoolStartsTheQueuedRunWhileTheFallbackOfARunTimedOutInTheQueueRuns(t *testing.T) {
	h := newHarness(t)
	require.NoError(t, h.reg.ConfigurePool("P", PoolConfig{CoreSize: 1, MaxQueueSize: 5}))
	blocker := newGate()
	defer blocker.release()
	x := New("Blocker", func(ctx context.Context, _ int) (string, error) {
		return "blocked", blocker.wait(ctx, false)
	}, WithRegistry(h.reg), WithConfig(Config{Pool: "P", Timeout: -1}))
	first := goCall(func() (string, error) { return x.Execute(context.Background(), 1) })
	blocker.arrived(t)

	fbEntered := make(chan struct{}, 1)
	fb := newGate()
	defer fb.release()
	a := New("Slow", succeedRun, WithRegistry(h.reg), WithConfig(Config{Pool: "P", Timeout: 100 * time.Millisecond})).
		WithFallback(func(context.Context, int, error) (string, error) {
			fbEntered <- struct{}{}
			return "fb", fb.wait(context.Background(), false)
		})
	bRun := newGate()
	defer bRun.release()
	b := New("B", bRun.runLate, WithRegistry(h.reg), WithConfig(Config{Pool: "P", Timeout: -1}))

	// Due with A's timeout and armed before it: it fires first, so that
	// the worker finds A timed out in the queue (as in
	// TestQueuedRunTimedOutFindsFallbackWithoutPoolSlot).
	running, queued := -1, -1
	h.clock.AfterFunc(100*time.Millisecond, func() {
		blocker.release()
		recv(t, fbEntered, "A's fallback to start")
		running, queued = h.pool("P").size()
		fb.release()
	})
	second := subscribeAll(context.Background(), a.ToObservable(context.Background(), 2))
	h.waitQueued(t, "P", 1)
	third := goCall(func() (string, error) { return b.Execute(context.Background(), 3) })
	h.waitQueued(t, "P", 2)
	h.clock.Advance(100 * time.Millisecond)

	assert.Zero(t, queued, "B waited in the queue while A's fallback ran on the worker")
	assert.Equal(t, 1, running, "B's run holds the slot A gave back")
	bRun.release()
	assert.Equal(t, "late", awaitCall(t, third).v)
	values, err := second.wait(t)
	require.NoError(t, err)
	assert.Equal(t, []string{"fb"}, values)
	awaitCall(t, first)
	for range 3 {
		h.completion()
	}
	h.waitIdle(t, "P")
}
