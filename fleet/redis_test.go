package fleet

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/clock"
	"github.com/rxhystrix/rxhystrix/command"
	"github.com/rxhystrix/rxhystrix/internal/redisserver"
)

// startRedis starts a redis-server for t, stopped when t ends. Without
// redis-server the test fails: CI installs it.
func startRedis(t *testing.T) *redisserver.Server {
	t.Helper()
	srv, err := redisserver.Start(t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Stop() })
	return srv
}

// newClient returns a client of srv as an instance would make it, closed
// when t ends.
func newClient(t *testing.T, srv *redisserver.Server) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, ContextTimeoutEnabled: true, MaxRetries: -1})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// threeOnRedis returns a cluster of three instances, each with a client
// of its own, meeting in srv.
func threeOnRedis(t *testing.T, srv *redisserver.Server) (*cluster, [3]*instance) {
	c := newCluster(t)
	var in [3]*instance
	for i, name := range []string{"a", "b", "low"} {
		in[i] = c.addWith(name, clock.NewManual(epoch), redisStore{client: newClient(t, srv), prefix: DefaultPrefix},
			func(cfg *Config) { cfg.Timeout = settle })
	}
	return c, in
}

func TestRedisFleetTripsAndRecoversAcrossThreeInstances(t *testing.T) {
	srv := startRedis(t)
	c, in := threeOnRedis(t, srv)
	a, b, low := in[0], in[1], in[2]
	a.down.Store(true)
	b.down.Store(true)
	a.run(15)
	b.run(15)
	low.run(1)
	c.ticks(2)
	for _, in := range in {
		assert.True(t, in.open(), "%s opens on the fleet's health", in.name)
		assert.Equal(t, 2, in.source().Stats().Instances, in.name)
	}
	assert.Equal(t, int64(1), low.reg.Metrics().Command(key, tripConfig.Metrics).HealthCounts().Total,
		"the low-traffic instance opened with the fleet on its one request")
	_, err := low.cmd.Execute(context.Background(), 1)
	assert.ErrorIs(t, err, command.ErrShortCircuited)

	a.down.Store(false)
	b.down.Store(false)
	c.ticks(11)
	for _, in := range in {
		require.Zero(t, in.run(1), "%s's trial succeeds", in.name)
	}
	c.ticks(2)
	for _, in := range in {
		assert.False(t, in.open(), "%s recovers with the fleet", in.name)
		assert.Zero(t, in.source().Stats().Failures, in.name)
	}
}

func TestRedisKilledMidRun(t *testing.T) {
	srv := startRedis(t)
	c, in := threeOnRedis(t, srv)
	a, b, low := in[0], in[1], in[2]
	low.run(5)
	c.ticks(1)
	require.False(t, a.source().Stats().Fallback)

	require.NoError(t, srv.Stop())
	assert.Zero(t, low.run(5), "executions do not notice that Redis is gone")
	a.down.Store(true)
	b.down.Store(true)
	a.run(15)
	b.run(15)
	c.ticks(2)
	for _, in := range in {
		st := in.source().Stats()
		assert.True(t, st.Fallback, "%s falls back to its own health", in.name)
		assert.GreaterOrEqual(t, st.Failures, uint64(2), in.name)
		assert.Error(t, st.LastError, in.name)
		assert.False(t, in.open(), "%s's own 15 errors are under the threshold", in.name)
	}

	require.NoError(t, srv.Restart())
	for i := 0; i < 5 && (a.source().Stats().Fallback || b.source().Stats().Fallback || low.source().Stats().Fallback); i++ {
		c.tick() // the first exchange on a dead connection may fail
	}
	c.ticks(1) // every instance has now read the buckets the others wrote again
	for _, in := range in {
		assert.False(t, in.source().Stats().Fallback, "%s rejoins", in.name)
		assert.True(t, in.open(), "%s opens on the fleet's health once Redis is back", in.name)
	}
}

