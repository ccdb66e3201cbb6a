// Demo runs rxhystrix commands against simulated downstreams and serves
// what they do live: the Hystrix dashboard, its metrics stream, and
// Prometheus metrics.
//
//	go run ./examples/demo
//
// It needs no setup. It listens on 127.0.0.1:8080 (or, when that port is
// taken, on a free one) and prints the URLs:
//
//	/hystrix/        the dashboard (package metricsstream/dashboard)
//	/hystrix/stream  the Hystrix metrics stream it reads (metricsstream.Handler)
//	/hystrix.stream  the same stream at the path Netflix's dashboard and Turbine users type
//	/metrics         Prometheus metrics (package metricsstream/prometheus)
//	/health          the open circuits, as Spring Cloud's Hystrix health, and the refusing bulkheads, pools and rate limits, the throttling circuits and the commands injecting faults (metricsstream.HealthHandler)
//	/faults          the commands' injected faults, read and set live for a game day (httpcommand.FaultsHandler)
//	/api/checkout    the demo's own API, guarded (POST)
//
// While it runs it redraws, every second, a table of the commands in the
// terminal it was started from: each command's request rate, error
// percentage, p99 latency, circuit and pool use, so the scenario can be
// followed without a browser. When its output is not a terminal (a pipe,
// a log), it writes the table below the last one instead.
//
// Five commands and a request collapser run all the time, each in a state
// the dashboard draws, and the demo calls an API of its own, served
// behind a guard:
//
//	GetUser             a healthy downstream, in its own worker pool
//	GetRecommendations  a slow one under semaphore isolation: some calls time out, the fallback answers; its breaker throttles, refusing some 13%
//	PaymentGateway      one that fails for 15s out of every 25s: its circuit opens, then closes again
//	SearchProducts      a pool of 4 workers and a queue of 2 for 7 callers: some calls are rejected
//	LegacyInventory     a circuit forced open by configuration: every call is short-circuited
//	GetPrice            a collapser: the lookups of 10ms go to the downstream as one batch (command GetPriceBatch)
//	CheckoutAPI         POST /api/checkout behind an httpcommand.Guard that admits 15 requests a second: a third are refused, 429 with a Retry-After
//	CheckoutClient      its callers' httpcommand.Transport, which retries a refused request after the Retry-After, not on its own backoff
//
// Flags:
//
//	-addr      where to listen (default 127.0.0.1:8080)
//	-duration  stop after this long and exit 0 (default: run until interrupted)
//	-refresh   how often the table is drawn (default 1s; 0 draws none)
//	-hystrix-properties FILE
//	           Hystrix's properties (package hystrixprops) that configure the
//	           commands over their code, as a Java service's Archaius or Spring
//	           file does, read again each second the file has changed:
//	           hystrix.command.GetUser.circuitBreaker.forceOpen=true opens
//	           GetUser's circuit on the dashboard, and taking it out closes it
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/rxhystrix/rxhystrix/command"
	"github.com/rxhystrix/rxhystrix/examples/internal/cmdline"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := demoMain(ctx, os.Args[1:], os.Stdout, os.Stderr, command.DefaultRegistry)
	stop()
	os.Exit(code)
}

// demoMain runs the demo with the command-line arguments args until ctx
// ends or the -duration has passed, with the commands of reg, and returns
// the exit code: 0 when it stopped as asked, 2 for bad flags, 1 when it
// could not serve.
func demoMain(ctx context.Context, args []string, stdout, stderr io.Writer, reg *command.Registry) int {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:8080", "`host:port` to listen on; a free port of the host if that one is taken")
	duration := fs.Duration("duration", 0, "stop after this long and exit 0 (0: run until interrupted)")
	refresh := fs.Duration("refresh", time.Second, "how often the table of the commands is drawn (0: none)")
	properties := fs.String("hystrix-properties", "", "a `file` of Hystrix's properties (hystrix.command.GetUser.circuitBreaker.forceOpen=true, ...) that configure the commands, read again when it changes")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if err := cmdline.NoArguments(fs); err != nil {
		fmt.Fprintf(stderr, "demo: %v\n", err)
		fs.Usage()
		return 2
	}
	if *duration < 0 {
		fmt.Fprintf(stderr, "demo: -duration %v is negative\n", *duration)
		return 2
	}
	if *refresh < 0 {
		fmt.Fprintf(stderr, "demo: -refresh %v is negative\n", *refresh)
		return 2
	}

	ln, fellBack, err := listen(*addr)
	if err != nil {
		fmt.Fprintln(stderr, "demo:", err)
		return 1
	}
	if fellBack {
		fmt.Fprintf(stdout, "%s is taken; listening on %s instead\n", *addr, ln.Addr())
	}
	if *duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *duration)
		defer cancel()
	}
	sc := defaultScenario
	sc.properties = *properties
	if err := run(ctx, ln, reg, sc, stdout, displayFor(stdout, *refresh)); err != nil {
		fmt.Fprintln(stderr, "demo:", err)
		return 1
	}
	return 0
}

// listen listens on addr. When addr's port is taken, it listens on a free
// port of the same host instead and reports that it fell back.
func listen(addr string) (ln net.Listener, fellBack bool, err error) {
	ln, err = net.Listen("tcp", addr)
	if err == nil || !errors.Is(err, syscall.EADDRINUSE) {
		return ln, false, err
	}
	host, _, splitErr := net.SplitHostPort(addr)
	if splitErr != nil {
		return nil, false, err
	}
	ln, err = net.Listen("tcp", net.JoinHostPort(host, "0"))
	return ln, err == nil, err
}

// stopTimeout bounds the server's graceful shutdown.
const stopTimeout = 5 * time.Second
