// Cluster shows one dashboard for a service that runs on three instances,
// as Turbine gave Hystrix users: package metricsstream/turbine reads the
// three instances' streams and serves their sum. Each instance runs the
// command GetUser against its own stand-in of the users service; the
// third instance's stand-in fails every call, so its circuit opens while
// the other two stay closed. The program reads the sum from the
// aggregator's stream as a dashboard does and prints, every second, what
// the cluster's GetUser card shows: hosts, rate and error percentage per
// host, and the circuit, "Open 1 Closed 2". The rate is the rolling
// window's calls over its 10 seconds, as on the dashboard, so it climbs to
// the instances' 40 calls a second over the first 10 seconds. The page
// also serves the Turbine's instances as Prometheus metrics, at /metrics,
// and the program ends by counting the connected ones there.
//
//	go run ./examples/cluster
//	go run ./examples/cluster -serve   # and keep the cluster's dashboard open until Ctrl-C
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"time"

	"github.com/rxhystrix/rxhystrix/examples/internal/cmdline"
)

// options shape the run.
type options struct {
	Duration time.Duration // how long the traffic runs
	Serve    bool          // keep serving the dashboard after the run, until ctx ends
}

func main() {
	var opts options
	flag.DurationVar(&opts.Duration, "duration", 12*time.Second, "how long the instances' traffic runs")
	flag.BoolVar(&opts.Serve, "serve", false, "after the run, keep serving the cluster's dashboard until Ctrl-C")
	cmdline.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Stdout, opts); err != nil {
		fmt.Fprintln(os.Stderr, "cluster:", err)
		os.Exit(1)
	}
}