func TestRedisStaleInstancesExpire(t *testing.T) {
	srv := startRedis(t)
	c, in := threeOnRedis(t, srv)
	a, low := in[0], in[2]
	low.down.Store(true)
	low.run(15)
	c.ticks(2)
	require.Equal(t, 1, a.source().Stats().Instances)
	low.stop()

	rdb := newClient(t, srv)
	ctx := context.Background()
	all, err := rdb.Keys(ctx, DefaultPrefix+"*").Result()
	require.NoError(t, err)
	var keys, marks []string
	for _, k := range all {
		if strings.Contains(k, ":mark:") {
			marks = append(marks, k)
		} else {
			keys = append(keys, k)
		}
	}
	markKey := func(who string) string { return fmt.Sprintf("%s{%s}:%v:mark:%s", DefaultPrefix, key, interval, who) }
	assert.ElementsMatch(t, []string{markKey("a"), markKey("b"), markKey("low")}, marks, "every instance's mark")
	markTTL, err := rdb.PTTL(ctx, markKey("low")).Result()
	require.NoError(t, err)
	assert.LessOrEqual(t, markTTL, 22*interval, "a mark expires a few intervals after the instance's latest exchange")
	require.Len(t, keys, 1, "low's one bucket")
	wantKey := fmt.Sprintf("%s{%s}:%v:%d", DefaultPrefix, key, interval, bucketIndex(epoch, interval))
	assert.Equal(t, wantKey, keys[0])
	fields, err := rdb.HGetAll(ctx, keys[0]).Result()
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"low": "15 15 0"}, fields)
	ttl, err := rdb.PTTL(ctx, keys[0]).Result()
	require.NoError(t, err)
	window := 20 * interval
	assert.Greater(t, ttl, window, "a bucket lives as long as some instance's window holds it")
	assert.LessOrEqual(t, ttl, window+2*interval, "and no longer")

	c.ticks(21)
	assert.Zero(t, a.source().Stats().Instances, "low's buckets have left the window")
	assert.False(t, a.source().Stats().Fallback)
}

func TestNewChecksItsConfig(t *testing.T) {
	srv := startRedis(t)
	cases := []struct {
		cfg   Config
		field string
	}{
		{Config{Instance: "a"}, "Config.Client is nil"},
		{Config{Client: redis.NewClient(&redis.Options{Addr: srv.Addr}), Instance: "a"}, "Config.Client does not respect context deadlines"},
		{Config{Client: newClient(t, srv)}, "Config.Instance is empty"},
		{Config{Client: newClient(t, srv), Instance: "a", Timeout: -time.Second}, "Config.Timeout (-1s) is negative"},
		{Config{Client: newClient(t, srv), Instance: "a", Keys: []string{"x", ""}}, "Config.Keys[1] is empty"},
	}
	for _, tc := range cases {
		f, err := New(tc.cfg)
		assert.Nil(t, f)
		assert.ErrorIs(t, err, ErrInvalidConfig)
		if assert.Error(t, err) {
			assert.True(t, strings.Contains(err.Error(), tc.field), "%q names %q", err, tc.field)
		}
		if c, ok := tc.cfg.Client.(*redis.Client); ok && !c.Options().ContextTimeoutEnabled {
			_ = c.Close()
		}
	}
	f, err := New(Config{Client: newClient(t, srv), Instance: "a", Keys: []string{key}})
	require.NoError(t, err)
	f.Close()
}

func TestRedisTooSlowTimesOutAndRejoins(t *testing.T) {
	srv := startRedis(t)
	c := newCluster(t)
	a := c.addWith("a", clock.NewManual(epoch), redisStore{client: newClient(t, srv), prefix: DefaultPrefix},
		func(cfg *Config) { cfg.Timeout = 50 * time.Millisecond })
	admin := newClient(t, srv)
	ctx := context.Background()
	require.NoError(t, admin.Do(ctx, "CLIENT", "PAUSE", 60_000, "WRITE").Err()) // Redis holds every script for a minute
	a.run(3)
	c.tick() // returns: the exchange gives up at its timeout
	st := a.source().Stats()
	assert.True(t, st.Fallback)
	assert.Equal(t, uint64(1), st.Failures)
	assert.ErrorContains(t, st.LastError, "timeout")
	assert.Zero(t, a.run(3), "executions go on while Redis hangs")

	require.NoError(t, admin.Do(ctx, "CLIENT", "UNPAUSE").Err())
	for i := 0; i < 20 && a.source().Stats().Fallback; i++ {
		c.tick()
	}
	assert.False(t, a.source().Stats().Fallback, "the source rejoins once Redis answers")
}

// Redis restarts empty between two exchanges that both succeed (go-redis
// dials again without a word): the next exchange writes every bucket of
// the window again, so the fleet's sum is whole at once.
func TestRedisRestartedBetweenExchangesLearnsTheWindowAgain(t *testing.T) {
	srv := startRedis(t)
	c := newCluster(t)
	onRedis := func(name string) *instance {
		return c.addWith(name, clock.NewManual(epoch), redisStore{client: newClient(t, srv), prefix: DefaultPrefix},
			func(cfg *Config) { cfg.Timeout = settle })
	}
	a, b := onRedis("a"), onRedis("b")
	a.down.Store(true)
	b.down.Store(true)
	a.run(15)
	b.run(15)
	c.tick() // each writes its bucket of 15 errors
	require.NoError(t, srv.Stop())
	require.NoError(t, srv.Restart()) // back, empty, before the next exchange

	c.ticks(2)
	for _, in := range []*instance{a, b} {
		st := in.source().Stats()
		assert.Zero(t, st.Failures, in.name)
		assert.Equal(t, 1, st.Instances, "%s reads the other's bucket again", in.name)
		assert.Equal(t, int64(30), st.Health.Total, "%s judges the fleet's 30 errors", in.name)
	}
}

