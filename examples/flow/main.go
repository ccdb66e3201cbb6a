// Flow walks one command through every branch of the Hystrix execution
// flow that seeds 000 and 001 describe: pool and semaphore rejections, the
// four ways to execute it, a response from the request cache, a failure
// mended by the fallback, a fallback that fails too, a timeout, a bad
// request, and a circuit breaker that trips, short-circuits, lets one
// trial through after its sleep window and closes again.
//
// Each step prints the command's answer and the events of its execution,
// as the metrics' Completions stream reports them in Hystrix's names. The
// walk is one request: it ends with the request log, then the breaker's
// transitions.
//
//	go run ./examples/flow
//	go run ./examples/flow -timeout 50ms -sleep-window 200ms
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"time"

	"github.com/rxhystrix/rxhystrix/breaker"
	"github.com/rxhystrix/rxhystrix/command"
	"github.com/rxhystrix/rxhystrix/examples/internal/cmdline"
	"github.com/rxhystrix/rxhystrix/metricsstream"
)

// options are the durations of the walk.
type options struct {
	// Timeout bounds each run of GetUser.
	Timeout time.Duration
	// SleepWindow is how long the tripped breaker refuses every call
	// before it lets a trial through.
	SleepWindow time.Duration
}

func main() {
	var opts options
	flag.DurationVar(&opts.Timeout, "timeout", 200*time.Millisecond, "timeout of each run of GetUser")
	flag.DurationVar(&opts.SleepWindow, "sleep-window", time.Second, "how long the open breaker refuses calls")
	cmdline.Parse()
	if err := run(os.Stdout, opts); err != nil {
		fmt.Fprintln(os.Stderr, "flow:", err)
		os.Exit(1)
	}
}

// run builds GetUser in a registry of its own and walks it through the
// flow, writing what happens to w.
func run(w io.Writer, opts options) error {
	switch {
	case opts.Timeout <= 0:
		return fmt.Errorf("-timeout %v: it must be positive", opts.Timeout)
	case opts.SleepWindow <= 0:
		return fmt.Errorf("-sleep-window %v: it must be positive", opts.SleepWindow)
	}
	reg := command.NewRegistry()
	defer reg.Close()

	cfg := command.Config{
		Timeout: opts.Timeout,
		Breaker: breaker.Config{
			RequestVolumeThreshold:   20, // Hystrix's default, spelled out
			ErrorThresholdPercentage: 50,
			SleepWindow:              opts.SleepWindow,
		},
		Metrics: metricsstream.Config{HealthSnapshotInterval: 100 * time.Millisecond},
	}
	getUser := command.New("GetUser", lookUp, command.WithRegistry(reg), command.WithConfig(cfg)).WithFallback(anonymous).WithCacheKey(func(r request) string { return strconv.Itoa(r.ID) })

	// The walk waits out one timeout and one sleep window.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second+opts.Timeout+opts.SleepWindow)
	defer cancel()
	// The walk is one request: it has a request cache and a request log.
	ctx = command.WithRequestContext(ctx)
	events := watchCompletions(ctx, getUser.Metrics())
	transitions := watchTransitions(ctx, getUser.Breaker())

	f := &flow{w: w, ctx: ctx, cmd: getUser, events: events}

	fmt.Fprintln(w, "rejections:")
	// One worker, so that one call held in the pool makes the next one
	// rejected; pools and commands take new settings live. (This comes
	// first: a worker may still be finishing a call whose caller has its
	// answer already, as a Hystrix thread may.)
	if err := reg.ConfigurePool("GetUser", command.PoolConfig{CoreSize: 1}); err != nil {
		return err
	}
	f.stepWhileHeld("pool of 1 is busy", request{ID: 7, Backend: healthy})
	if err := reg.ConfigurePool("GetUser", command.PoolConfig{}); err != nil {
		return err
	}
	semaphore := cfg
	semaphore.Isolation = command.SemaphoreIsolation
	semaphore.MaxConcurrentRequests = 1
	if err := reg.Configure("GetUser", semaphore); err != nil {
		return err
	}
	f.stepWhileHeld("1 semaphore permit is taken", request{ID: 8, Backend: healthy})
	if err := reg.Configure("GetUser", cfg); err != nil {
		return err
	}

	fmt.Fprintln(w, "success, executed four ways:")
	f.step("Execute", func() (string, error) { return getUser.Execute(ctx, request{ID: 1, Backend: healthy}) })
	f.step("Queue(...).Get", func() (string, error) {
		return getUser.Queue(ctx, request{ID: 2, Backend: healthy}).Get(ctx)
	})
	f.step("Observe(...).First", func() (string, error) {
		return getUser.Observe(ctx, request{ID: 3, Backend: healthy}).First(ctx)
	})
	f.step("ToObservable(...).First", func() (string, error) {
		return getUser.ToObservable(ctx, request{ID: 4, Backend: healthy}).First(ctx)
	})
	f.step("user 1 again: request cache", func() (string, error) {
		return getUser.Execute(ctx, request{ID: 1, Backend: broken})
	})

	fmt.Fprintln(w, "failures:")
	f.step("run fails, fallback", func() (string, error) { return getUser.Execute(ctx, request{ID: 5, Backend: broken}) })
	f.step("run fails, fallback fails", func() (string, error) {
		return getUser.Execute(ctx, request{ID: noDefault, Backend: broken})
	})
	f.step("run hangs: timeout", func() (string, error) { return getUser.Execute(ctx, request{ID: 6, Backend: hanging}) })
	f.step("bad request: no fallback", func() (string, error) {
		return getUser.Execute(ctx, request{ID: -1, Backend: healthy})
	})

	fmt.Fprintln(w, "circuit breaker:")
	const burst = 20
	seen := map[string]int{}
	for i := range burst {
		if _, err := getUser.Execute(ctx, request{ID: 100 + i, Backend: broken}); err != nil {
			return err
		}
		c, err := f.next()
		if err != nil {
			return err
		}
		seen[c.Events.String()]++
	}
	for events, n := range seen {
		fmt.Fprintf(w, "  %d failures in a row: %d x %s\n", burst, n, events)
	}
	opened, err := transitions.await(ctx, breaker.Open)
	if err != nil {
		return err
	}
	h := opened.Health
	fmt.Fprintf(w, "  breaker %v: %d requests in the window, %d%% errors\n", opened, h.Total, h.ErrorPercentage)
	f.step("breaker open: short-circuit", func() (string, error) {
		return getUser.Execute(ctx, request{ID: 9, Backend: healthy})
	})
	// The first call after the sleep window is the trial.
	if err := sleepUntil(ctx, opened.Time.Add(opts.SleepWindow+time.Millisecond)); err != nil {
		return err
	}
	f.step("after the sleep window: trial", func() (string, error) {
		return getUser.Execute(ctx, request{ID: 10, Backend: healthy})
	})
	if _, err := transitions.await(ctx, breaker.Closed); err != nil {
		return err
	}
	f.step("breaker closed again", func() (string, error) {
		return getUser.Execute(ctx, request{ID: 11, Backend: healthy})
	})

	// The request log groups the executions that read the same.
	fmt.Fprintln(w, "request log:")
	entry := regexp.MustCompile(`ms\](x\d+)?, `)
	fmt.Fprintf(w, "  %s\n", entry.ReplaceAllString(command.RequestLogFrom(ctx).String(), "ms]$1\n  "))

	fmt.Fprintln(w, "breaker transitions:")
	for _, t := range transitions.seen {
		fmt.Fprintf(w, "  %v\n", t)
	}
	return f.err
}
