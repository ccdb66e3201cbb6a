package hystrix

import (
	"context"
	"errors"
	"time"

	"github.com/rxhystrix/rxhystrix/command"
	metricCollector "github.com/rxhystrix/rxhystrix/hystrixgo/metric_collector"
)

// kind is how a command ended, as hystrix-go's event types name it.
type kind int32

const (
	kindSuccess kind = iota
	kindFailure
	kindRejected
	kindShortCircuit
	kindTimeout
	kindCanceled
	kindDeadlineExceeded
)

// kindOf returns the kind of a command's error, before any fallback.
func kindOf(err error) kind {
	var e *command.Error
	switch {
	case err == nil:
		return kindSuccess
	case errors.As(err, &e):
		switch e.Failure {
		case command.TimeoutFailure:
			return kindTimeout
		case command.ShortCircuitFailure:
			return kindShortCircuit
		case command.PoolRejectedFailure, command.SemaphoreRejectedFailure, command.FallbackRejectedFailure:
			return kindRejected
		}
		return kindFailure
	case errors.Is(err, context.DeadlineExceeded):
		return kindDeadlineExceeded
	case errors.Is(err, context.Canceled):
		return kindCanceled
	}
	return kindFailure
}

// metricResult is the MetricResult of a command of kind k whose fallback
// ended as fb (0 when none ran).
func metricResult(k kind, fb int32, total, run time.Duration, concurrency float64) metricCollector.MetricResult {
	r := metricCollector.MetricResult{Attempts: 1, TotalDuration: total, RunDuration: run, ConcurrencyInUse: concurrency}
	switch k {
	case kindSuccess:
		r.Successes = 1
	case kindFailure:
		r.Failures, r.Errors = 1, 1
	case kindRejected:
		r.Rejects, r.Errors = 1, 1
	case kindShortCircuit:
		r.ShortCircuits, r.Errors = 1, 1
	case kindTimeout:
		r.Timeouts, r.Errors = 1, 1
	case kindCanceled:
		r.ContextCanceled = 1
	case kindDeadlineExceeded:
		r.ContextDeadlineExceeded = 1
	}
	switch fb {
	case fallbackSucceeded:
		r.FallbackSuccesses = 1
	case fallbackFailed:
		r.FallbackFailures = 1
	}
	return r
}
