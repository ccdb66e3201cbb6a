package fleet

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/clock"
)

// threeOnMem returns a cluster of three instances on their own manual
// clocks, all reading epoch, meeting in a memStore on the first's clock.
func threeOnMem(t *testing.T) (*cluster, *memStore, [3]*instance) {
	c := newCluster(t)
	clkA := clock.NewManual(epoch)
	mem := newMemStore(clkA)
	a := c.add("a", clkA, mem)
	b := c.add("b", clock.NewManual(epoch), mem)
	low := c.add("low", clock.NewManual(epoch), mem)
	return c, mem, [3]*instance{a, b, low}
}

func TestFleetTripsEveryInstanceOnTheFleetsHealth(t *testing.T) {
	c, _, in := threeOnMem(t)
	a, b, low := in[0], in[1], in[2]
	a.down.Store(true)
	b.down.Store(true)
	a.run(15) // under the volume threshold of 20 on each instance
	b.run(15)
	low.run(1)
	c.tick()
	c.tick() // every instance has read every other's bucket
	for _, in := range in {
		assert.True(t, in.open(), "%s opens on the fleet's 30 errors of 31", in.name)
		assert.False(t, in.source().Stats().Fallback, in.name)
		assert.Equal(t, 2, in.source().Stats().Instances, in.name)
	}
	assert.Equal(t, int64(1), low.reg.Metrics().Command(key, tripConfig.Metrics).HealthCounts().Total,
		"the low-traffic instance's own health would not have opened it")
	_, err := low.cmd.Execute(context.Background(), 1)
	assert.Error(t, err, "the low-traffic instance short-circuits")
}

func TestFleetRecoversAndAResetIgnoresOlderFleetBuckets(t *testing.T) {
	c, _, in := threeOnMem(t)
	a, b, low := in[0], in[1], in[2]
	a.down.Store(true)
	b.down.Store(true)
	a.run(15)
	b.run(15)
	c.ticks(2)
	require.True(t, a.open() && b.open() && low.open())

	a.down.Store(false)
	b.down.Store(false)
	c.ticks(11) // past the 5s sleep window; the failures are still in the 10s window
	for _, in := range in {
		require.Zero(t, in.run(1), "%s's trial succeeds", in.name)
		assert.False(t, in.open(), "%s closes on its trial", in.name)
	}
	c.ticks(2)
	for _, in := range in {
		assert.False(t, in.open(),
			"%s stays closed: the fleet's failures are older than its reset", in.name)
	}

	// Health counts again from the reset on: new failures trip them again.
	a.down.Store(true)
	b.down.Store(true)
	a.run(15)
	b.run(15)
	c.ticks(2)
	for _, in := range in {
		assert.True(t, in.open(), "%s opens again on failures after its reset", in.name)
	}
}

func TestFleetLocalFaultTripsOnlyThatInstance(t *testing.T) {
	c, _, in := threeOnMem(t)
	a, b, low := in[0], in[1], in[2]
	a.down.Store(true) // a's own network, say
	a.run(25)
	b.run(200)
	low.run(200)
	c.ticks(2)
	assert.True(t, a.open(), "a's own 25 errors of 25 trip it, though the fleet's 25 of 425 do not")
	assert.False(t, b.open())
	assert.False(t, low.open())
}

func TestFleetFallsBackToLocalHealthAndRejoins(t *testing.T) {
	c, mem, in := threeOnMem(t)
	a, b := in[0], in[1]
	mem.setFail(errors.New("connection refused"))
	a.down.Store(true)
	b.down.Store(true)
	a.run(15)
	b.run(15)
	c.ticks(2)
	for _, in := range in {
		st := in.source().Stats()
		assert.True(t, st.Fallback, in.name)
		assert.Equal(t, uint64(2), st.Failures, in.name)
		assert.EqualError(t, st.LastError, "connection refused")
		assert.False(t, in.open(), "%s judges its own health alone, under the threshold", in.name)
	}

	mem.setFail(nil)
	c.ticks(2) // the first exchange writes every bucket of the window, the second reads them all
	for _, in := range in {
		st := in.source().Stats()
		assert.False(t, st.Fallback, in.name)
		assert.Equal(t, uint64(2), st.Exchanges, in.name)
		assert.True(t, in.open(), "%s rejoins the fleet and opens on its health", in.name)
	}
}

func TestFleetExecutionsNeverWaitForTheStore(t *testing.T) {
	c, mem, in := threeOnMem(t)
	a := in[0]
	release := make(chan struct{})
	mem.setBlock(release)
	for _, in := range in {
		in.clk.Advance(interval) // every source is now stuck in an exchange
	}
	assert.Zero(t, a.run(100), "executions run while the store hangs")
	close(release)
	for range 3 {
		<-c.exchanged
	}
}

