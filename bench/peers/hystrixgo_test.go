package peers

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/afex/hystrix-go/hystrix"
)

// hystrixGoRuns numbers hystrix-go's circuits: its registry is global, so
// every run takes a name of its own.
var hystrixGoRuns atomic.Int64

// hystrixGoRow runs the work with hystrix.Do and default settings, except
// MaxConcurrentRequests, which is 100000 as in cep21's harness: hystrix-go
// hands tickets back on another goroutine, so a limit of exactly the
// number of callers still rejects calls.
func hystrixGoRow() row {
	return row{
		name: "hystrix-go",
		prepare: func(_ testing.TB, _ int, w work) func() error {
			name := fmt.Sprintf("peers-hystrix-go-%d", hystrixGoRuns.Add(1))
			hystrix.ConfigureCommand(name, hystrix.CommandConfig{MaxConcurrentRequests: 100000})
			ctx := context.Background()
			run := func() error {
				_, err := w(ctx)
				return err
			}
			return func() error { return hystrix.Do(name, run, nil) }
		},
		shortCircuited: func(err error) bool { return errors.Is(err, hystrix.ErrCircuitOpen) },
	}
}
