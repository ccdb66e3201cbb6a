package peers

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	hystrix "github.com/rxhystrix/rxhystrix/hystrixgo"
)

// dropinRuns numbers the names of the drop-in's rows.
var dropinRuns atomic.Int64

// rxhystrixHystrixgoRow is hystrixGoRow with only the import changed: the
// drop-in's Do on rxhystrix's engine, with the same settings.
func rxhystrixHystrixgoRow() row {
	return row{
		name: "rxhystrix-hystrixgo",
		prepare: func(_ testing.TB, _ int, w work) func() error {
			name := fmt.Sprintf("peers-rxhystrix-hystrixgo-%d", dropinRuns.Add(1))
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
