package observable

import (
	"errors"
	"fmt"
)

// ErrTimeout is the error of an Observable made by [Observable.Timeout]
// whose source neither emitted nor terminated in time.
var ErrTimeout = errors.New("observable: timed out")

// ErrEmpty is returned by [Observable.First], [Observable.Last] and
// [Future.Get] when the Observable completed without emitting a value.
var ErrEmpty = errors.New("observable: completed without a value")

// ErrInvalidPolicy is found (with errors.Is) in every error of
// [Backoff.Validate], [RetryPolicy.Validate] and [HedgePolicy.Validate],
// and so of the operators that validate their policy. The message names
// the field and its value.
var ErrInvalidPolicy = errors.New("observable: invalid policy")

// invalidPolicy returns the error of a policy field with an impossible
// value: the message is format's, and the error matches ErrInvalidPolicy.
func invalidPolicy(format string, args ...any) error {
	return &policyError{fmt.Sprintf(format, args...)}
}

// policyError is an error of a Validate of this package. It keeps its own
// message, which names the field, rather than put ErrInvalidPolicy's text
// in front of it.
type policyError struct{ msg string }

func (e *policyError) Error() string { return e.msg }
func (e *policyError) Unwrap() error { return ErrInvalidPolicy }
