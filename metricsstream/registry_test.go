package metricsstream

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRegistryGetOrCreateFirstConfigWins(t *testing.T) {
	r := NewRegistry(newManual())
	a := r.Command("a", Config{Buckets: 5})
	assert.Same(t, a, r.Command("a", Config{Buckets: 20}))
	assert.Equal(t, 5, a.Config().Buckets)
	assert.Equal(t, "a", a.Key())
	b := r.Command("b", Config{})
	assert.NotSame(t, a, b)

	got, ok := r.LookupCommand("a")
	assert.True(t, ok)
	assert.Same(t, a, got)
	_, ok = r.LookupCommand("nope")
	assert.False(t, ok)

	p := r.Pool("a", Config{})
	assert.Same(t, p, r.Pool("a", Config{Buckets: 3}))
	gotPool, ok := r.LookupPool("a")
	assert.True(t, ok)
	assert.Same(t, p, gotPool)
	_, ok = r.LookupPool("b")
	assert.False(t, ok)
}

func TestRegistryCreatesOncePerKeyUnderContention(t *testing.T) {
	r := NewRegistry(newManual())
	const goroutines = 16
	got := make([]*CommandMetrics, goroutines)
	var wg sync.WaitGroup
	for i := range goroutines {
		wg.Go(func() { got[i] = r.Command("shared", Config{Buckets: i + 1}) })
	}
	wg.Wait()
	for _, m := range got {
		assert.Same(t, got[0], m)
	}
}

func TestRegistryIteratesOverAllKeys(t *testing.T) {
	r := NewRegistry(newManual())
	for i := range 5 {
		r.Command(fmt.Sprint("c", i), Config{})
		r.Pool(fmt.Sprint("p", i), Config{})
	}
	var commands, pools []string
	for m := range r.Commands() {
		commands = append(commands, m.Key())
	}
	for p := range r.Pools() {
		pools = append(pools, p.Key())
	}
	slices.Sort(commands)
	slices.Sort(pools)
	assert.Equal(t, []string{"c0", "c1", "c2", "c3", "c4"}, commands)
	assert.Equal(t, []string{"p0", "p1", "p2", "p3", "p4"}, pools)

	n := 0
	for range r.Commands() {
		n++
		break
	}
	assert.Equal(t, 1, n)
}

func TestDefaultRegistryUsesTheRealClock(t *testing.T) {
	m := DefaultRegistry.Command("metricsstream-test-default", Config{})
	before := time.Now()
	assert.WithinDuration(t, before, m.Snapshot().Time, time.Minute)
}

func keys(r *Registry) []string {
	var ks []string
	for m := range r.Commands() {
		ks = append(ks, m.Key())
	}
	for p := range r.Pools() {
		ks = append(ks, "pool:"+p.Key())
	}
	slices.Sort(ks)
	return ks
}

func TestIdleEviction(t *testing.T) {
	mc := newManual()
	r := NewRegistry(mc, WithIdleEviction(time.Minute))
	idle := r.Command("idle", Config{})
	busy := r.Command("busy", Config{})
	running := r.Command("running", Config{})
	watched := r.Command("watched", Config{})
	pool := r.Pool("pool", Config{})
	queued := r.Pool("queued", Config{})

	running.MarkStart()
	sub := watched.HealthStream().SubscribeFunc(context.Background(), nil, nil, nil)
	defer sub.Unsubscribe()
	queued.SetQueueSize(1)
	for range 5 {
		mc.Advance(10 * time.Second)
		record(busy, Success)
	}
	mc.Advance(9 * time.Second)
	assert.Zero(t, r.EvictIdle(), "nothing idle for a minute yet")
	mc.Advance(time.Second)
	assert.Equal(t, 2, r.EvictIdle())
	assert.Equal(t, []string{"busy", "pool:queued", "running", "watched"}, keys(r))

	// Evicted metrics come back when used again.
	record(idle, Success)
	pool.MarkRejected()
	assert.Equal(t, []string{"busy", "idle", "pool:pool", "pool:queued", "running", "watched"}, keys(r))
	got, _ := r.LookupCommand("idle")
	assert.Same(t, idle, got)
}

func TestIdleEvictionIsOffByDefault(t *testing.T) {
	mc := newManual()
	r := NewRegistry(mc)
	r.Command("a", Config{})
	mc.Advance(24 * time.Hour)
	assert.Zero(t, r.EvictIdle())
	r.Command("b", Config{})
	assert.Equal(t, []string{"a", "b"}, keys(r))
	assert.Zero(t, NewRegistry(mc, WithIdleEviction(-time.Second)).EvictIdle())
}

