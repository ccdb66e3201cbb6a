package fleet

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/rxhystrix/rxhystrix/clock"
	"github.com/rxhystrix/rxhystrix/command"
	"github.com/rxhystrix/rxhystrix/fleet"
	"github.com/rxhystrix/rxhystrix/internal/redisserver"
	"github.com/rxhystrix/rxhystrix/metricsstream"
)

const key = "Bench"

// interval is Hystrix's health snapshot interval, the default.
const interval = 500 * time.Millisecond

// window is the health buckets of Hystrix's 10s window.
const window = 20

func passes(context.Context, int) (int, error) { return 42, nil }

var semaphore = command.Config{Isolation: command.SemaphoreIsolation}

// busySemaphore is semaphore with health buckets of 100ms, so that a
// fleet source exchanges with Redis 10 times a second while Execute is
// timed.
var busySemaphore = command.Config{
	Isolation: command.SemaphoreIsolation,
	Metrics:   metricsstream.Config{HealthSnapshotInterval: 100 * time.Millisecond},
}

// startRedis starts a redis-server for b, stopped when b ends.
func startRedis(b *testing.B) *redisserver.Server {
	b.Helper()
	srv, err := redisserver.Start(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = srv.Stop() })
	return srv
}

// opCounter counts the commands a client sends.
type opCounter struct{ n atomic.Int64 }

func (*opCounter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (c *opCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.n.Add(1)
		return next(ctx, cmd)
	}
}

func (c *opCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		c.n.Add(int64(len(cmds)))
		return next(ctx, cmds)
	}
}

// newFleet returns a Fleet of instance on srv for keys, closed with its
// client when b ends, and the counter of its client's commands.
func newFleet(b *testing.B, srv *redisserver.Server, instance string, keys ...string) (*fleet.Fleet, *opCounter, *redis.Client) {
	b.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, ContextTimeoutEnabled: true})
	ops := &opCounter{}
	rdb.AddHook(ops)
	f, err := fleet.New(fleet.Config{Client: rdb, Instance: instance, Keys: keys, Timeout: time.Second})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		f.Close()
		_ = rdb.Close()
	})
	return f, ops, rdb
}

func BenchmarkFleet(b *testing.B) {
	// Both rows run beside a redis-server and a Fleet, so that they
	// differ only in the key's health source: the fleet's has the key
	// among its Keys, the other keeps the key on its own metrics.
	b.Run("execute-passing", func(b *testing.B) {
		b.Run("rxhystrix", func(b *testing.B) {
			f, _, _ := newFleet(b, startRedis(b), "a", "Other")
			reg := command.NewRegistry(command.WithHealthSource(f.HealthSource))
			defer reg.Close()
			benchmarkExecute(b, reg)
			if f.Source(key) != nil {
				b.Fatal("the key is on the fleet's health")
			}
		})
		b.Run("rxhystrix-fleet", func(b *testing.B) {
			f, _, _ := newFleet(b, startRedis(b), "a", key)
			reg := command.NewRegistry(command.WithHealthSource(f.HealthSource))
			defer reg.Close()
			benchmarkExecute(b, reg)
			st := f.Source(key).Stats()
			if st.Failures > 0 || b.Elapsed() > 200*time.Millisecond && st.Exchanges == 0 {
				b.Fatalf("the source did not exchange with Redis: %+v", st)
			}
		})
	})
	b.Run("exchange", func(b *testing.B) {
		for _, others := range []int{2, 59} {
			b.Run(fmt.Sprintf("rxhystrix-fleet-of-%d", others+1), func(b *testing.B) { benchmarkExchange(b, others) })
		}
	})
}

func benchmarkExecute(b *testing.B, reg *command.Registry) {
	c := command.New(key, passes, command.WithRegistry(reg), command.WithConfig(busySemaphore))
	ctx := context.Background()
	if _, err := c.Execute(ctx, 1); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := c.Execute(ctx, 1); err != nil {
			b.Fatal(err)
		}
	}
}

// benchmarkExchange times one health interval of a source whose window
// holds buckets of others other instances: each iteration moves the
// source's manual clock one interval on, so that a bucket with an
// execution closes, and waits for the exchange to be done.
func benchmarkExchange(b *testing.B, others int) {
	srv := startRedis(b)
	f, ops, rdb := newFleet(b, srv, "self", key)
	epoch := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := clock.NewManual(epoch)
	reg := command.NewRegistry(command.WithClock(clk), command.WithHealthSource(f.HealthSource))
	defer reg.Close()
	c := command.New(key, passes, command.WithRegistry(reg), command.WithConfig(semaphore))
	src := f.Source(key)

	// The other instances' buckets for every window the run reads, in
	// the layout of the package doc.
	first := epoch.UnixNano()/int64(interval) - window - 1
	pipe := rdb.Pipeline()
	for i := range int64(b.N + window + 3) {
		k := fmt.Sprintf("%s{%s}:%v:%d", fleet.DefaultPrefix, key, interval, first+i)
		for o := range others {
			pipe.HSet(context.Background(), k, fmt.Sprintf("other-%d", o), "100 3 0")
		}
	}
	if _, err := pipe.Exec(context.Background()); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	exchanges := src.Stats().Exchanges
	opsBefore := ops.n.Load()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := c.Execute(ctx, 1); err != nil {
			b.Fatal(err)
		}
		clk.Advance(interval)
		exchanges++
		for src.Stats().Exchanges < exchanges {
			if src.Stats().Failures > 0 {
				b.Fatalf("exchange failed: %v", src.Stats().LastError)
			}
			runtime.Gosched()
		}
	}
	b.StopTimer()
	if got := src.Stats().Instances; got != others {
		b.Fatalf("the source saw %d other instances, want %d", got, others)
	}
	perExchange := float64(ops.n.Load()-opsBefore) / float64(b.N)
	b.ReportMetric(perExchange, "redis-ops/exchange")
	b.ReportMetric(perExchange*float64(time.Second/interval), "redis-ops/instance/s")
}
