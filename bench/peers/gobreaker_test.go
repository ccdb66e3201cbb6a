package peers

import (
	"context"
	"errors"
	"testing"

	"github.com/sony/gobreaker/v2"
)

// gobreakerRow runs the work with a gobreaker.CircuitBreaker[int] made
// from the zero Settings: it trips after more than 5 consecutive failures
// and stays open 60 s.
func gobreakerRow() row {
	return row{
		name: "gobreaker",
		prepare: func(_ testing.TB, _ int, w work) func() error {
			cb := gobreaker.NewCircuitBreaker[int](gobreaker.Settings{})
			ctx := context.Background()
			run := func() (int, error) { return w(ctx) }
			return func() error { return checkValue(cb.Execute(run)) }
		},
		shortCircuited: func(err error) bool {
			return errors.Is(err, gobreaker.ErrOpenState) || errors.Is(err, gobreaker.ErrTooManyRequests)
		},
	}
}
