package command

import (
	"errors"
	"fmt"
	"runtime/debug"
)

// FailureType says why a command did not produce its value from run, as
// Hystrix's HystrixRuntimeException.FailureType does.
type FailureType int

const (
	// CommandFailure: run returned an error or panicked.
	CommandFailure FailureType = iota
	// TimeoutFailure: run did not finish within the timeout.
	TimeoutFailure
	// ShortCircuitFailure: the circuit breaker was open.
	ShortCircuitFailure
	// PoolRejectedFailure: the worker pool and its queue were full.
	PoolRejectedFailure
	// SemaphoreRejectedFailure: all execution permits were taken.
	SemaphoreRejectedFailure
	// FallbackRejectedFailure: the fallback's permits were all taken.
	FallbackRejectedFailure
	// BadRequestFailure: run reported a bad request (see BadRequest).
	BadRequestFailure
	// RateLimitedFailure: the key's rate limiter had no token in time
	// (see Config.RateLimit). Hystrix has no such failure.
	RateLimitedFailure

	numFailureTypes = iota
)

var failureNames = [...]string{
	CommandFailure:           "COMMAND_EXCEPTION",
	TimeoutFailure:           "TIMEOUT",
	ShortCircuitFailure:      "SHORTCIRCUIT",
	PoolRejectedFailure:      "REJECTED_THREAD_EXECUTION",
	SemaphoreRejectedFailure: "REJECTED_SEMAPHORE_EXECUTION",
	FallbackRejectedFailure:  "REJECTED_SEMAPHORE_FALLBACK",
	BadRequestFailure:        "BAD_REQUEST_EXCEPTION",
	RateLimitedFailure:       "REJECTED_RATE_LIMIT",
}

// String returns Hystrix's name of the failure type.
func (f FailureType) String() string {
	if f >= 0 && int(f) < len(failureNames) {
		return failureNames[f]
	}
	return fmt.Sprintf("FailureType(%d)", int(f))
}

// message is the phrase Hystrix puts after the command key.
func (f FailureType) message() string {
	switch f {
	case CommandFailure:
		return "failed"
	case TimeoutFailure:
		return "timed-out"
	case ShortCircuitFailure:
		return "short-circuited"
	case PoolRejectedFailure:
		return "could not be queued for execution"
	case SemaphoreRejectedFailure:
		return "could not acquire a semaphore for execution"
	case FallbackRejectedFailure:
		return "fallback execution rejected"
	case BadRequestFailure:
		return "bad request"
	case RateLimitedFailure:
		return "was rate limited"
	}
	return "failed"
}

// The sentinels of the failure types, for errors.Is. An *Error matches the
// sentinel of its Failure.
var (
	ErrShortCircuited    = errors.New("hystrix circuit short-circuited and is OPEN")
	ErrTimeout           = errors.New("command timed out")
	ErrPoolRejected      = errors.New("command rejected: pool and queue are full")
	ErrSemaphoreRejected = errors.New("could not acquire a semaphore for execution")
	ErrFallbackRejected  = errors.New("fallback execution rejected")
	// ErrFallbackMissing is the FallbackErr of a command that has no
	// fallback.
	ErrFallbackMissing = errors.New("no fallback available")
	// ErrFallbackDisabled is the FallbackErr of a command whose fallback is
	// disabled by Config.FallbackDisabled.
	ErrFallbackDisabled = errors.New("fallback disabled")
	// ErrBadRequest matches every error made by BadRequest.
	ErrBadRequest = errors.New("bad request")
	// ErrRateLimited is the sentinel of RateLimitedFailure.
	ErrRateLimited = errors.New("command rejected: rate limit reached")
)

func (f FailureType) sentinel() error {
	switch f {
	case TimeoutFailure:
		return ErrTimeout
	case ShortCircuitFailure:
		return ErrShortCircuited
	case PoolRejectedFailure:
		return ErrPoolRejected
	case SemaphoreRejectedFailure:
		return ErrSemaphoreRejected
	case FallbackRejectedFailure:
		return ErrFallbackRejected
	case BadRequestFailure:
		return ErrBadRequest
	case RateLimitedFailure:
		return ErrRateLimited
	}
	return nil
}

