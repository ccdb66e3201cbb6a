// Sizing replays seed 004, production experience with Hystrix: how big a
// worker pool and how long a timeout a dependency needs, and what a
// service does when the dependency fails anyway.
//
// Part 1 applies the seed's rule: service A gets 30 requests a second,
// each calls service B, which answers in 200ms, so A needs
// 30 × 0.2 s + 4 spare = 10 workers, and a timeout of 300ms. A's calls
// run in a pool of 10 with a 300ms timeout and, side by side, in a pool of
// 10 with a 500ms timeout; B slows down to 500ms for a while, then
// recovers. With 300ms, every slow call gives its worker back at 300ms:
// the calls time out and are answered by the fallback, but the pool keeps
// up, and recovers the moment B does. With 500ms, each worker is held for
// 500ms, 10 workers serve 20 calls a second, and a third of the calls are
// rejected until B recovers, and a while after.
//
// Part 2 shows the degradations the seed lists: when B is down, reads
// fall back to a local cache of what B last answered, and writes fall back
// to a durable local queue (a file) that is replayed into B once the
// breaker closes again, so no write is lost.
//
//	go run ./examples/sizing
//	go run ./examples/sizing -phase 1s -outage 2s
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"time"

	"github.com/rxhystrix/rxhystrix/examples/internal/cmdline"
)

// options set the lengths of the scenes.
type options struct {
	// Phase is how long each phase of part 1 lasts: B at 200ms, at
	// 500ms, at 200ms again.
	Phase time.Duration
	// Outage is how long B is down in part 2.
	Outage time.Duration
}

func main() {
	var opts options
	flag.DurationVar(&opts.Phase, "phase", 3*time.Second, "length of each phase of part 1")
	flag.DurationVar(&opts.Outage, "outage", 2*time.Second, "how long B is down in part 2 (at least 2s)")
	cmdline.Parse()
	if err := run(os.Stdout, opts); err != nil {
		fmt.Fprintln(os.Stderr, "sizing:", err)
		os.Exit(1)
	}
}

func run(w io.Writer, opts options) error {
	if opts.Phase <= 0 || opts.Outage <= 0 {
		return errors.New("options.Phase and options.Outage must be positive")
	}
	if opts.Outage < minOutage {
		return fmt.Errorf("-outage %v is too short: SaveOrder's breaker opens only after about %v of failed writes, and the queued writes are replayed when it closes again", opts.Outage, minOutage)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute+3*opts.Phase+opts.Outage)
	defer cancel()
	if err := sizing(ctx, w, opts.Phase); err != nil {
		return err
	}
	return degradation(ctx, w, opts.Outage)
}

// minOutage is the shortest outage of part 2 that opens SaveOrder's
// breaker: its window holds the 20 writes of the second B was up, the
// failed writes (20 a second) must outnumber them, and a health snapshot
// must see it. Shorter, the breaker never opens, never closes, and the
// queue waits for a replay that never comes.
const minOutage = 2 * time.Second

// poolSize is the seed's rule: the workers busy at the given rate and
// latency, plus 4 to spare.
func poolSize(perSecond float64, latency time.Duration) int {
	return int(math.Ceil(perSecond*latency.Seconds())) + 4
}

// sleep waits for d, or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
