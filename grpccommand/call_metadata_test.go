package grpccommand

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/rxhystrix/rxhystrix/command"
	"github.com/rxhystrix/rxhystrix/observable"
)

// A caller's grpc.Header and grpc.Trailer are its own once the call has
// returned, as gRPC's own unary calls leave them: an attempt the caller
// left at its timeout, which ends later, does not write them behind its
// back (the race detector says so too).
func TestAnAbandonedAttemptNeverWritesTheCallersMetadata(t *testing.T) {
	h := newHarness(t, WithConfig(func(string) command.Config {
		return command.Config{Timeout: 100 * time.Millisecond}
	}))
	arrived := make(chan struct{})
	finished := make(chan struct{}, 1)
	// Below the command's interceptor: each attempt's invoker.
	attemptEnded := func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		defer func() { finished <- struct{}{} }()
		return invoker(ctx, method, req, reply, cc, opts...)
	}
	client := testgrpc.NewTestServiceClient(dial(t, "slow-md", &backend{unary: func(ctx context.Context, _ *testgrpc.SimpleRequest) (*testgrpc.SimpleResponse, error) {
		_ = grpc.SendHeader(ctx, metadata.Pairs("attempt", "abandoned"))
		close(arrived)
		<-ctx.Done()
		return nil, ctx.Err()
	}}, nil, grpc.WithChainUnaryInterceptor(h.interceptor, attemptEnded)))
	var header, trailer metadata.MD
	errc := make(chan error, 1)
	go func() {
		_, err := client.UnaryCall(context.Background(), request("x"), grpc.Header(&header), grpc.Trailer(&trailer))
		errc <- err
	}()
	<-arrived
	h.clock.Advance(100 * time.Millisecond)
	err := <-errc
	require.ErrorIs(t, err, command.ErrTimeout)
	headerSeen := header // what a caller reads once its call returned
	<-finished           // the abandoned attempt has ended
	assert.Nil(t, headerSeen)
	assert.Nil(t, header, "the abandoned attempt wrote the caller's header after the call returned")
	assert.Nil(t, trailer, "the abandoned attempt wrote the caller's trailer after the call returned")
}

// The header and trailer a caller gets are those of the attempt whose
// answer it got: the hedge that won, not the attempt it cancelled.
func TestTheHedgeThatWinsGivesTheMetadata(t *testing.T) {
	h := newHarness(t, WithConfig(func(string) command.Config {
		return command.Config{Hedge: command.HedgeConfig{MaxHedges: 1, Delay: 50 * time.Millisecond}}
	}))
	var attempts atomic.Int32
	firstArrived := make(chan struct{})
	finished := make(chan struct{}, 2)
	// Below the command's interceptor: each attempt's invoker.
	attemptEnded := func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		defer func() { finished <- struct{}{} }()
		return invoker(ctx, method, req, reply, cc, opts...)
	}
	client := testgrpc.NewTestServiceClient(dial(t, "hedged-md", &backend{unary: func(ctx context.Context, req *testgrpc.SimpleRequest) (*testgrpc.SimpleResponse, error) {
		if attempts.Add(1) == 1 {
			_ = grpc.SendHeader(ctx, metadata.Pairs("attempt", "first"))
			close(firstArrived)
			<-ctx.Done()
			return nil, status.Error(codes.Canceled, "cancelled")
		}
		_ = grpc.SetHeader(ctx, metadata.Pairs("attempt", "second"))
		_ = grpc.SetTrailer(ctx, metadata.Pairs("won", "second"))
		return echo(ctx, req)
	}}, nil, grpc.WithChainUnaryInterceptor(h.interceptor, attemptEnded)))
	var header, trailer metadata.MD
	errc := make(chan error, 1)
	go func() {
		_, err := client.UnaryCall(context.Background(), request("x"), grpc.Header(&header), grpc.Trailer(&trailer))
		errc <- err
	}()
	<-firstArrived
	h.clock.Advance(50 * time.Millisecond)
	require.NoError(t, <-errc)
	<-finished
	<-finished // both attempts have ended
	assert.Equal(t, []string{"second"}, header.Get("attempt"), "the header of the attempt that won")
	assert.Equal(t, []string{"second"}, trailer.Get("won"), "the trailer of the attempt that won")
}