// Error is the error of a command that could not produce a value: neither
// run nor the fallback. errors.Is finds the sentinel of its Failure, its
// Cause and its FallbackErr; errors.As finds its Cause's and then its
// FallbackErr's (a fallback's *PanicError, say).
//
// An Error is read-only: one whose Cause is its failure's sentinel (a
// short circuit, a rejection, a timeout) and whose fallback is missing,
// disabled or rejected is made once per key and returned to every such
// execution, and to its hooks, so that an open circuit answers without
// allocating.
type Error struct {
	// Command is the command key.
	Command string
	// Failure says why run did not produce the value.
	Failure FailureType
	// Cause is run's error (for CommandFailure), or the failure's sentinel.
	Cause error
	// FallbackErr is why the fallback did not produce a value:
	// ErrFallbackMissing, ErrFallbackDisabled, ErrFallbackRejected or the
	// fallback's own error.
	FallbackErr error
}

// Error reads like Hystrix's messages: "GetUser timed-out and no fallback
// available", "GetUser short-circuited and fallback failed".
func (e *Error) Error() string {
	var suffix string
	switch {
	case e.Failure == FallbackRejectedFailure:
		return e.Command + " fallback execution rejected"
	// The sentinels themselves, not errors that wrap them: a fallback
	// that failed with another command's *Error (a fallback via another
	// command that had none) ran, and failed.
	case e.FallbackErr == ErrFallbackMissing:
		suffix = " and no fallback available"
	case e.FallbackErr == ErrFallbackDisabled:
		suffix = " and fallback disabled"
	case e.FallbackErr != nil:
		suffix = " and fallback failed: " + e.FallbackErr.Error()
	}
	msg := e.Command + " " + e.Failure.message() + suffix
	if e.Cause != nil && e.Failure == CommandFailure {
		msg += " (cause: " + e.Cause.Error() + ")"
	}
	return msg
}

// Is reports whether target is the sentinel of e's Failure, or is found
// in e's FallbackErr. (Cause is found through Unwrap.)
func (e *Error) Is(target error) bool {
	if s := e.Failure.sentinel(); s != nil && s == target {
		return true
	}
	return e.FallbackErr != nil && errors.Is(e.FallbackErr, target)
}

// As finds target in e's Cause or, when the Cause has none, in its
// FallbackErr, as Is finds a sentinel in either.
func (e *Error) As(target any) bool {
	if e.Cause != nil && errors.As(e.Cause, target) {
		return true
	}
	return e.FallbackErr != nil && errors.As(e.FallbackErr, target)
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Cause }

// BadRequest marks err as the caller's fault: a command whose run returns
// it (or an error wrapping it) records BAD_REQUEST, runs no fallback, does
// not count it in the breaker's health, and returns it as it is. It
// returns nil for a nil err.
func BadRequest(err error) error {
	if err == nil {
		return nil
	}
	return &badRequestError{err: err}
}

type badRequestError struct{ err error }

func (b *badRequestError) Error() string        { return "bad request: " + b.err.Error() }
func (b *badRequestError) Unwrap() error        { return b.err }
func (b *badRequestError) Is(target error) bool { return target == ErrBadRequest }

// IsBadRequest reports whether err is, or wraps, an error made by
// BadRequest (or ErrBadRequest itself).
func IsBadRequest(err error) bool { return errors.Is(err, ErrBadRequest) }

// PanicError is the cause recorded when run or a fallback panics: the
// panic is recovered and counted as a failure.
type PanicError struct {
	// Value is what was passed to panic.
	Value any
	// Stack is the stack of the panicking goroutine.
	Stack []byte
}

// Error returns the panic value.
func (p *PanicError) Error() string { return fmt.Sprintf("panic: %v", p.Value) }

// Unwrap returns the panic value if it is an error.
func (p *PanicError) Unwrap() error {
	if err, ok := p.Value.(error); ok {
		return err
	}
	return nil
}

func newPanicError(v any) *PanicError { return &PanicError{Value: v, Stack: debug.Stack()} }