func TestFleetExchangeTimesOut(t *testing.T) {
	clk := clock.NewManual(epoch)
	mem := newMemStore(clk)
	mem.setBlock(make(chan struct{})) // never released
	c := newCluster(t)
	a := c.addWith("a", clk, mem, func(cfg *Config) { cfg.Timeout = 1 }) // every exchange times out
	a.run(1)
	c.tick()
	st := a.source().Stats()
	assert.True(t, st.Fallback)
	assert.Equal(t, uint64(1), st.Failures)
	assert.ErrorIs(t, st.LastError, context.DeadlineExceeded)
}

// An exchange never outlasts the health snapshot interval, whatever
// Timeout says: the breaker's next snapshot waits for it, so a Redis that
// hangs would otherwise leave the breaker on one snapshot per Timeout.
func TestFleetExchangeEndsWithinTheInterval(t *testing.T) {
	clk := clock.NewManual(epoch)
	s := &deadlineStore{store: newMemStore(clk)}
	c := newCluster(t)
	a := c.addWith("a", clk, s, func(cfg *Config) { cfg.Timeout = time.Hour })
	a.run(1)
	c.tick()
	require.NotZero(t, s.left.Load(), "the exchange had a deadline")
	assert.LessOrEqual(t, time.Duration(s.left.Load()), interval)
}

// deadlineStore records how long each exchange had left at its start.
type deadlineStore struct {
	store
	left atomic.Int64
}

func (d *deadlineStore) exchange(ctx context.Context, x exchange) (reading, error) {
	if at, ok := ctx.Deadline(); ok {
		d.left.Store(int64(time.Until(at)))
	}
	return d.store.exchange(ctx, x)
}

func TestFleetToleratesClocksOneBucketApart(t *testing.T) {
	for _, skew := range []int{-1, 1} {
		t.Run(map[int]string{-1: "behind", 1: "ahead"}[skew], func(t *testing.T) {
			c := newCluster(t)
			clkA := clock.NewManual(epoch)
			mem := newMemStore(clkA)
			a := c.add("a", clkA, mem)
			b := c.add("b", clock.NewManual(epoch.Add(interval*timeDuration(skew))), mem)
			a.down.Store(true)
			b.down.Store(true)
			a.run(15)
			b.run(15)
			c.ticks(3)
			assert.True(t, a.open(), "a counts b's buckets")
			assert.True(t, b.open(), "b counts a's buckets")
		})
	}
}

func TestFleetStoppedInstancesLeaveNoHealthBehind(t *testing.T) {
	c, mem, in := threeOnMem(t)
	a, b, low := in[0], in[1], in[2]
	low.down.Store(true)
	low.run(15)
	a.down.Store(true)
	a.run(5)
	c.ticks(2)
	require.True(t, a.open(), "a opens on the 20 errors")
	require.Equal(t, 2, b.source().Stats().Instances, "b reads a's and low's buckets")
	low.stop()
	assert.True(t, mem.writers()["low"], "the stopped instance's buckets are in the window still")

	a.down.Store(false)
	c.ticks(11) // past the sleep window
	require.Zero(t, a.run(1))
	require.False(t, a.open())
	c.ticks(19) // the window passes: low's buckets leave it and expire
	a.run(1)
	c.ticks(2)
	assert.False(t, mem.writers()["low"], "the stopped instance's buckets expired")
	assert.True(t, mem.writers()["a"])
	assert.Equal(t, 1, b.source().Stats().Instances, "only a is left in b's window")
	assert.Equal(t, 0, a.source().Stats().Instances, "b wrote no bucket")
}

// After an outage, Redis back empty: the instances write their windows
// again one after the other in the interval, and the first exchange that
// succeeds judges on local health, so that no instance reads a fleet of
// the bad instance alone and trips on it.
func TestRejoiningAfterAnOutageJudgesAloneFirst(t *testing.T) {
	c := newCluster(t)
	badClock := clock.NewManual(epoch)
	mem := newMemStore(badClock)
	bad := c.add("bad", badClock, mem) // exchanges first in each interval
	a := c.add("a", clock.NewManual(epoch), mem)
	big := c.add("big", clock.NewManual(epoch), mem)
	traffic := badOpensAlone(t, c, bad, a, big)

	mem.setFail(errors.New("connection refused"))
	c.tickInOrder(traffic)
	c.tickInOrder(traffic)
	require.True(t, a.source().Stats().Fallback)
	mem.mu.Lock() // Redis restarted empty
	mem.buckets, mem.expires = map[string]map[string]counts{}, map[string]time.Time{}
	mem.mu.Unlock()
	mem.setFail(nil)

	c.tickInOrder(traffic) // a reads only bad's window, rewritten: it judges alone
	assert.True(t, a.source().Stats().Fallback)
	assert.False(t, a.open())
	c.tickInOrder(traffic) // every window is written again: the fleet's sum
	assert.False(t, a.source().Stats().Fallback)
	assert.Equal(t, 2, a.source().Stats().Instances)
	assert.False(t, a.open(), "one bad instance does not trip the others")
	assert.False(t, big.open())
}
