package hedge

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/failsafe-go/failsafe-go"
	"github.com/failsafe-go/failsafe-go/hedgepolicy"

	"github.com/rxhystrix/rxhystrix/command"
	"github.com/rxhystrix/rxhystrix/metricsstream"
)

// Options shape a run.
type Options struct {
	Calls  int           // calls per way
	Rate   int           // calls a second, whatever the answers
	Median time.Duration // the downstream's median latency; 5 % take ten times it
}

// downstream answers in Median, or in ten times it for one call in
// 33, unless its context ends first; it counts the calls it receives.
type downstream struct {
	median time.Duration
	calls  atomic.Int64
	slow   atomic.Uint64 // a counter hashed into the draws, so that every way sees the same tail
}

func (d *downstream) call(ctx context.Context) error {
	d.calls.Add(1)
	latency := d.median
	if rand.New(rand.NewPCG(d.slow.Add(1), 7)).IntN(33) == 0 {
		latency *= 10
	}
	t := time.NewTimer(latency)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// A way calls the downstream once per call.
type way struct {
	name string
	make func(d *downstream) (call func() error, stop func())
}

// Run prints the table.
func Run(w io.Writer, o Options) error {
	if o.Calls <= 0 || o.Rate <= 0 || o.Median <= 0 {
		return fmt.Errorf("hedge: Calls, Rate and Median must be positive")
	}
	fixed := 2 * o.Median
	// Short percentile buckets, so that the live p95 is known early in
	// the run; the first second of each way warms it up.
	metrics := metricsstream.Config{PercentileWindow: 2 * time.Second, PercentileBuckets: 4}
	rx := func(name string, hedge command.HedgeConfig) way {
		return way{name, func(d *downstream) (func() error, func()) {
			reg := command.NewRegistry()
			cmd := command.New(name, func(ctx context.Context, _ int) (int, error) { return 0, d.call(ctx) },
				command.WithRegistry(reg), command.WithConfig(command.Config{
					Isolation: command.SemaphoreIsolation, MaxConcurrentRequests: 10000, Timeout: -1,
					Hedge: hedge, Metrics: metrics,
				}))
			ctx := context.Background()
			return func() error { _, err := cmd.Execute(ctx, 0); return err }, reg.Close
		}}
	}
	fs := func(name string, p func() hedgepolicy.HedgePolicy[int]) way {
		return way{name, func(d *downstream) (func() error, func()) {
			exec := failsafe.With[int](p())
			run := func(e failsafe.Execution[int]) (int, error) { return 0, d.call(e.Context()) }
			return func() error { _, err := exec.GetWithExecution(run); return err }, func() {}
		}}
	}
	ways := []way{
		rx("plain", command.HedgeConfig{}),
		rx("rxhystrix hedge at p95", command.HedgeConfig{MaxHedges: 1, Percentile: 95, Delay: fixed}),
		fs("failsafe-go hedge at p95", func() hedgepolicy.HedgePolicy[int] {
			return hedgepolicy.NewWithDelayQuantile[int](0.95, 1000, 100)
		}),
		rx(fmt.Sprintf("rxhystrix hedge at %v", fixed), command.HedgeConfig{MaxHedges: 1, Delay: fixed}),
		fs(fmt.Sprintf("failsafe-go hedge at %v", fixed), func() hedgepolicy.HedgePolicy[int] {
			return hedgepolicy.NewWithDelay[int](fixed)
		}),
	}
	fmt.Fprintf(w, "%d calls per way at %d/s; the downstream answers in %v, one call in 33 in %v (p99 = 10 × p50).\n\n",
		o.Calls, o.Rate, o.Median, 10*o.Median)
	fmt.Fprintln(w, "| way | p50 | p99 | p99.9 | extra downstream load |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|")
	for _, wy := range ways {
		d := &downstream{median: o.Median}
		call, stop := wy.make(d)
		drive(call, o.Rate, o.Rate) // a second of warm-up: the percentiles fill
		d.calls.Store(0)
		d.slow.Store(0)
		latencies, failed := drive(call, o.Calls, o.Rate)
		stop()
		if failed > 0 {
			return fmt.Errorf("hedge: %s: %d calls failed", wy.name, failed)
		}
		fmt.Fprintf(w, "| %s | %v | %v | %v | %+.1f %% |\n", wy.name,
			at(latencies, 0.50), at(latencies, 0.99), at(latencies, 0.999),
			100*(float64(d.calls.Load())/float64(o.Calls)-1))
	}
	return nil
}

// drive makes calls calls at rate a second, each on a goroutine of its
// own, and returns their latencies and how many failed.
func drive(call func() error, calls, rate int) ([]time.Duration, int) {
	latencies := make([]time.Duration, calls)
	var failed atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for i := range calls {
		time.Sleep(time.Until(start.Add(time.Duration(i) * time.Second / time.Duration(rate))))
		wg.Go(func() {
			began := time.Now()
			if call() != nil {
				failed.Add(1)
			}
			latencies[i] = time.Since(began)
		})
	}
	wg.Wait()
	return latencies, int(failed.Load())
}

func at(ds []time.Duration, q float64) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[int(q*float64(len(s)-1))].Round(10 * time.Microsecond)
}