// A write only lengthens a bucket's expiry: an instance whose window is
// shorter (a deploy that changes it) does not cut the life of a bucket
// that the others' longer windows still read.
func TestRedisShortWindowWriterKeepsTheLongerExpiry(t *testing.T) {
	srv := startRedis(t)
	s := redisStore{client: newClient(t, srv), prefix: DefaultPrefix}
	ctx := context.Background()
	write := func(who string, c counts, expiry time.Duration) {
		t.Helper()
		_, err := s.exchange(ctx, exchange{key: key, instance: who, interval: interval, from: 100, buckets: 1,
			writes: []bucketWrite{{index: 100, counts: c, expiry: expiry}}})
		require.NoError(t, err)
	}
	write("long", counts{15, 15, 0}, 22*interval)
	write("short", counts{1, 0, 0}, 4*interval)
	ttl, err := newClient(t, srv).PTTL(ctx, s.bucketKey(&exchange{key: key, interval: interval}, 100)).Result()
	require.NoError(t, err)
	assert.Greater(t, ttl, 20*interval, "the long window's expiry stands")
}

func TestRedisMeasuresTheClockSkew(t *testing.T) {
	srv := startRedis(t)
	c, in := threeOnRedis(t, srv)
	a := in[0]
	before := time.Now()
	c.tick()
	after := time.Now()
	// The instances' manual clocks stand still during the exchange and
	// read epoch+interval, months behind Redis's TIME, which was read
	// between before and after (to the microsecond).
	local := epoch.Add(interval)
	st := a.source().Stats()
	assert.Zero(t, st.RoundTrip)
	assert.GreaterOrEqual(t, st.ClockSkew, local.Sub(after))
	assert.LessOrEqual(t, st.ClockSkew, local.Sub(before.Truncate(time.Microsecond)))
}

// Redis loses every bucket between two exchanges that both succeed (a
// restart that go-redis redials without a word, a failover to a replica
// that has none, FLUSHALL): the instances write their windows again one
// after the other in the interval, as after an outage, and an instance
// that exchanges after the bad one and before the others must not judge
// on a "fleet" of the bad instance alone: neither one with traffic,
// whose write finds its counts gone, nor one with none in its window,
// which writes no bucket and learns it from its mark.
func TestRedisThatLostTheBucketsBetweenExchangesJudgesAloneFirst(t *testing.T) {
	srv := startRedis(t)
	c := newCluster(t)
	onRedis := func(name string) *instance {
		return c.addWith(name, clock.NewManual(epoch), redisStore{client: newClient(t, srv), prefix: DefaultPrefix},
			func(cfg *Config) { cfg.Timeout = settle })
	}
	bad := onRedis("bad")   // exchanges first in each interval
	idle := onRedis("idle") // no traffic: writes no bucket
	a := onRedis("a")
	big := onRedis("big")
	traffic := badOpensAlone(t, c, bad, a, big)
	require.False(t, idle.open(), "25 errors in the fleet's ~235 do not trip idle")

	require.NoError(t, newClient(t, srv).FlushAll(context.Background()).Err()) // Redis lost every bucket

	c.tickInOrder(traffic) // idle and a read only bad's window, written again
	for _, in := range []*instance{idle, a} {
		assert.Zero(t, in.source().Stats().Failures)
		assert.False(t, in.open(), "one bad instance does not trip the others")
	}
	c.tickInOrder(traffic) // every window is written again: the fleet's sum
	assert.Equal(t, 2, a.source().Stats().Instances, "bad and big")
	assert.Equal(t, 3, idle.source().Stats().Instances, "bad, a and big")
	for _, in := range []*instance{idle, a} {
		assert.False(t, in.source().Stats().Fallback)
		assert.False(t, in.open(), "one bad instance does not trip the others")
	}
	assert.False(t, big.open())
}

// A value in a bucket that is not three counts, or counts more errors or
// slow calls than executions (another writer's format, a stray HSET), is
// left out of the fleet's sum and counted, not added: one such value must
// not trip every instance.
func TestRedisSkipsAndCountsCorruptValues(t *testing.T) {
	srv := startRedis(t)
	s := redisStore{client: newClient(t, srv), prefix: DefaultPrefix}
	ctx := context.Background()
	x := exchange{key: key, instance: "me", interval: interval, from: 100, buckets: 1}
	require.NoError(t, newClient(t, srv).HSet(ctx, s.bucketKey(&x, 100),
		"good", "5 1 0",
		"garbage", "x",
		"inflated", "1 1000 0",
		"slowest", "1 0 7",
	).Err())
	r, err := s.exchange(ctx, x)
	require.NoError(t, err)
	assert.Equal(t, []counts{{5, 1, 0}}, r.others, "only the well-formed value counts")
	assert.Equal(t, 1, r.instances)
	assert.Equal(t, 3, r.corrupt, "the skipped values are counted")
}
