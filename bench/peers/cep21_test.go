package peers

import (
	"context"
	"testing"
	"time"

	"github.com/cep21/circuit/v4"
	"github.com/cep21/circuit/v4/closers/hystrix"
	"github.com/cep21/circuit/v4/closers/simplelogic"
	"github.com/cep21/circuit/v4/metrics/rolling"
)

// cep21Open reports whether err is cep21/circuit's open-circuit error. It
// asserts the type rather than calling errors.As, which allocates: cep21
// returns its errors unwrapped, and the check must not weigh on the row.
func cep21Open(err error) bool {
	cerr, ok := err.(circuit.Error)
	return ok && cerr.CircuitOpen()
}

// cep21Row builds a row that runs the work through a circuit made from
// config, with Execute or, if useGo, with Go; under a request's context if
// inRequest (see inRequest), else under context.Background.
func cep21Row(name string, config func() circuit.Config, useGo, request bool) row {
	return row{
		name: name,
		prepare: func(_ testing.TB, callers int, w work) func() error {
			cfg := config()
			cfg.Execution.MaxConcurrentRequests = int64(callers)
			var m circuit.Manager
			c := m.MustCreateCircuit(name, cfg)
			run := errOnly(w)
			call := func(ctx context.Context) error { return c.Execute(ctx, run, nil) }
			if useGo {
				call = func(ctx context.Context) error { return c.Go(ctx, run, nil) }
			}
			if request {
				return func() error { return inRequest(call) }
			}
			ctx := context.Background()
			return func() error { return call(ctx) }
		},
		shortCircuited: cep21Open,
	}
}

// cep21MinimalRow is cep21's "Minimal": no timeout, and an opener that
// trips after 10 consecutive errors and never closes.
func cep21MinimalRow() row {
	return cep21Row("cep21-minimal", func() circuit.Config {
		return circuit.Config{
			Execution: circuit.ExecutionConfig{Timeout: -1},
			General: circuit.GeneralConfig{
				ClosedToOpenFactory: simplelogic.ConsecutiveErrOpenerFactory(simplelogic.ConfigConsecutiveErrOpener{}),
			},
		}
	}, false, false)
}

// cep21HystrixRow is cep21's "Hystrix": rolling run and fallback
// statistics, Hystrix's opener and closer with their defaults, and the
// default 1 s timeout.
func cep21HystrixRow() row { return cep21Row("cep21-hystrix", cep21Hystrix, false, false) }

// cep21HystrixRequestRow is cep21-hystrix called under a request's
// context.
func cep21HystrixRequestRow() row {
	return cep21Row("cep21-hystrix-request", cep21Hystrix, false, true)
}

func cep21Hystrix() circuit.Config {
	var stats rolling.StatFactory
	cfg := stats.CreateConfig("")
	var closers hystrix.Factory
	cfg.Merge(closers.Configure(""))
	cfg.Merge(circuit.Config{Execution: circuit.ExecutionConfig{Timeout: time.Second}})
	return cfg
}

// cep21GoRow is cep21's "UseGo": each call runs on a new goroutine, no
// timeout, and no opener, so the circuit never opens.
func cep21GoRow() row {
	return cep21Row("cep21-go", func() circuit.Config {
		return circuit.Config{Execution: circuit.ExecutionConfig{Timeout: -1}}
	}, true, false)
}

// cep21GoTimeoutRow is cep21-go with a 1 s timeout: the configuration of
// the pool-isolated rows of rxhystrix and hystrix-go.
func cep21GoTimeoutRow() row { return cep21Row("cep21-go-timeout", cep21GoTimeout, true, false) }

// cep21GoTimeoutRequestRow is cep21-go-timeout called under a request's
// context.
func cep21GoTimeoutRequestRow() row {
	return cep21Row("cep21-go-timeout-request", cep21GoTimeout, true, true)
}

func cep21GoTimeout() circuit.Config {
	return circuit.Config{Execution: circuit.ExecutionConfig{Timeout: time.Second}}
}
