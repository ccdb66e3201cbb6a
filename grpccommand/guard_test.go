package grpccommand

import (
	"context"
	"errors"
	"io"
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

	"github.com/rxhystrix/rxhystrix/breaker"
	"github.com/rxhystrix/rxhystrix/command"
	"github.com/rxhystrix/rxhystrix/internal/registrytest"
)

// guardHarness is a Guard on a registry of its own on a manual clock.
type guardHarness struct {
	*registrytest.Registry
	guard *Guard
}

func newGuardHarness(t *testing.T, cfg command.Config) *guardHarness {
	t.Helper()
	g := &guardHarness{Registry: registrytest.New(t, t0)}
	g.guard = &Guard{Registry: g.Registry.Registry, Config: func(string) command.Config { return cfg }}
	return g
}

// call makes one unary call of unaryCall through the guard.
func (g *guardHarness) call(handler grpc.UnaryHandler) (any, error) {
	return g.guard.Unary(context.Background(), "request", &grpc.UnaryServerInfo{FullMethod: unaryCall}, handler)
}

func answer(resp any, err error) grpc.UnaryHandler {
	return func(context.Context, any) (any, error) { return resp, err }
}

func TestGuardRefusesCallsBeyondItsPermits(t *testing.T) {
	g := newGuardHarness(t, command.Config{MaxConcurrentRequests: 1})
	entered, release := make(chan struct{}), make(chan struct{})
	var calls atomic.Int32
	blocking := func(_ context.Context, req any) (any, error) {
		calls.Add(1)
		close(entered)
		<-release
		return "reply to " + req.(string), nil
	}
	first := make(chan any)
	go func() {
		resp, _ := g.call(blocking)
		first <- resp
	}()
	<-entered

	_, err := g.call(blocking)
	assert.Equal(t, codes.Unavailable, status.Code(err))
	assert.ErrorIs(t, err, command.ErrSemaphoreRejected)
	close(release)
	assert.Equal(t, "reply to request", <-first)
	assert.Equal(t, int32(1), calls.Load(), "a refused call never reaches the handler")
	assert.Equal(t, "[SUCCESS: 1, SEMAPHORE_REJECTED: 1, FALLBACK_MISSING: 1, EXCEPTION_THROWN: 1]", g.Events(DefaultGuardKey))
}

func TestGuardReturnsTheHandlersOwnAnswer(t *testing.T) {
	unavailable := status.Error(codes.Unavailable, "down")
	notFound := status.Error(codes.NotFound, "no such user")
	plain := errors.New("no status")
	for _, tc := range []struct {
		name    string
		failure []codes.Code
		err     error
		events  string
	}{
		{"success", nil, nil, "[SUCCESS: 1]"},
		{"failure code", nil, unavailable, "[FAILURE: 1, FALLBACK_MISSING: 1, EXCEPTION_THROWN: 1]"},
		{"other code", nil, notFound, "[BAD_REQUEST: 1, EXCEPTION_THROWN: 1]"},
		{"no status", nil, plain, "[FAILURE: 1, FALLBACK_MISSING: 1, EXCEPTION_THROWN: 1]"},
		{"own failure codes", []codes.Code{codes.NotFound}, notFound, "[FAILURE: 1, FALLBACK_MISSING: 1, EXCEPTION_THROWN: 1]"},
		{"not in own failure codes", []codes.Code{codes.NotFound}, unavailable, "[BAD_REQUEST: 1, EXCEPTION_THROWN: 1]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newGuardHarness(t, command.Config{})
			g.guard.FailureCodes = tc.failure
			resp, err := g.call(answer("reply", tc.err))
			if tc.err == nil {
				assert.NoError(t, err)
				assert.Equal(t, "reply", resp)
			} else {
				assert.Same(t, tc.err, err, "the handler's error, as it returned it") //nolint:testifylint // identity
				assert.Nil(t, resp)
			}
			assert.Equal(t, tc.events, g.Events(DefaultGuardKey))
		})
	}
}

