package peers

import (
	"context"
	"testing"
)

// directRow calls the work itself: the floor every other row is above.
func directRow() row {
	return row{
		name: "direct",
		prepare: func(_ testing.TB, _ int, w work) func() error {
			ctx := context.Background()
			return func() error { return checkValue(w(ctx)) }
		},
	}
}
