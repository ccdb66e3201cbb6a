// Command isolation runs the seed 002 scenario (one of 30 downstream
// systems hangs) for every client kind built in, each with and without the
// hung system, and prints a markdown table of what the service's callers
// saw for calls to the healthy systems. See package
// github.com/rxhystrix/rxhystrix/bench/isolation for the model.
//
// Usage:
//
//	isolation [-duration 20s] [-rate 200] [-servers 30] [-hung 1] [-capacity 50]
//	          [-deadline 5s] [-timeout 10s] [-pool 10] [-latency 10ms] [-clients a,b]
//
// The default of -duration can be set with RXHYSTRIX_ISOLATION_DURATION.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strings"
	"time"

	"github.com/rxhystrix/rxhystrix/bench/isolation"
)

func main() {
	duration := 20 * time.Second
	if v := os.Getenv("RXHYSTRIX_ISOLATION_DURATION"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			fmt.Fprintf(os.Stderr, "isolation: RXHYSTRIX_ISOLATION_DURATION: %v\n", err)
			os.Exit(2)
		}
		duration = d
	}
	var cfg isolation.Config
	flag.DurationVar(&cfg.Duration, "duration", duration, "how long requests arrive, per run")
	flag.IntVar(&cfg.Rate, "rate", 200, "requests a second into the service")
	flag.IntVar(&cfg.Servers, "servers", 30, "downstream servers")
	hung := flag.Int("hung", 1, "how many servers hang in the failure runs")
	flag.IntVar(&cfg.Capacity, "capacity", 50, "requests the service handles at once")
	flag.DurationVar(&cfg.Deadline, "deadline", 5*time.Second, "how long a caller waits for the service")
	flag.DurationVar(&cfg.Timeout, "timeout", 10*time.Second, "command timeout of the protected clients")
	flag.IntVar(&cfg.PoolSize, "pool", 10, "concurrency per URL of the protected clients")
	flag.DurationVar(&cfg.Latency, "latency", 10*time.Millisecond, "mean answer time of a healthy server")
	only := flag.String("clients", "", "comma-separated client kinds to run (default: all)")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, cfg, *hung, *only); err != nil {
		fmt.Fprintf(os.Stderr, "isolation: %v\n", err)
		os.Exit(1)
	}
}

// run runs the baseline and the failure for every selected client kind
// and prints the table.
func run(ctx context.Context, cfg isolation.Config, hung int, only string) error {
	var kinds []isolation.ClientKind
	for _, k := range isolation.Kinds() {
		if only == "" || slices.Contains(strings.Split(only, ","), k.Name) {
			kinds = append(kinds, k)
		}
	}
	if len(kinds) == 0 {
		return fmt.Errorf("no client kind among %q", only)
	}
	var results []isolation.Result
	for _, h := range []int{0, hung} {
		for _, k := range kinds {
			c := cfg
			c.Hung = h
			fmt.Fprintf(os.Stderr, "isolation: %s, %s, %v...\n", k.Name, isolation.Scenario(c), c.Duration)
			r, err := isolation.Run(ctx, c, k)
			if err != nil {
				return fmt.Errorf("%s, %s: %w", k.Name, isolation.Scenario(c), err)
			}
			results = append(results, r)
		}
	}
	return isolation.WriteMarkdown(os.Stdout, results)
}
