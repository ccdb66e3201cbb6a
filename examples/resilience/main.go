// Command resilience calls a flaky downstream (a fifth of the calls fail,
// and three in a hundred take ten times the median) four ways: plain, with retries,
// with hedges at the command's live p95, and under a rate limit; and then
// streams from it, plain and hedged at p95, with an ObservableCommand
// whose first value is the stream's answer. It prints, for each, how many
// calls succeeded, their p50 and p99, and how many calls the downstream
// received per call made. Every way meets the same downstream: which
// calls fail and which are slow is drawn from -seed, per call, so the
// ways are compared on the same luck.
//
//	go run ./examples/resilience
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rxhystrix/rxhystrix/command"
	"github.com/rxhystrix/rxhystrix/examples/internal/cmdline"
	"github.com/rxhystrix/rxhystrix/metricsstream"
	"github.com/rxhystrix/rxhystrix/observable"
)

func main() {
	var o options
	flag.IntVar(&o.Calls, "calls", 600, "calls per way")
	flag.DurationVar(&o.Median, "median", 10*time.Millisecond, "the downstream's median latency")
	flag.Uint64Var(&o.Seed, "seed", 1, "the downstream's luck: which calls fail and which are slow")
	cmdline.Parse()
	if err := run(os.Stdout, o); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

type options struct {
	Calls  int           // calls per way
	Median time.Duration // the downstream's usual latency; the tail is ten times it
	Seed   uint64        // which calls fail and which are slow
}

// downstream is the flaky service: 20 % of its calls fail, 3 % take ten
// times the median. It counts the calls it receives.
type downstream struct {
	median   time.Duration
	seed     uint64
	calls    atomic.Int64
	mu       sync.Mutex
	attempts map[int]uint64 // the calls received for each input
}

func newDownstream(median time.Duration, seed uint64) *downstream {
	return &downstream{median: median, seed: seed, attempts: map[int]uint64{}}
}

// luck draws whether a call for in fails and whether it is slow. The draw
// is a function of the seed, the input and how many calls for the input
// came before, and of nothing else: each way of calling meets the same
// luck on its first call for an input, and a retry or a hedge draws
// afresh, whatever order the calls arrive in. So the ways are compared on
// the same calls, and a run's numbers do not hang on its timing.
func (d *downstream) luck(in int) (fail, slow bool) {
	d.mu.Lock()
	n := d.attempts[in]
	d.attempts[in]++
	d.mu.Unlock()
	r := rand.New(rand.NewPCG(d.seed, uint64(in)<<32|n))
	return r.Float64() < 0.2, r.Float64() < 0.03
}

var errFlaky = errors.New("downstream: 500")

func (d *downstream) call(ctx context.Context, in int) (string, error) {
	d.calls.Add(1)
	fail, slow := d.luck(in)
	latency := d.median
	if slow {
		latency *= 10
	}
	t := time.NewTimer(latency)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		return "", ctx.Err()
	}
	if fail {
		return "", errFlaky
	}
	return "ok", nil
}

// stream is the downstream as a feed: a call's answer, then two more
// values at once. A hedged stream commits to the first call whose answer
// comes, and cancels the others.
func (d *downstream) stream(ctx context.Context, in int) observable.Observable[string] {
	return observable.Create(func(ctx context.Context, o observable.Observer[string]) {
		v, err := d.call(ctx, in)
		if err != nil {
			o.OnError(err)
			return
		}
		for _, s := range []string{v, "more", "done"} {
			o.OnNext(s)
		}
		o.OnCompleted()
	})
}

// way is one way of calling the downstream.
type way struct {
	name   string
	cfg    command.Config
	stream bool // an ObservableCommand of the downstream's feed
}

func run(w io.Writer, o options) error {
	if o.Calls <= 0 || o.Median <= 0 {
		return fmt.Errorf("resilience: -calls and -median must be positive")
	}
	// Short percentile buckets, so that the hedges' p95 is live within
	// the run.
	metrics := metricsstream.Config{PercentileWindow: 2 * time.Second, PercentileBuckets: 4}
	base := command.Config{Isolation: command.SemaphoreIsolation, MaxConcurrentRequests: 100, Timeout: 50 * o.Median, Metrics: metrics}
	ways := []way{
		{"plain", base, false},
		{"retry (3 attempts)", with(base, func(c *command.Config) {
			c.Retry = command.RetryConfig{MaxAttempts: 3, Backoff: observable.Backoff{Initial: o.Median / 2}}
		}), false},
		{"hedge at p95", with(base, func(c *command.Config) {
			c.Hedge = command.HedgeConfig{MaxHedges: 1, Percentile: 95, Delay: 2 * o.Median}
		}), false},
		{"rate limit 200/s", with(base, func(c *command.Config) {
			c.RateLimit = command.RateLimitConfig{Enabled: true, Rate: 200, Burst: 8, MaxWait: 2 * o.Median}
		}), false},
		{"stream", base, true},
		{"stream, hedge at p95", with(base, func(c *command.Config) {
			c.Hedge = command.HedgeConfig{MaxHedges: 1, Percentile: 95, Delay: 2 * o.Median}
		}), true},
	}
	fmt.Fprintf(w, "%d calls each at %d/s, downstream median %v, 3%% at %v, 20%% failing\n\n", o.Calls, offered, o.Median, 10*o.Median)
	fmt.Fprintf(w, "%-20s %9s %9s %9s %16s\n", "way", "success", "p50", "p99", "downstream load")
	for i, wy := range ways {
		reg := command.NewRegistry()
		d := newDownstream(o.Median, o.Seed)
		key, opts := fmt.Sprintf("Flaky%d", i), []command.Option{command.WithRegistry(reg), command.WithConfig(wy.cfg)}
		var call func(context.Context, int) error
		if wy.stream {
			call = errOf(command.NewObservable(key, d.stream, opts...).Execute)
		} else {
			call = errOf(command.New(key, d.call, opts...).Execute)
		}
		ok, latencies := drive(call, o.Calls)
		reg.Close()
		fmt.Fprintf(w, "%-20s %8.1f%% %9v %9v %15.2fx\n", wy.name,
			100*float64(ok)/float64(o.Calls), pct(latencies, 50), pct(latencies, 99),
			float64(d.calls.Load())/float64(o.Calls))
	}
	return nil
}

// offered is the rate at which each way is called, whatever its answers:
// callers do not wait for one call to make the next.
const offered = 400

// drive makes calls calls at the offered rate and returns how many
// succeeded and the latencies of those.
func drive(call func(context.Context, int) error, calls int) (int, []time.Duration) {
	var (
		mu        sync.Mutex
		ok        int
		latencies []time.Duration
		wg        sync.WaitGroup
	)
	start := time.Now()
	for i := range calls {
		time.Sleep(time.Until(start.Add(time.Duration(i) * time.Second / offered)))
		wg.Go(func() {
			began := time.Now()
			err := call(context.Background(), i)
			took := time.Since(began)
			if err == nil {
				mu.Lock()
				ok++
				latencies = append(latencies, took)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return ok, latencies
}

// errOf is execute with its value dropped: the error of each call.
func errOf[T any](execute func(context.Context, int) (T, error)) func(context.Context, int) error {
	return func(ctx context.Context, in int) error {
		_, err := execute(ctx, in)
		return err
	}
}

func with(c command.Config, f func(*command.Config)) command.Config {
	f(&c)
	return c
}

// pct is the p-th percentile of ds, to the millisecond.
func pct(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(p / 100 * float64(len(s)-1))
	return s[i].Round(time.Millisecond)
}