// A call that fails still gives its caller the trailer of the attempt
// whose answer it got, as gRPC does.
func TestAFailedCallGivesItsTrailer(t *testing.T) {
	h := newHarness(t)
	client := h.serve(t, "failing-md", &backend{unary: func(ctx context.Context, _ *testgrpc.SimpleRequest) (*testgrpc.SimpleResponse, error) {
		_ = grpc.SetTrailer(ctx, metadata.Pairs("why", "missing"))
		return nil, status.Error(codes.NotFound, "no such thing")
	}})
	var trailer metadata.MD
	_, err := client.UnaryCall(context.Background(), request("x"), grpc.Trailer(&trailer))
	assert.Equal(t, codes.NotFound, status.Code(err))
	assert.Equal(t, []string{"missing"}, trailer.Get("why"))
}

// gRPC calls a call's grpc.OnFinish once, when the call completes, with
// its status. A call the command retries or hedges is one call to its
// caller: its OnFinish is called once, with what the caller gets, and
// not by each attempt (side by side, for a hedge; after the call
// returned, for an attempt left at a timeout).
func TestOnFinishIsCalledOncePerCall(t *testing.T) {
	h := newHarness(t, WithConfig(func(string) command.Config {
		return command.Config{Retry: command.RetryConfig{MaxAttempts: 3,
			Backoff: observable.Backoff{Initial: time.Hour, Jitter: observable.NoJitter}}}
	}))
	var calls atomic.Int64
	client := h.serve(t, "flaky", &backend{unary: func(ctx context.Context, r *testgrpc.SimpleRequest) (*testgrpc.SimpleResponse, error) {
		if calls.Add(1) < 3 {
			_ = grpc.SetTrailer(ctx, metadata.Pairs(PushbackTrailer, "0"))
			return nil, status.Error(codes.Unavailable, "not yet")
		}
		return echo(ctx, r)
	}})
	var finishes []error
	_, err := client.UnaryCall(context.Background(), request("x"), grpc.OnFinish(func(err error) { finishes = append(finishes, err) }))
	require.NoError(t, err)
	assert.Equal(t, int64(3), calls.Load())
	assert.Equal(t, []error{nil}, finishes, "one call, one OnFinish, with its status")
}

// onFinish returns a grpc.OnFinish option that sends the code of each
// call of its callback on the channel it returns.
func onFinish() (grpc.CallOption, chan codes.Code) {
	ch := make(chan codes.Code, 10)
	return grpc.OnFinish(func(err error) { ch <- status.Code(err) }), ch
}

// finished returns the codes of the calls of an onFinish callback that
// has been called n times.
func finished(t *testing.T, ch chan codes.Code, n int) []codes.Code {
	t.Helper()
	var got []codes.Code
	for range n {
		got = append(got, recv(t, ch, "OnFinish"))
	}
	for {
		select {
		case c := <-ch:
			got = append(got, c)
		default:
			return got
		}
	}
}

// A unary call whose key is invalid completes at once: its OnFinish is
// called, with the error the call returns, as the package says.
func TestOnFinishOfACallWithAnInvalidKey(t *testing.T) {
	h := newHarness(t, WithKey(func(string, string) string { return "" }))
	client := h.serve(t, "users", &backend{unary: echo})
	opt, ch := onFinish()
	_, err := client.UnaryCall(context.Background(), request("x"), opt)
	require.ErrorIs(t, err, command.ErrInvalidKey)
	assert.Equal(t, []codes.Code{codes.Internal}, finished(t, ch, 1))
}
