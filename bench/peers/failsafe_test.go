package peers

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/failsafe-go/failsafe-go"
	"github.com/failsafe-go/failsafe-go/circuitbreaker"
	"github.com/failsafe-go/failsafe-go/hedgepolicy"
	"github.com/failsafe-go/failsafe-go/ratelimiter"
	"github.com/failsafe-go/failsafe-go/retrypolicy"
	"github.com/failsafe-go/failsafe-go/timeout"
)

// failsafeOpen reports whether err is failsafe-go's open-breaker error.
func failsafeOpen(err error) bool { return errors.Is(err, circuitbreaker.ErrOpen) }

// failsafeRowWith builds a row that runs the work through an executor of
// the policies policies returns, outermost first.
func failsafeRowWith(name string, policies func() []failsafe.Policy[int]) row {
	return row{
		name: name,
		prepare: func(_ testing.TB, _ int, w work) func() error {
			exec := failsafe.With(policies()...).WithContext(context.Background())
			run := func(e failsafe.Execution[int]) (int, error) { return w(e.Context()) }
			return func() error { return checkValue(exec.GetWithExecution(run)) }
		},
		shortCircuited: failsafeOpen,
	}
}

// failsafeRow is a default failsafe-go circuit breaker: it opens on the
// first failure and stays open a minute.
func failsafeRow() row {
	return failsafeRowWith("failsafe-cb", func() []failsafe.Policy[int] {
		return []failsafe.Policy[int]{circuitbreaker.NewWithDefaults[int]()}
	})
}

// failsafeTimeoutRow puts a 1 s timeout policy inside the default breaker,
// so a timeout counts as a breaker failure, as in Hystrix.
func failsafeTimeoutRow() row {
	return failsafeRowWith("failsafe-cb-timeout", func() []failsafe.Policy[int] {
		return []failsafe.Policy[int]{circuitbreaker.NewWithDefaults[int](), timeout.New[int](time.Second)}
	})
}

// failsafeRetryRow is failsafe-go's default retry policy (three attempts)
// inside the default breaker: on passing work, no retry happens.
func failsafeRetryRow() row {
	r := failsafeRowWith("failsafe-retry", func() []failsafe.Policy[int] {
		return []failsafe.Policy[int]{circuitbreaker.NewWithDefaults[int](), retrypolicy.NewWithDefaults[int]()}
	})
	r.passingOnly = true
	return r
}

// failsafeHedgeRow is a hedge policy whose 1 s delay is never reached,
// inside the default breaker.
func failsafeHedgeRow() row {
	return failsafeRowWith("failsafe-hedge", func() []failsafe.Policy[int] {
		return []failsafe.Policy[int]{circuitbreaker.NewWithDefaults[int](), hedgepolicy.NewWithDelay[int](time.Second)}
	})
}

// failsafeRateLimitRow is a bursty rate limiter that always admits (a
// billion executions a second), inside the default breaker.
func failsafeRateLimitRow() row {
	return failsafeRowWith("failsafe-ratelimit", func() []failsafe.Policy[int] {
		return []failsafe.Policy[int]{circuitbreaker.NewWithDefaults[int](), ratelimiter.NewBursty[int](1e9, time.Second)}
	})
}
