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
	client := h.serve(t, "slow-md", &backend{unary: func(ctx context.Context, _ *testgrpc.SimpleRequest) (*testgrpc.SimpleResponse, error) {
		_ = grpc.SendHeader(ctx, metadata.Pairs("attempt", "abandoned"))
		close(arrived)
		<-ctx.Done()
		return nil, ctx.Err()
	}})
	var header, trailer metadata.MD
	finished := make(chan struct{}, 1)
	errc := make(chan error, 1)
	go func() {
		_, err := client.UnaryCall(context.Background(), request("x"),
			grpc.Header(&header), grpc.Trailer(&trailer), grpc.OnFinish(func(error) { finished <- struct{}{} }))
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
	client := h.serve(t, "hedged-md", &backend{unary: func(ctx context.Context, req *testgrpc.SimpleRequest) (*testgrpc.SimpleResponse, error) {
		if attempts.Add(1) == 1 {
			_ = grpc.SendHeader(ctx, metadata.Pairs("attempt", "first"))
			close(firstArrived)
			<-ctx.Done()
			return nil, status.Error(codes.Canceled, "cancelled")
		}
		_ = grpc.SetHeader(ctx, metadata.Pairs("attempt", "second"))
		_ = grpc.SetTrailer(ctx, metadata.Pairs("won", "second"))
		return echo(ctx, req)
	}})
	var header, trailer metadata.MD
	finished := make(chan struct{}, 2)
	errc := make(chan error, 1)
	go func() {
		_, err := client.UnaryCall(context.Background(), request("x"),
			grpc.Header(&header), grpc.Trailer(&trailer), grpc.OnFinish(func(error) { finished <- struct{}{} }))
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
