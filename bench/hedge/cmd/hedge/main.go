// Command hedge prints the table of package hedge.
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/rxhystrix/rxhystrix/bench/hedge"
)

func main() {
	var o hedge.Options
	flag.IntVar(&o.Calls, "calls", 4000, "calls per way")
	flag.IntVar(&o.Rate, "rate", 1000, "calls a second")
	flag.DurationVar(&o.Median, "median", 2*time.Millisecond, "the downstream's median latency")
	flag.Parse()
	if err := hedge.Run(os.Stdout, o); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
