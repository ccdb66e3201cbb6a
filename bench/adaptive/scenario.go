package adaptive

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/rxhystrix/rxhystrix/breaker"
	"github.com/rxhystrix/rxhystrix/command"
	"github.com/rxhystrix/rxhystrix/limit"
)

// Variant is the load on A and B's capacity for it.
type Variant struct {
	Name     string
	Rate     int // calls a second into A, each calling B
	Capacity int // calls of A's that B works on at once
}

// Variants are the seed's service and its fleet, one machine's share.
var Variants = []Variant{
	{Name: "30 requests/s", Rate: 30, Capacity: 12},
	{Name: "6,000 requests/s over 60 machines, one machine", Rate: 100, Capacity: 40},
}

// Timeline is the scenario, in scenario time.
type Timeline struct {
	Before, Slow, After time.Duration // how long B is fast, slow, fast again
	Usual, Slowed       time.Duration // B's latency when fast and when slow
}

// Seed004 is the seed's timeline: 200ms, 500ms for 20 s, 200ms.
var Seed004 = Timeline{Before: 10 * time.Second, Slow: 20 * time.Second, After: 30 * time.Second,
	Usual: 200 * time.Millisecond, Slowed: 500 * time.Millisecond}

// Total is the scenario's length.
func (t Timeline) Total() time.Duration { return t.Before + t.Slow + t.After }

// latencyAt is B's latency at scenario time s.
func (t Timeline) latencyAt(s time.Duration) time.Duration {
	if s >= t.Before && s < t.Before+t.Slow {
		return t.Slowed
	}
	return t.Usual
}

// Row is one configuration of A's command.
type Row struct {
	Name    string
	Pool    command.PoolConfig
	Timeout time.Duration // scenario time; 0 means the default, 1 s
}

// SeedPoolSize is the seed's rule for a rate: rate × 0.2 s + 4.
func SeedPoolSize(rate int) int { return int(math.Ceil(float64(rate)*0.2)) + 4 }

// Rows are the configurations compared for v.
func Rows(v Variant) []Row {
	seed := SeedPoolSize(v.Rate)
	return []Row{
		{Name: fmt.Sprintf("fixed %d, 300ms (the seed's pair)", seed), Pool: command.PoolConfig{CoreSize: seed}, Timeout: 300 * time.Millisecond},
		{Name: fmt.Sprintf("fixed %d, 300ms (too small)", seed/2), Pool: command.PoolConfig{CoreSize: seed / 2}, Timeout: 300 * time.Millisecond},
		{Name: fmt.Sprintf("fixed %d, 1s (too large)", 10*seed), Pool: command.PoolConfig{CoreSize: 10 * seed}},
		{Name: "adaptive Vegas, defaults", Pool: command.PoolConfig{AdaptiveLimit: limit.Vegas{}}},
		{Name: "adaptive Gradient2, defaults", Pool: command.PoolConfig{AdaptiveLimit: limit.Gradient2{}}},
		{Name: "adaptive AIMD, defaults", Pool: command.PoolConfig{AdaptiveLimit: limit.AIMD{}}},
		// The pool untuned, the timeout the seed's.
		{Name: "adaptive Vegas, 300ms", Pool: command.PoolConfig{AdaptiveLimit: limit.Vegas{}}, Timeout: 300 * time.Millisecond},
	}
}

// Options set how the scenario runs.
type Options struct {
	Timeline Timeline
	// Scale compresses time: the scenario runs Scale times faster than
	// its timeline says; 0 means 5.
	Scale float64
}

// Result is what A's callers saw in one row.
type Result struct {
	Variant Variant
	Row     Row
	// Calls counts every call; Slow those that arrived while B was slow.
	Calls, Slow int
	// Answered counts the calls B answered, AnsweredSlow those of them
	// that arrived while B was slow, Fallback the calls the fallback
	// answered, Errors the calls that returned an error.
	Answered, AnsweredSlow, Fallback, Errors int
	// P50 and P99 are what callers of the answered calls waited, in
	// scenario time.
	P50, P99 time.Duration
	// Recovery is how long after B recovered the service was back to
	// full throughput (see the package doc), if Recovered.
	Recovery  time.Duration
	Recovered bool
	// LimitMin and LimitMax are the least and greatest size of the pool
	// seen while B was slow (its CoreSize when fixed).
	LimitMin, LimitMax int
}

