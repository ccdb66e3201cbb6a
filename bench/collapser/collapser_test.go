// Package collapser measures the request collapser of rxhystrix's command
// package under a burst of concurrent callers: how many batches 1,000
// callers make, how many batches it runs per second, and how much latency
// collapsing adds to each call. None of the peers has a collapser, so it
// has no rows to compare with.
//
//	go test -run='^$' -bench=Collapser -benchtime=200x ./collapser/
//
// Each iteration releases 1,000 goroutines at once, each calling Execute
// on one GlobalScope collapser with a 1ms window, and waits for all of
// them. Per iteration it reports:
//
//	batches/round     batches the 1,000 calls made: 1000/MaxRequestsInBatch
//	                  (1 without a cap) plus one per extra window, a
//	                  window closing while released goroutines are still
//	                  arriving (the benchmark fails if a round makes more
//	                  than 50 extra batches: then requests are not
//	                  collapsed)
//	extra-batches     batches/round beyond 1000/MaxRequestsInBatch
//	batches/s         batches run per second of wall time
//	added-ms/call     mean time from a caller's release to its result,
//	                  the batch function itself taking no time: the
//	                  window, the hand-offs and the wait for the batch
//	max-added-ms      the slowest call of the iteration, averaged
package collapser

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rxhystrix/rxhystrix/command"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const callers = 1000

// slack is how many batches beyond 1000/MaxRequestsInBatch a round may
// make before the benchmark fails: windows that close while the released
// goroutines are still arriving. On 2 busy cores waking 1,000 goroutines
// and adding them to batches takes several milliseconds, so a 1ms window
// closes a few times during a burst.
const slack = 50

func BenchmarkCollapser1000Callers(b *testing.B) {
	for _, tc := range []struct {
		name string
		max  int
	}{
		{"rxhystrix-unbounded", 0},
		{"rxhystrix-max=100", 100},
		{"rxhystrix-max=10", 10},
	} {
		b.Run(tc.name, func(b *testing.B) { benchmarkCollapser(b, tc.max) })
	}
}

func benchmarkCollapser(b *testing.B, maxInBatch int) {
	reg := command.NewRegistry()
	defer reg.Close()
	var batches atomic.Int64
	c := command.NewCollapser("Bench", func(ctx context.Context, ids []int) ([]int, error) {
		batches.Add(1)
		return ids, nil
	}, command.WithRegistry(reg),
		command.WithCollapserConfig(command.CollapserConfig{Scope: command.GlobalScope, Delay: time.Millisecond, MaxRequestsInBatch: maxInBatch}),
		command.WithConfig(command.Config{Isolation: command.SemaphoreIsolation, MaxConcurrentRequests: callers}))
	expected := int64(1)
	if maxInBatch > 0 {
		expected = int64((callers + maxInBatch - 1) / maxInBatch)
	}
	allowed := expected + slack

	ctx := context.Background()
	var totalLatency, maxLatency time.Duration
	var elapsed time.Duration
	var rounds int64
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		before := batches.Load()
		release := make(chan struct{})
		latencies := make([]time.Duration, callers)
		var ready, done sync.WaitGroup
		ready.Add(callers)
		for i := range callers {
			done.Go(func() {
				ready.Done()
				<-release
				start := time.Now()
				v, err := c.Execute(ctx, i)
				latencies[i] = time.Since(start)
				if err != nil || v != i {
					b.Errorf("Execute(%d) = %d, %v", i, v, err)
				}
			})
		}
		ready.Wait()
		start := time.Now()
		close(release)
		done.Wait()
		elapsed += time.Since(start)
		rounds++

		var roundMax time.Duration
		for _, l := range latencies {
			totalLatency += l
			roundMax = max(roundMax, l)
		}
		maxLatency += roundMax
		if n := batches.Load() - before; n > allowed {
			b.Fatalf("%d callers made %d batches; want at most %d", callers, n, allowed)
		}
	}
	b.ReportMetric(float64(batches.Load())/float64(rounds), "batches/round")
	b.ReportMetric(float64(batches.Load())/float64(rounds)-float64(expected), "extra-batches")
	b.ReportMetric(float64(batches.Load())/elapsed.Seconds(), "batches/s")
	b.ReportMetric(ms(totalLatency)/float64(rounds*callers), "added-ms/call")
	b.ReportMetric(ms(maxLatency)/float64(rounds), "max-added-ms")
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
