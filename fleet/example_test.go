package fleet_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/rxhystrix/rxhystrix/breaker"
	"github.com/rxhystrix/rxhystrix/clock"
	"github.com/rxhystrix/rxhystrix/command"
	"github.com/rxhystrix/rxhystrix/fleet"
	"github.com/rxhystrix/rxhystrix/internal/redisserver"
)

// Three instances of a service share a Redis. Two of them see GetUser
// fail 15 times each, under the breaker's volume threshold of 20; the
// third serves one request. Once their sources have exchanged buckets,
// every breaker, the quiet instance's too, is open on the fleet's 30
// errors of 31.
func Example() {
	dir, _ := os.MkdirTemp("", "fleet-example")
	defer os.RemoveAll(dir)
	srv, err := redisserver.Start(dir)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Stop()

	cfg := command.Config{
		Isolation: command.SemaphoreIsolation,
		Breaker:   breaker.Config{RequestVolumeThreshold: 20, ErrorThresholdPercentage: 50},
	}
	type instance struct {
		clk   *clock.Manual
		fleet *fleet.Fleet
		cmd   *command.Command[string, string]
	}
	var instances []instance
	for _, name := range []string{"busy-1", "busy-2", "quiet"} {
		rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, ContextTimeoutEnabled: true})
		defer rdb.Close()
		f, err := fleet.New(fleet.Config{Client: rdb, Instance: name, Keys: []string{"GetUser"}, Timeout: 5 * time.Second})
		if err != nil {
			fmt.Println(err)
			return
		}
		defer f.Close()
		clk := clock.NewManual(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
		reg := command.NewRegistry(command.WithClock(clk), command.WithHealthSource(f.HealthSource))
		defer reg.Close()
		failing := name != "quiet"
		cmd := command.New("GetUser", func(ctx context.Context, id string) (string, error) {
			if failing {
				return "", errors.New("users service unreachable")
			}
			return "Ada", nil
		}, command.WithRegistry(reg), command.WithConfig(cfg))
		instances = append(instances, instance{clk, f, cmd})
	}
	for i, in := range instances {
		n := 15
		if i == 2 {
			n = 1
		}
		for range n {
			in.cmd.Execute(context.Background(), "42")
		}
	}
	// Health intervals until the quiet instance has read the others'
	// buckets: each interval, every instance writes its bucket, then
	// reads the others'. Two do it, unless an exchange fails (Redis still
	// starting, say): the instance then judges on its own health for one
	// more interval.
	quiet := instances[2]
	written := false // every instance has written its buckets
	for rounds := 0; ; rounds++ {
		if rounds == 10 {
			fmt.Println("the quiet instance never read the others:", quiet.fleet.Source("GetUser").Stats().LastError)
			return
		}
		var before []uint64
		for _, in := range instances {
			st := in.fleet.Source("GetUser").Stats()
			before = append(before, st.Exchanges+st.Failures)
			in.clk.Advance(500 * time.Millisecond)
		}
		all := true
		for i, in := range instances {
			st := in.fleet.Source("GetUser").Stats()
			for ; st.Exchanges+st.Failures == before[i]; st = in.fleet.Source("GetUser").Stats() {
				time.Sleep(time.Millisecond) // Redis's answer, in real time
			}
			all = all && st.Exchanges > 0
		}
		if written && !quiet.fleet.Source("GetUser").Stats().Fallback {
			break
		}
		written = all
	}
	st := quiet.fleet.Source("GetUser").Stats()
	fmt.Printf("quiet: %d other instances, %d requests, %d%% errors\n", st.Instances, st.Health.Total, st.Health.ErrorPercentage)
	fmt.Println("quiet's breaker open:", quiet.cmd.Breaker().IsOpen())
	// Output:
	// quiet: 2 other instances, 31 requests, 96% errors
	// quiet's breaker open: true
}
