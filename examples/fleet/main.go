// Fleet shows seed 004's service, many instances behind one downstream,
// with its breakers judging on the fleet's health through Redis (package
// fleet). Three instances run in this process, each with its own
// registry, Redis client and fleet membership, as three processes would:
// two busy ones and a quiet one that sends a request every few hundred
// milliseconds, far under the breaker's volume threshold. When the
// downstream dies, the busy instances' failures open every breaker of the
// fleet, the quiet instance's too, and the quiet instance stops sending
// requests into the dead downstream; a fourth, quiet instance with the
// local breaker only, for comparison, keeps sending them. When the
// downstream comes back, each breaker lets its own trial through and
// closes.
//
// The program uses the Redis at REDIS_ADDR (host:port) when it is set,
// and otherwise starts a redis-server of its own on a free loopback port
// (Debian's redis-server package), which it stops at the end.
//
//	go run ./examples/fleet
//	REDIS_ADDR=127.0.0.1:6379 go run ./examples/fleet -phase 1s
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/rxhystrix/rxhystrix/examples/internal/cmdline"
)

// options shape the run.
type options struct {
	Phase     time.Duration // the downstream is up for Phase/2, down for 2*Phase, up again for 2*Phase
	RedisAddr string        // the Redis to use; "" starts one
}

func main() {
	opts := options{RedisAddr: os.Getenv("REDIS_ADDR")}
	flag.DurationVar(&opts.Phase, "phase", 2*time.Second, "the users service is up for phase/2, down for 2*phase, then up again for 2*phase")
	cmdline.Parse()
	if err := run(os.Stdout, opts); err != nil {
		fmt.Fprintln(os.Stderr, "fleet:", err)
		os.Exit(1)
	}
}
