package label_test

import (
	"fmt"

	"github.com/rxhystrix/rxhystrix/internal/label"
)

// A key that is valid UTF-8 is its own label value; one that is not is
// escaped, as is one that could pass for an escaped key.
func ExampleValue() {
	fmt.Println(label.Value("GetUser"))
	fmt.Println(label.Value("bad-\xff"))
	fmt.Println(label.Value(`bad-\xff`))
	// Output:
	// GetUser
	// bad-\xff
	// bad-\\xff
}
