package adaptive_test

import (
	"fmt"

	"github.com/rxhystrix/rxhystrix/bench/adaptive"
)

// The configurations compared for the seed's service.
func ExampleRows() {
	for _, r := range adaptive.Rows(adaptive.Variants[0]) {
		fmt.Println(r.Name)
	}
	// Output:
	// fixed 10, 300ms (the seed's pair)
	// fixed 5, 300ms (too small)
	// fixed 100, 1s (too large)
	// adaptive Vegas, defaults
	// adaptive Gradient2, defaults
	// adaptive AIMD, defaults
	// adaptive Vegas, 300ms
	// adaptive Gradient2, 300ms
	// adaptive AIMD, 300ms
}