func TestGuardTimeoutIsDeadlineExceeded(t *testing.T) {
	g := newGuardHarness(t, command.Config{Timeout: 300 * time.Millisecond})
	entered := make(chan struct{})
	late := func(ctx context.Context, _ any) (any, error) {
		close(entered)
		<-ctx.Done()
		return "too late", nil
	}
	done := make(chan error)
	go func() {
		_, err := g.call(late)
		done <- err
	}()
	<-entered
	g.Clock.Advance(300 * time.Millisecond)
	err := <-done
	assert.Equal(t, codes.DeadlineExceeded, status.Code(err), "the command's outcome, not the handler's late reply")
	assert.ErrorIs(t, err, command.ErrTimeout)
	assert.Equal(t, "[TIMEOUT: 1, FALLBACK_MISSING: 1, EXCEPTION_THROWN: 1]", g.Events(DefaultGuardKey))
}

func TestGuardRateLimitAndShortCircuitAreUnavailable(t *testing.T) {
	g := newGuardHarness(t, command.Config{RateLimit: command.RateLimitConfig{Enabled: true, Rate: 1, Burst: 1}})
	_, err := g.call(answer("reply", nil))
	require.NoError(t, err)
	_, err = g.call(answer("reply", nil))
	assert.Equal(t, codes.Unavailable, status.Code(err))
	assert.ErrorIs(t, err, command.ErrRateLimited)

	g = newGuardHarness(t, command.Config{Breaker: breaker.Config{ForceOpen: true}})
	g.guard.CircuitBreaker = true
	var calls atomic.Int32
	_, err = g.call(func(context.Context, any) (any, error) { calls.Add(1); return nil, nil })
	assert.Equal(t, codes.Unavailable, status.Code(err))
	assert.ErrorIs(t, err, command.ErrShortCircuited)
	assert.Zero(t, calls.Load())

	g = newGuardHarness(t, command.Config{Breaker: breaker.Config{ForceOpen: true}})
	_, err = g.call(func(context.Context, any) (any, error) { calls.Add(1); return nil, nil })
	assert.NoError(t, err, "the breaker is off without CircuitBreaker")
	assert.Equal(t, int32(1), calls.Load())
}

func TestGuardRaisesTheHandlersPanicAgain(t *testing.T) {
	g := newGuardHarness(t, command.Config{})
	assert.PanicsWithValue(t, "boom", func() {
		_, _ = g.call(func(context.Context, any) (any, error) { panic("boom") })
	})
	assert.Equal(t, "[FAILURE: 1, FALLBACK_MISSING: 1, EXCEPTION_THROWN: 1]", g.Events(DefaultGuardKey))
}

func TestGuardBadInputIsInternal(t *testing.T) {
	g := newGuardHarness(t, command.Config{})
	g.guard.Key = func(context.Context, string) string { return "" }
	_, err := g.call(answer("reply", nil))
	assert.Equal(t, codes.Internal, status.Code(err))
	assert.ErrorIs(t, err, command.ErrInvalidKey)
	assert.EqualError(t, err, `grpccommand: Guard: the key of `+unaryCall+` is "": invalid key`)

	g = newGuardHarness(t, command.Config{Timeout: 0, MaxConcurrentRequests: -1})
	_, err = g.call(answer("reply", nil))
	assert.Equal(t, codes.Internal, status.Code(err))
	assert.ErrorIs(t, err, command.ErrInvalidConfig)
	assert.ErrorContains(t, err, `grpccommand: Guard: config of "grpc-server": command: Config.MaxConcurrentRequests`)

	for _, cs := range [][]codes.Code{{}, {codes.OK}} {
		g = newGuardHarness(t, command.Config{})
		g.guard.FailureCodes = cs
		_, err = g.call(answer("reply", nil))
		assert.Equal(t, codes.Internal, status.Code(err))
		assert.ErrorContains(t, err, "grpccommand: Guard.FailureCodes: ")
	}
}

