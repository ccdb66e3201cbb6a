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

// handOffRow calls the work on a goroutine of its own and waits for it:
// the floor of every row that hands each call to another goroutine (a pool
// worker, or the goroutine Queue and Observe start so as not to block).
func handOffRow() row {
	return row{
		name: "direct-handoff",
		prepare: func(_ testing.TB, _ int, w work) func() error {
			ctx := context.Background()
			return func() error {
				done := make(chan error, 1)
				go func() { done <- checkValue(w(ctx)) }()
				return <-done
			}
		},
	}
}
