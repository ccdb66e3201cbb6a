package isolation_test

import (
	"fmt"
	"os"
	"time"

	"github.com/rxhystrix/rxhystrix/bench/isolation"
)

func ExampleWriteMarkdown() {
	load := isolation.Config{Servers: 30, Rate: 200, Duration: 20 * time.Second,
		Latency: 10 * time.Millisecond, Capacity: 50, Deadline: 5 * time.Second,
		Timeout: 10 * time.Second, PoolSize: 10}
	hung := load
	hung.Hung = 1
	_ = isolation.WriteMarkdown(os.Stdout, []isolation.Result{
		{Client: "unprotected", Config: load, Healthy: 4000, Answered: 4000,
			P50: 11 * time.Millisecond, P99: 16 * time.Millisecond, Max: 19 * time.Millisecond},
		{Client: "unprotected", Config: hung, Healthy: 3866, Answered: 1423,
			P50: 5 * time.Second, P99: 5 * time.Second, Max: 5 * time.Second, HungConnections: 50},
	})
	// Output:
	// 200 requests/s for 20s, round robin over 30 servers on 127.0.0.1 (healthy ones answer in 10ms ± 50 %); the service handles 50 requests at once and its callers wait at most 5s. Only requests for healthy servers are counted.
	//
	// | scenario | client | requests | answered | p50 | p99 | max | conns held by hung server |
	// |---|---|---:|---:|---:|---:|---:|---:|
	// | no failure | unprotected | 4000 | 100.0 % | 11ms | 16ms | 19ms | 0 |
	// | 1 of 30 hung | unprotected | 3866 | 36.8 % | 5s | 5s | 5s | 50 |
	//
	// - unprotected: plain http.Client, 30 s timeout
}

func ExampleScenario() {
	fmt.Println(isolation.Scenario(isolation.Config{}))
	fmt.Println(isolation.Scenario(isolation.Config{Hung: 1}))
	fmt.Println(isolation.Scenario(isolation.Config{Servers: 5, Hung: 2}))
	// Output:
	// no failure
	// 1 of 30 hung
	// 2 of 5 hung
}
