package adaptive

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/rxhystrix/rxhystrix/breaker"
	"github.com/rxhystrix/rxhystrix/command"
)

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
