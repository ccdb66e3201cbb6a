package peers

import (
	"context"
	"testing"

	"github.com/rxhystrix/rxhystrix/internal/proc"
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
// worker, or the goroutine a Queue or Observe nobody takes over gets).
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

// goRow calls the work itself beside a go statement whose goroutine does
// nothing, yielding once in 16 calls: what a Queue(...).Get or
// Observe(...).First that takes its work over would cost if Queue and
// Observe started a goroutine for every call (observable/starter.go says
// why they do not), with the yield such waiters then had to make.
func goRow() row {
	return row{
		name: "direct-go",
		prepare: func(_ testing.TB, _ int, w work) func() error {
			ctx := context.Background()
			return func() error {
				go func() {}()
				err := checkValue(w(ctx))
				proc.YieldSometimes(16)
				return err
			}
		},
	}
}
