package rolling_test

import (
	"fmt"
	"time"

	"github.com/rxhystrix/rxhystrix/hystrixgo/rolling"
)

func ExampleNumber() {
	n := rolling.NewNumber()
	n.Increment(3)
	n.Increment(2)
	fmt.Println(n.Sum(time.Now()), n.Avg(time.Now()))
	// Output: 5 0.5
}
