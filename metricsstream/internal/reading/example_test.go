package reading_test

import (
	"fmt"

	"github.com/rxhystrix/rxhystrix/metricsstream"
	"github.com/rxhystrix/rxhystrix/metricsstream/internal/reading"
)

// Both exporters name a command's group alike, and count the same event
// types.
func Example() {
	s := metricsstream.CommandSnapshot{Key: "GetUser"}
	fmt.Println(reading.Group(s))
	n := 0
	for range reading.EventTypes() {
		n++
	}
	fmt.Println(n == int(metricsstream.NumEventTypes)-1)
	// Output:
	// GetUser
	// true
}
