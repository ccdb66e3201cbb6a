package grpccommand

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rxhystrix/rxhystrix/command"
)

// DefaultFailureCodes are the codes that count as failures unless
// [WithFailureCodes] says otherwise: those that say the server failed or
// refused the load, the codes Envoy's and gRPC's retry policies retry
// on, and Unknown and DataLoss.
var DefaultFailureCodes = []codes.Code{
	codes.Canceled, // by the server or a proxy; the caller's own is CANCELLED
	codes.Unknown,
	codes.DeadlineExceeded,
	codes.ResourceExhausted,
	codes.Internal,
	codes.Unavailable,
	codes.DataLoss,
}

var defaultFailures = newCodeSet(DefaultFailureCodes)

// codeSet is a set of codes, one bit each.
type codeSet uint32

func newCodeSet(cs []codes.Code) codeSet {
	var s codeSet
	for _, c := range cs {
		s |= 1 << c
	}
	return s
}

// failureCodes returns the set of cs as codes of failure, or an error
// saying why they cannot be: no code at all, which would leave the
// breaker nothing to open on, codes.OK, or a code gRPC does not define.
func failureCodes(cs []codes.Code) (codeSet, error) {
	if len(cs) == 0 {
		return 0, errors.New("no code")
	}
	for _, c := range cs {
		if c == codes.OK || c > codes.Unauthenticated {
			return 0, fmt.Errorf("%v is not a code of failure", c)
		}
	}
	return newCodeSet(cs), nil
}

func (s codeSet) has(c codes.Code) bool { return c < 32 && s&(1<<c) != 0 }

// isBad reports whether err is a bad request: it has a code of gRPC's,
// and the code is not in s. An error without a code is a failure.
func (s codeSet) isBad(err error) bool {
	st, ok := status.FromError(err)
	return ok && !s.has(st.Code())
}

// Error is the error of a call that the command ended without the
// server's answer: short-circuited, rejected, rate limited, timed out,
// or failed with no fallback to answer. Its code, which status.Code and
// status.FromError read, says what a gRPC client would expect:
//
//   - a failure the server answered keeps the server's code, and its
//     status's details (status.Status.Details);
//   - a fallback's error with a code of gRPC's keeps that code, and its
//     details;
//   - a timeout is DeadlineExceeded, the caller's cancellation Canceled;
//   - a short circuit or a rejection (pool, semaphore, rate limit) is
//     Unavailable, as a load balancer's open circuit is;
//   - an invalid key or configuration is Internal.
//
// errors.Is and errors.As reach the command's error through Unwrap:
// command.ErrShortCircuited, command.ErrTimeout, a *command.Error.
type Error struct {
	err  error
	code codes.Code
}

// Error returns the command's message.
func (e *Error) Error() string { return e.err.Error() }

// Unwrap returns the command's error.
func (e *Error) Unwrap() error { return e.err }

// GRPCStatus returns the status of the call, for package status: its
// code and the command's message, with the details of the status the
// code is taken from (the server's, or the fallback's error's), if any.
func (e *Error) GRPCStatus() *status.Status {
	if st, ok := statusOf(e.err); ok && st.Code() == e.code {
		p := st.Proto()
		p.Message = e.err.Error()
		return status.FromProto(p)
	}
	return status.New(e.code, e.err.Error())
}

// statusError returns what a call whose command returned err returns:
// the server's own error for a bad request, an *Error otherwise.
func statusError(err error) error {
	if command.IsBadRequest(err) {
		if cause := errors.Unwrap(err); cause != nil {
			return cause // the server's status, as it sent it
		}
		return err
	}
	return &Error{err: err, code: codeOf(err)}
}

// statusOf returns the status a command's err has: its fallback's
// error's, if that has one of gRPC's, or else its own (the server's).
func statusOf(err error) (*status.Status, bool) {
	var cmdErr *command.Error
	if errors.As(err, &cmdErr) && cmdErr.FallbackErr != nil {
		if st, ok := status.FromError(cmdErr.FallbackErr); ok {
			return st, true
		}
	}
	return status.FromError(err)
}

func codeOf(err error) codes.Code {
	if st, ok := statusOf(err); ok {
		return st.Code()
	}
	switch {
	case errors.Is(err, context.Canceled):
		return codes.Canceled
	case errors.Is(err, command.ErrTimeout), errors.Is(err, context.DeadlineExceeded):
		return codes.DeadlineExceeded
	case errors.Is(err, command.ErrShortCircuited),
		errors.Is(err, command.ErrPoolRejected),
		errors.Is(err, command.ErrSemaphoreRejected),
		errors.Is(err, command.ErrFallbackRejected),
		errors.Is(err, command.ErrRateLimited):
		return codes.Unavailable
	}
	return codes.Unknown
}