// Run runs every row of v at once and returns their results in order.
func Run(ctx context.Context, v Variant, opts Options) ([]Result, error) {
	if opts.Scale == 0 {
		opts.Scale = 5
	}
	if opts.Scale < 0 || v.Rate <= 0 || v.Capacity <= 0 || opts.Timeline.Total() <= 0 {
		return nil, errors.New("adaptive: Run needs a positive Scale, Rate, Capacity and Timeline")
	}
	rows := Rows(v)
	results := make([]Result, len(rows))
	t0 := time.Now().Add(10 * time.Millisecond) // every row starts its clock together
	var wg sync.WaitGroup
	for i, row := range rows {
		wg.Go(func() { results[i] = runRow(ctx, v, row, opts, t0) })
	}
	wg.Wait()
	return results, ctx.Err()
}

// call is what one caller saw.
type call struct {
	wait     time.Duration // real time
	answered bool
	err      error
}

// runRow runs one A and B from t0.
func runRow(ctx context.Context, v Variant, row Row, opts Options, t0 time.Time) Result {
	tl, scale := opts.Timeline, opts.Scale
	real := func(d time.Duration) time.Duration { return time.Duration(float64(d) / scale) }
	scenario := func(d time.Duration) time.Duration { return time.Duration(float64(d) * scale) }
	b := newDownstream(v.Capacity, func(now time.Time) time.Duration {
		return real(tl.latencyAt(scenario(now.Sub(t0))))
	})

	reg := command.NewRegistry()
	defer reg.Close()
	const key = "CallB"
	if err := reg.ConfigurePool(key, row.Pool); err != nil {
		panic(err) // the rows are fixed
	}
	timeout := row.Timeout
	if timeout == 0 {
		timeout = command.DefaultTimeout
	}
	cmd := command.New(key, func(ctx context.Context, _ struct{}) (bool, error) {
		return true, b.call(ctx)
	}, command.WithRegistry(reg), command.WithConfig(command.Config{
		Timeout: real(timeout),
		// Off, so that the pools show alone, as in examples/sizing.
		Breaker: breaker.Config{Disabled: true},
		// The fallback is a constant: enough permits for every call
		// that needs one, so that none fails for want of one.
		FallbackMaxConcurrentRequests: 10 * v.Rate,
	})).WithFallback(func(context.Context, struct{}, error) (bool, error) { return false, nil })

	n := int(float64(v.Rate) * tl.Total().Seconds())
	calls := make([]call, n)
	every := real(time.Second) / time.Duration(v.Rate)
	limits := watchLimit(reg, key, t0.Add(real(tl.Before)), t0.Add(real(tl.Before+tl.Slow)), real(100*time.Millisecond))
	var wg sync.WaitGroup
	for i := range calls {
		if d := time.Until(t0.Add(time.Duration(i) * every)); d > 0 {
			t := time.NewTimer(d)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
			}
		}
		if ctx.Err() != nil {
			calls = calls[:i]
			break
		}
		wg.Go(func() {
			start := time.Now()
			answered, err := cmd.Execute(ctx, struct{}{})
			calls[i] = call{wait: time.Since(start), answered: answered, err: err}
		})
	}
	wg.Wait()
	lo, hi := limits()
	r := summarize(v, row, tl, calls, scale)
	r.LimitMin, r.LimitMax = lo, hi
	return r
}

// watchLimit reads the pool's size every interval between from and to,
// and returns a function that stops and returns the least and greatest.
func watchLimit(reg *command.Registry, key string, from, to time.Time, every time.Duration) func() (lo, hi int) {
	stop := make(chan struct{})
	done := make(chan struct{})
	lo, hi := math.MaxInt, 0
	go func() {
		defer close(done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case now := <-t.C:
				if now.Before(from) || now.After(to) {
					continue
				}
				if pm, ok := reg.Metrics().LookupPool(key); ok {
					if st, ok := pm.Status(); ok {
						lo, hi = min(lo, st.CoreSize), max(hi, st.CoreSize)
					}
				}
			}
		}
	}()
	return func() (int, int) {
		close(stop)
		<-done
		if hi == 0 {
			lo = 0
		}
		return lo, hi
	}
}