// Under pool isolation the handler runs on a worker, and the
// interceptor returns only once it has, even past the timeout.
func TestGuardPoolIsolationWaitsForTheHandler(t *testing.T) {
	g := newGuardHarness(t, command.Config{Isolation: command.PoolIsolation, Timeout: 300 * time.Millisecond})
	entered, release := make(chan struct{}), make(chan struct{})
	var returned atomic.Bool
	h := func(context.Context, any) (any, error) {
		close(entered)
		<-release
		returned.Store(true)
		return "reply", nil
	}
	done := make(chan error)
	go func() {
		_, err := g.call(h)
		assert.True(t, returned.Load(), "the interceptor returned after the handler")
		done <- err
	}()
	<-entered
	g.Clock.Advance(300 * time.Millisecond)
	<-g.TimedOut
	close(release)
	assert.Equal(t, codes.DeadlineExceeded, status.Code(<-done))
}

// streamer is a TestService whose FullDuplexCall echoes every message.
type streamer struct{ backend }

func (s *streamer) FullDuplexCall(stream testgrpc.TestService_FullDuplexCallServer) error {
	for {
		req, err := stream.Recv()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := stream.Send(&testgrpc.StreamingOutputCallResponse{Payload: req.GetPayload()}); err != nil {
			return err
		}
	}
}

// A guarded server's refusal reaches a guarded client as a failure of
// the server, over a real connection; streams are guarded too.
func TestGuardOverAConnection(t *testing.T) {
	g := newGuardHarness(t, command.Config{MaxConcurrentRequests: 1})
	entered, release := make(chan struct{}), make(chan struct{})
	svc := &streamer{}
	svc.unary = func(context.Context, *testgrpc.SimpleRequest) (*testgrpc.SimpleResponse, error) {
		close(entered)
		<-release
		return &testgrpc.SimpleResponse{Hostname: "served"}, nil
	}
	h := newHarness(t)
	client := testgrpc.NewTestServiceClient(dial(t, "guarded", svc,
		[]grpc.ServerOption{grpc.UnaryInterceptor(g.guard.Unary), grpc.StreamInterceptor(g.guard.Stream)},
		grpc.WithUnaryInterceptor(h.interceptor)))

	first := make(chan string)
	go func() {
		resp, err := client.UnaryCall(context.Background(), request("a"))
		assert.NoError(t, err)
		first <- resp.GetHostname()
	}()
	<-entered
	_, err := client.UnaryCall(context.Background(), request("b"))
	assert.Equal(t, codes.Unavailable, status.Code(err))
	assert.ErrorContains(t, err, "could not acquire a semaphore")
	stream, err := client.FullDuplexCall(context.Background())
	require.NoError(t, err)
	_, err = stream.Recv()
	assert.Equal(t, codes.Unavailable, status.Code(err), "the stream is refused too: one permit for the server")
	close(release)
	assert.Equal(t, "served", <-first)

	stream, err = client.FullDuplexCall(context.Background())
	require.NoError(t, err)
	echoes(t, stream, "hi")
	require.NoError(t, stream.CloseSend())
	_, err = stream.Recv()
	assert.Equal(t, io.EOF, err)

	assert.Equal(t, "[SUCCESS: 2, SEMAPHORE_REJECTED: 2, FALLBACK_MISSING: 2, EXCEPTION_THROWN: 2]", g.Events(DefaultGuardKey))
	assert.Equal(t, "[SUCCESS: 1, FAILURE: 1, FALLBACK_MISSING: 1, EXCEPTION_THROWN: 1]",
		h.events("guarded"+unaryCall).String(), "the client counts the server's refusal against it")
}

// A health check reaches a server whose permits are all taken, unary or
// as a stream.
func TestGuardBypass(t *testing.T) {
	g := newGuardHarness(t, command.Config{MaxConcurrentRequests: 1})
	const health = "/grpc.health.v1.Health/Check"
	g.guard.Bypass = func(_ context.Context, method string) bool { return method == health }
	entered, release := make(chan struct{}), make(chan struct{})
	first := make(chan error)
	go func() {
		_, err := g.call(func(context.Context, any) (any, error) {
			close(entered)
			<-release
			return "reply", nil
		})
		first <- err
	}()
	<-entered
	_, err := g.call(answer("reply", nil))
	assert.Equal(t, codes.Unavailable, status.Code(err))

	resp, err := g.guard.Unary(context.Background(), "request", &grpc.UnaryServerInfo{FullMethod: health},
		func(ctx context.Context, _ any) (any, error) {
			_, hasDeadline := ctx.Deadline()
			return hasDeadline, nil
		})
	require.NoError(t, err)
	assert.Equal(t, false, resp, "under no timeout")
	var streamed bool
	require.NoError(t, g.guard.Stream(nil, fakeServerStream{}, &grpc.StreamServerInfo{FullMethod: health},
		func(any, grpc.ServerStream) error { streamed = true; return nil }))
	assert.True(t, streamed)

	close(release)
	require.NoError(t, <-first)
	assert.Equal(t, "[SUCCESS: 1, SEMAPHORE_REJECTED: 1, FALLBACK_MISSING: 1, EXCEPTION_THROWN: 1]", g.Events(DefaultGuardKey),
		"the health checks are in no key's counts")
}

