// Command adaptive runs seed 004's sizing scenario (B slows from 200ms to
// 500ms for 20 s, then recovers) for fixed pools and adaptive limits side
// by side, and prints a markdown table of what A's callers saw. See
// package github.com/rxhystrix/rxhystrix/bench/adaptive for the model.
//
// Usage:
//
//	adaptive [-scale 5]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"

	"github.com/rxhystrix/rxhystrix/bench/adaptive"
)

func main() {
	opts := adaptive.Options{Timeline: adaptive.Seed004}
	flag.Float64Var(&opts.Scale, "scale", 5, "how many times faster than the scenario's time to run")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var all []adaptive.Result
	for _, v := range adaptive.Variants {
		results, err := adaptive.Run(ctx, v, opts)
		if err != nil {
			fmt.Fprintln(os.Stderr, "adaptive:", err)
			os.Exit(1)
		}
		all = append(all, results...)
	}
	adaptive.WriteTable(os.Stdout, all)
}
