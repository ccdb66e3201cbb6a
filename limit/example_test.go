package limit_test

import (
	"fmt"
	"time"

	"github.com/rxhystrix/rxhystrix/limit"
)

// A Vegas limit grows while latency holds at its no-load level and
// shrinks when latency rises, which it reads as a queue.
func Example() {
	l, err := limit.New(limit.Vegas{}, 10)
	if err != nil {
		panic(err)
	}
	for i := range 6 {
		rtt := 200 * time.Millisecond
		if i >= 3 {
			rtt = 500 * time.Millisecond
		}
		l.Record(limit.Sample{RTT: rtt, InFlight: l.Limit()})
		fmt.Printf("rtt %v: limit %d\n", rtt, l.Limit())
	}
	// Output:
	// rtt 200ms: limit 10
	// rtt 200ms: limit 16
	// rtt 200ms: limit 22
	// rtt 500ms: limit 21
	// rtt 500ms: limit 20
	// rtt 500ms: limit 19
}