// fakeServerStream is a server stream of no connection.
type fakeServerStream struct{ grpc.ServerStream }

func (fakeServerStream) Context() context.Context { return context.Background() }

// A guard's partitions keep live calls served while batch calls hold the
// permits: the partition comes from the call's metadata, and the
// handler's context names it.
func TestGuardPartitions(t *testing.T) {
	g := newGuardHarness(t, command.Config{MaxConcurrentRequests: 1,
		Partitions: []command.Partition{{Name: "live", Share: 0.5}, {Name: "batch", Share: 0.5}}})
	g.guard.Partition = func(ctx context.Context, method string) string {
		md, _ := metadata.FromIncomingContext(ctx)
		if p := md.Get("priority"); len(p) == 1 {
			return p[0]
		}
		return ""
	}
	call := func(priority string, handler grpc.UnaryHandler) (any, error) {
		ctx := metadata.NewIncomingContext(context.Background(), metadata.Pairs("priority", priority))
		return g.guard.Unary(ctx, "request", &grpc.UnaryServerInfo{FullMethod: unaryCall}, handler)
	}
	entered, release := make(chan struct{}), make(chan struct{})
	first := make(chan error)
	go func() {
		_, err := call("batch", func(context.Context, any) (any, error) {
			close(entered)
			<-release
			return "reply", nil
		})
		first <- err
	}()
	<-entered

	_, err := call("batch", answer("reply", nil))
	assert.ErrorIs(t, err, command.ErrSemaphoreRejected, "batch holds its guarantee")
	resp, err := call("live", func(ctx context.Context, _ any) (any, error) { return command.PartitionFrom(ctx), nil })
	require.NoError(t, err, "live is guaranteed a permit")
	assert.Equal(t, "live", resp)
	close(release)
	require.NoError(t, <-first)
	assert.Equal(t, "[SUCCESS: 2, SEMAPHORE_REJECTED: 1, FALLBACK_MISSING: 1, EXCEPTION_THROWN: 1]", g.Events(DefaultGuardKey))
}

// A guarded stream runs under the guard's timeout (Guard.Stream: "the
// stream's Context is the execution's, which the command's timeout
// cancels"): a handler that reads and answers with the stream's
// RecvMsg and SendMsg, as generated handlers do, is stopped there, and
// does not go on serving, its permit held, for as long as its client
// sends.
func TestGuardStreamTimeoutEndsAStreamThatGoesOn(t *testing.T) {
	g := newGuardHarness(t, command.Config{Timeout: 300 * time.Millisecond, MaxConcurrentRequests: 1})
	svc := &streamer{}
	client := testgrpc.NewTestServiceClient(dial(t, "guarded", svc,
		[]grpc.ServerOption{grpc.StreamInterceptor(g.guard.Stream)}))
	stream, err := client.FullDuplexCall(context.Background())
	require.NoError(t, err)
	echoes(t, stream, "hi")
	g.Clock.Advance(300 * time.Millisecond)
	require.NoError(t, stream.Send(&testgrpc.StreamingOutputCallRequest{Payload: &testgrpc.Payload{Body: []byte("late")}}))
	_, err = stream.Recv()
	assert.Equal(t, codes.DeadlineExceeded, status.Code(err), "the stream ends at the guard's timeout")
	assert.ErrorContains(t, err, "timed-out")
	assert.Equal(t, "[TIMEOUT: 1, FALLBACK_MISSING: 1, EXCEPTION_THROWN: 1]", g.Events(DefaultGuardKey))
}
