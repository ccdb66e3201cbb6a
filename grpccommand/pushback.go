package grpccommand

import (
	"context"
	"strconv"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// PushbackTrailer is the trailer by which a server tells a client when to
// retry a call it refused, in milliseconds, or, with a negative number
// or one that is not a number, not to retry it (gRPC's retry design,
// gRFC A6). A trailer of several values is not to retry, as grpc-go's
// retries take it. A [Guard] sends it; the commands of
// [UnaryClientInterceptor] honour it.
const PushbackTrailer = "grpc-retry-pushback-ms"

// pushbackError is a failed call whose server sent PushbackTrailer: the
// server's error, as it sent it, and the word of the trailer, which a
// key's retry policy waits instead of its backoff (observable.Pushback).
type pushbackError struct {
	err  error
	wait time.Duration // negative: do not retry
}

func (e *pushbackError) Error() string { return e.err.Error() }
func (e *pushbackError) Unwrap() error { return e.err }

// GRPCStatus returns the server's status, so that the code and the
// message are the server's.
func (e *pushbackError) GRPCStatus() *status.Status { return status.Convert(e.err) }

// RetryAfter returns the trailer's wait, negative when the server said
// not to retry.
func (e *pushbackError) RetryAfter() (time.Duration, bool) { return e.wait, true }

// maxPushback bounds the wait of a trailer, so that a huge number cannot
// overflow a time.Duration: a century, which no retry policy waits.
const maxPushback = 100 * 365 * 24 * time.Hour

// withPushback returns err with the word of trailer's PushbackTrailer,
// if it has one, and err as it is otherwise.
func withPushback(err error, trailer metadata.MD) error {
	v := trailer.Get(PushbackTrailer)
	if len(v) == 0 {
		return err
	}
	wait := time.Duration(-1)
	if ms, perr := strconv.ParseInt(v[0], 10, 64); len(v) == 1 && perr == nil && ms >= 0 {
		wait = time.Duration(min(ms, maxPushback.Milliseconds())) * time.Millisecond
	}
	return &pushbackError{err: err, wait: wait}
}

// pushBack sets the trailer that tells the client of a refused call to
// retry after d, rounded up to whole milliseconds: on ss for a stream,
// on the call of ctx for a unary call.
func pushBack(ctx context.Context, ss grpc.ServerStream, d time.Duration) {
	md := metadata.Pairs(PushbackTrailer, strconv.FormatInt(int64((d+time.Millisecond-1)/time.Millisecond), 10))
	if ss != nil {
		ss.SetTrailer(md)
		return
	}
	_ = grpc.SetTrailer(ctx, md) // fails only outside a server's call, where no one reads it
}