func TestIdleEvictionSweepsLazilyWhenKeysAreCreated(t *testing.T) {
	mc := newManual()
	r := NewRegistry(mc, WithIdleEviction(time.Minute))
	r.Command("old", Config{})
	mc.Advance(29 * time.Second)
	r.Command("new1", Config{}) // the last sweep is not half an idle time old
	mc.Advance(31 * time.Second)
	r.Command("new1", Config{}) // existing key: no sweep
	assert.Equal(t, []string{"new1", "old"}, keys(r))
	r.Pool("new2", Config{}) // sweeps: "old" has been idle for a minute
	assert.Equal(t, []string{"new1", "pool:new2"}, keys(r))
}

func TestEvictedMetricsReplacedMeanwhileStayOut(t *testing.T) {
	mc := newManual()
	r := NewRegistry(mc, WithIdleEviction(time.Minute))
	old := r.Command("k", Config{})
	mc.Advance(time.Minute)
	require.Equal(t, 1, r.EvictIdle())
	fresh := r.Command("k", Config{})
	require.NotSame(t, old, fresh)
	record(old, Success)
	got, _ := r.LookupCommand("k")
	assert.Same(t, fresh, got)
}

// A pool's owner retires it with ForgetPool: its metrics leave the
// registry at once, eviction on or off, and come back if used again.
func TestForgetPool(t *testing.T) {
	mc := newManual()
	r := NewRegistry(mc)
	kept := r.Pool("kept", Config{})
	retired := r.Pool("retired", Config{})
	assert.True(t, r.ForgetPool("retired"))
	assert.False(t, r.ForgetPool("retired"), "already forgotten")
	assert.False(t, r.ForgetPool("unknown"))
	assert.Equal(t, []string{"pool:kept"}, keys(r))

	retired.MarkStart()
	got, ok := r.LookupPool("retired")
	require.True(t, ok, "used again, the metrics come back")
	assert.Same(t, retired, got)
	got, _ = r.LookupPool("kept")
	assert.Same(t, kept, got)
}

// Of a pool's Config only RollingWindow and Buckets apply (Registry.Pool),
// and of a collapser's neither HealthSnapshotInterval: a rolling window
// shorter than the default health interval, which neither has, used to
// make them panic.
func TestPoolAndCollapserWindowsShorterThanTheHealthInterval(t *testing.T) {
	mc := newManual()
	r := NewRegistry(mc)
	cfg := Config{RollingWindow: 200 * time.Millisecond, Buckets: 2}
	var p *PoolMetrics
	require.NotPanics(t, func() { p = r.Pool("pool", cfg) })
	var cm *CollapserMetrics
	require.NotPanics(t, func() { cm = r.Collapser("collapser", cfg) })

	p.MarkStart()
	p.MarkDone()
	cm.MarkBatch(3)
	mc.Advance(100 * time.Millisecond)
	assert.Equal(t, int64(1), p.RollingCount(PoolExecuted))
	assert.Equal(t, int64(3), cm.RollingCount(CollapserAddedToBatch))
	mc.Advance(200 * time.Millisecond)
	assert.Zero(t, p.RollingCount(PoolExecuted), "out of the 200ms window")
	assert.Equal(t, int64(1), p.CumulativeCount(PoolExecuted))

	// What does apply is still checked.
	assert.Panics(t, func() { r.Pool("bad", Config{RollingWindow: -time.Second}) })
	assert.Panics(t, func() { r.Collapser("bad", Config{PercentileBuckets: -1}) })
}

// TestForgottenPoolInUseComesBack forgets a pool again and again while
// another goroutine records into it. A recorder that reattaches the pool
// between ForgetPool's marking it evicted and its deleting it used to
// clear the mark before the delete: the pool then left the registry (and
// the dashboard stream) for good, although in use, since no later use
// saw the mark. After each ForgetPool, once the recorder has used the
// pool again, the pool must be back.
func TestForgottenPoolInUseComesBack(t *testing.T) {
	r := NewRegistry(newManual())
	p := r.Pool("p", Config{})
	var stop atomic.Bool
	var uses atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		for !stop.Load() {
			p.MarkRejected()
			uses.Add(1)
		}
	}()
	defer func() {
		stop.Store(true)
		<-done
	}()
	// waitUses waits until the recorder has begun and ended a use of the
	// pool after this call.
	waitUses := func() {
		for n := uses.Load(); uses.Load() < n+2; {
			runtime.Gosched()
		}
	}
	waitUses()
	for i := range 5000 {
		r.ForgetPool("p")
		waitUses()
		if got, ok := r.LookupPool("p"); !ok || got != p {
			t.Fatalf("attempt %d: the pool is in use but out of the registry for good", i)
		}
	}
}
