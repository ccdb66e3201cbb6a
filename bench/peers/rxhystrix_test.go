package peers

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rxhystrix/rxhystrix/breaker"
	"github.com/rxhystrix/rxhystrix/command"
)

// rxhystrixRuns numbers the command keys: commands with the same key share
// a breaker, metrics and isolation, so every run takes a key of its own.
var rxhystrixRuns atomic.Int64

// rxhystrixShort reports whether err is a short-circuit.
func rxhystrixShort(err error) bool { return errors.Is(err, command.ErrShortCircuited) }

// rxhystrixRow builds a row whose command is configured by config for
// callers callers; observe selects ToObservable(...).First over Execute.
func rxhystrixRow(name string, config func(key string, callers int) command.Config, observe, failingOnly bool) row {
	return row{
		name:        name,
		failingOnly: failingOnly,
		prepare: func(_ testing.TB, callers int, w work) func() error {
			key := fmt.Sprintf("peers-%s-%d", name, rxhystrixRuns.Add(1))
			run := func(ctx context.Context, _ int) (int, error) { return w(ctx) }
			cmd := command.New(key, run, command.WithConfig(config(key, callers)))
			ctx := context.Background()
			if observe {
				return func() error { return checkValue(cmd.ToObservable(ctx, 0).First(ctx)) }
			}
			return func() error { return checkValue(cmd.Execute(ctx, 0)) }
		},
		shortCircuited: rxhystrixShort,
	}
}

// semaphore returns a semaphore-isolated configuration with timeout
// (negative: none) that admits callers concurrent executions.
func semaphore(timeout time.Duration) func(string, int) command.Config {
	return func(_ string, callers int) command.Config {
		return command.Config{
			Isolation:             command.SemaphoreIsolation,
			Timeout:               timeout,
			MaxConcurrentRequests: callers,
		}
	}
}

// pool returns a pool-isolated configuration with timeout (negative:
// none) whose pool has a worker for each of callers callers.
func pool(timeout time.Duration) func(string, int) command.Config {
	return func(key string, callers int) command.Config {
		command.ConfigurePool(key, command.PoolConfig{CoreSize: callers})
		return command.Config{Pool: key, Isolation: command.PoolIsolation, Timeout: timeout}
	}
}

func init() {
	ourRows = append(ourRows,
		rxhystrixRow("rxhystrix-semaphore", semaphore(-1), false, false),
		rxhystrixRow("rxhystrix-semaphore-timeout", semaphore(time.Second), false, false),
		// CoreSize slots for as many callers, and no queue: a slot is free
		// again before its caller gets the result. With hystrix-go's
		// default 1 s timeout, and without one, as cep21-go runs.
		rxhystrixRow("rxhystrix-pool", pool(time.Second), false, false),
		rxhystrixRow("rxhystrix-pool-no-timeout", pool(-1), false, false),
		rxhystrixRow("rxhystrix-observable", semaphore(-1), true, false),
		rxhystrixRow("rxhystrix-forced-open", func(key string, callers int) command.Config {
			cfg := semaphore(-1)(key, callers)
			cfg.Breaker = breaker.Config{ForceOpen: true}
			return cfg
		}, false, true),
	)
}
