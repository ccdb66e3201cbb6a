package grpccommand

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/protoadapt"

	"github.com/rxhystrix/rxhystrix/breaker"
	"github.com/rxhystrix/rxhystrix/command"
	"github.com/rxhystrix/rxhystrix/metricsstream"
)

func TestSuccessIsACommandOfTheEndpointAndMethod(t *testing.T) {
	h := newHarness(t)
	client := h.serve(t, "orders", &backend{unary: echo})
	resp, err := client.UnaryCall(context.Background(), request("hello"))
	require.NoError(t, err)
	assert.Equal(t, "hello", string(resp.GetPayload().GetBody()))
	assert.Equal(t, "echo", resp.GetHostname())

	const key = "orders" + unaryCall
	assert.Equal(t, int64(1), h.events(key)[metricsstream.Success])
	cfg, ok := h.registry.Config(key)
	require.True(t, ok)
	assert.Equal(t, "orders", cfg.Pool, "a pool per downstream")
	assert.Equal(t, command.PoolIsolation, cfg.Isolation)
}

// Thirty regional systems serve one service; one hangs. It takes its own
// pool's workers and no one else's: calls to the others are answered
// while the hung ones wait, and the hung system's extra calls are
// rejected at once, with Unavailable.
func TestAHungDownstreamDoesNotSlowTheOthers(t *testing.T) {
	h := newHarness(t, WithPoolConfig(func(string) command.PoolConfig { return command.PoolConfig{CoreSize: 2} }))
	var arrived sync.WaitGroup
	arrived.Add(2)
	hung := h.serve(t, "region-17", &backend{unary: func(ctx context.Context, _ *testgrpc.SimpleRequest) (*testgrpc.SimpleResponse, error) {
		arrived.Done()
		<-ctx.Done()
		return nil, ctx.Err()
	}})
	healthy := h.serve(t, "region-03", &backend{unary: echo})

	hungErrs := make(chan error, 2)
	for range 2 {
		go func() {
			_, err := hung.UnaryCall(context.Background(), request("x"))
			hungErrs <- err
		}()
	}
	arrived.Wait() // both of the hung system's workers are taken

	_, err := hung.UnaryCall(context.Background(), request("x"))
	assert.ErrorIs(t, err, command.ErrPoolRejected, "the hung system's pool is full")
	assert.Equal(t, codes.Unavailable, status.Code(err))
	for range 20 {
		resp, err := healthy.UnaryCall(context.Background(), request("ok"))
		require.NoError(t, err)
		assert.Equal(t, "ok", string(resp.GetPayload().GetBody()))
	}
	select {
	case err := <-hungErrs:
		t.Fatalf("a hung call ended before its timeout: %v", err)
	default:
	}

	h.clock.Advance(command.DefaultTimeout)
	for range 2 {
		err := <-hungErrs
		assert.ErrorIs(t, err, command.ErrTimeout)
		assert.Equal(t, codes.DeadlineExceeded, status.Code(err))
	}
	assert.Equal(t, int64(20), h.events("region-03" + unaryCall)[metricsstream.Success])
	ev := h.events("region-17" + unaryCall)
	assert.Equal(t, int64(2), ev[metricsstream.Timeout])
	assert.Equal(t, int64(1), ev[metricsstream.PoolRejected])
}

var tripFast = func(string) command.Config {
	return command.Config{Breaker: breaker.Config{RequestVolumeThreshold: 5, ErrorThresholdPercentage: 50}}
}

// A storm of Unavailable opens the downstream's breaker: later calls are
// short-circuited and never reach it. Another downstream is untouched.
func TestUnavailableStormOpensTheBreaker(t *testing.T) {
	h := newHarness(t, WithConfig(tripFast))
	storm := &backend{unary: func(context.Context, *testgrpc.SimpleRequest) (*testgrpc.SimpleResponse, error) {
		return nil, status.Error(codes.Unavailable, "overloaded")
	}}
	stormClient := h.serve(t, "storm", storm)
	healthy := h.serve(t, "healthy", &backend{unary: echo})

	for range 10 {
		_, err := stormClient.UnaryCall(context.Background(), request("x"))
		assert.Equal(t, codes.Unavailable, status.Code(err))
		var cmdErr *command.Error
		require.ErrorAs(t, err, &cmdErr)
		assert.Equal(t, command.CommandFailure, cmdErr.Failure)
		assert.Equal(t, "overloaded", status.Convert(cmdErr.Cause).Message())
	}
	h.clock.Advance(time.Second) // the health snapshot is taken
	_, err := stormClient.UnaryCall(context.Background(), request("x"))
	assert.ErrorIs(t, err, command.ErrShortCircuited)
	assert.Equal(t, codes.Unavailable, status.Code(err))
	assert.Equal(t, int64(10), storm.calls.Load(), "the short-circuited call never reached the server")
	assert.True(t, h.registry.Breaker("storm"+unaryCall).IsOpen())

	_, err = healthy.UnaryCall(context.Background(), request("ok"))
	require.NoError(t, err)
	assert.False(t, h.registry.Breaker("healthy"+unaryCall).IsOpen())
}

// The codes that say the request was wrong are bad requests: the caller
// gets the server's error as it is, no fallback runs, and the breaker
// never opens however many there are.
func TestBadRequestCodesNeverOpenTheBreaker(t *testing.T) {
	var fallbacks int
	h := newHarness(t, WithConfig(tripFast), WithFallback(func(context.Context, string, any, any, error) error {
		fallbacks++
		return nil
	}))
	for _, code := range []codes.Code{codes.InvalidArgument, codes.NotFound, codes.AlreadyExists,
		codes.PermissionDenied, codes.FailedPrecondition, codes.Aborted, codes.OutOfRange,
		codes.Unimplemented, codes.Unauthenticated} {
		t.Run(code.String(), func(t *testing.T) {
			b := &backend{unary: func(context.Context, *testgrpc.SimpleRequest) (*testgrpc.SimpleResponse, error) {
				return nil, status.Error(code, "no such user")
			}}
			client := h.serve(t, code.String(), b)
			for range 10 {
				_, err := client.UnaryCall(context.Background(), request("x"))
				st, ok := status.FromError(err)
				require.True(t, ok)
				assert.Equal(t, code, st.Code())
				assert.Equal(t, "no such user", st.Message(), "the server's error as it is")
			}
			h.clock.Advance(time.Second)
			key := code.String() + unaryCall
			assert.False(t, h.registry.Breaker(key).IsOpen())
			assert.Equal(t, int64(10), h.events(key)[metricsstream.BadRequest])
			assert.Equal(t, int64(10), b.calls.Load())
		})
	}
	assert.Zero(t, fallbacks)
}

func TestFailureCodesAreFailures(t *testing.T) {
	h := newHarness(t)
	for _, code := range DefaultFailureCodes {
		t.Run(code.String(), func(t *testing.T) {
			client := h.serve(t, code.String(), &backend{unary: func(context.Context, *testgrpc.SimpleRequest) (*testgrpc.SimpleResponse, error) {
				return nil, status.Error(code, "down")
			}})
			_, err := client.UnaryCall(context.Background(), request("x"))
			assert.Equal(t, code, status.Code(err), "the server's code")
			assert.ErrorIs(t, err, command.ErrFallbackMissing)
			assert.Equal(t, int64(1), h.events(code.String() + unaryCall)[metricsstream.Failure])
		})
	}
}

func TestWithFailureCodes(t *testing.T) {
	h := newHarness(t, WithFailureCodes(codes.Unavailable))
	internal := h.serve(t, "internal", &backend{unary: func(context.Context, *testgrpc.SimpleRequest) (*testgrpc.SimpleResponse, error) {
		return nil, status.Error(codes.Internal, "bug")
	}})
	unavailable := h.serve(t, "unavailable", &backend{unary: func(context.Context, *testgrpc.SimpleRequest) (*testgrpc.SimpleResponse, error) {
		return nil, status.Error(codes.Unavailable, "down")
	}})
	_, err := internal.UnaryCall(context.Background(), request("x"))
	assert.Equal(t, codes.Internal, status.Code(err))
	_, err = unavailable.UnaryCall(context.Background(), request("x"))
	assert.Equal(t, codes.Unavailable, status.Code(err))
	assert.Equal(t, int64(1), h.events("internal" + unaryCall)[metricsstream.BadRequest])
	assert.Equal(t, int64(1), h.events("unavailable" + unaryCall)[metricsstream.Failure])

	for _, code := range []codes.Code{codes.OK, codes.Unauthenticated + 1} {
		assert.PanicsWithValue(t, "grpccommand: WithFailureCodes: "+code.String()+" is not a code of failure",
			func() { WithFailureCodes(codes.Unavailable, code) })
	}
	assert.PanicsWithValue(t, "grpccommand: WithFailureCodes: no code", func() { WithFailureCodes() })
}

// The fallback fills the caller's reply, or answers with an error whose
// code the caller gets.
func TestFallback(t *testing.T) {
	h := newHarness(t, WithFallback(func(_ context.Context, method string, req, reply any, err error) error {
		assert.Equal(t, unaryCall, method)
		assert.Equal(t, codes.Internal, status.Code(errors.Unwrap(err)), "the server's status is the cause")
		if string(req.(*testgrpc.SimpleRequest).GetPayload().GetBody()) == "unknown" {
			return status.Error(codes.NotFound, "not cached")
		}
		reply.(*testgrpc.SimpleResponse).Hostname = "cache"
		return nil
	}))
	client := h.serve(t, "broken", &backend{unary: func(context.Context, *testgrpc.SimpleRequest) (*testgrpc.SimpleResponse, error) {
		return nil, status.Error(codes.Internal, "bug")
	}})
	resp, err := client.UnaryCall(context.Background(), request("known"))
	require.NoError(t, err)
	assert.Equal(t, "cache", resp.GetHostname())

	_, err = client.UnaryCall(context.Background(), request("unknown"))
	assert.Equal(t, codes.NotFound, status.Code(err), "the fallback's code")
	var cmdErr *command.Error
	require.ErrorAs(t, err, &cmdErr)
	assert.Equal(t, "not cached", status.Convert(cmdErr.FallbackErr).Message())

	ev := h.events("broken" + unaryCall)
	assert.Equal(t, int64(1), ev[metricsstream.FallbackSuccess])
	assert.Equal(t, int64(1), ev[metricsstream.FallbackFailure])
}

// The command's timeout cancels the call: the server sees its context
// end, and the caller gets DeadlineExceeded.
func TestTimeoutCancelsTheCall(t *testing.T) {
	h := newHarness(t, WithConfig(func(string) command.Config {
		return command.Config{Timeout: 300 * time.Millisecond}
	}))
	arrived, cancelled := make(chan struct{}), make(chan struct{})
	client := h.serve(t, "slow", &backend{unary: func(ctx context.Context, _ *testgrpc.SimpleRequest) (*testgrpc.SimpleResponse, error) {
		close(arrived)
		<-ctx.Done()
		close(cancelled)
		return nil, ctx.Err()
	}})
	errc := make(chan error, 1)
	go func() {
		_, err := client.UnaryCall(context.Background(), request("x"))
		errc <- err
	}()
	<-arrived
	h.clock.Advance(300 * time.Millisecond)
	err := <-errc
	assert.ErrorIs(t, err, command.ErrTimeout)
	assert.Equal(t, codes.DeadlineExceeded, status.Code(err))
	<-cancelled
	assert.Equal(t, int64(1), h.events("slow" + unaryCall)[metricsstream.Timeout])
}

func TestCallersCancellationIsCancelled(t *testing.T) {
	h := newHarness(t)
	arrived := make(chan struct{})
	client := h.serve(t, "slow", &backend{unary: func(ctx context.Context, _ *testgrpc.SimpleRequest) (*testgrpc.SimpleResponse, error) {
		close(arrived)
		<-ctx.Done()
		return nil, ctx.Err()
	}})
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := client.UnaryCall(ctx, request("x"))
		errc <- err
	}()
	<-arrived
	cancel()
	err := <-errc
	assert.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, codes.Canceled, status.Code(err))
	assert.Equal(t, int64(1), h.events("slow" + unaryCall)[metricsstream.Cancelled])
}

func TestWithKey(t *testing.T) {
	h := newHarness(t, WithKey(func(target, method string) string {
		assert.Equal(t, "passthrough:///users", target)
		return "Users"
	}))
	client := h.serve(t, "users", &backend{unary: echo})
	_, err := client.UnaryCall(context.Background(), request("x"))
	require.NoError(t, err)
	assert.Equal(t, int64(1), h.events("Users")[metricsstream.Success])
	cfg, _ := h.registry.Config("Users")
	assert.Equal(t, "users", cfg.Pool, "the pool is still the downstream's")
}

func TestInvalidKeyOrConfigIsInternal(t *testing.T) {
	h := newHarness(t, WithKey(func(string, string) string { return "" }))
	b := &backend{unary: echo}
	client := h.serve(t, "users", b)
	_, err := client.UnaryCall(context.Background(), request("x"))
	assert.ErrorIs(t, err, command.ErrInvalidKey)
	assert.Equal(t, codes.Internal, status.Code(err))
	assert.Contains(t, err.Error(), `the key of /grpc.testing.TestService/UnaryCall on passthrough:///users is ""`)

	h = newHarness(t, WithConfig(func(string) command.Config { return command.Config{MaxConcurrentRequests: -1} }))
	client = h.serve(t, "users", b)
	_, err = client.UnaryCall(context.Background(), request("x"))
	assert.ErrorIs(t, err, command.ErrInvalidConfig)
	assert.Equal(t, codes.Internal, status.Code(err))
	assert.Contains(t, err.Error(), `grpccommand: config of "users/grpc.testing.TestService/UnaryCall"`)
	assert.Zero(t, b.calls.Load())
}

func TestEndpoint(t *testing.T) {
	for target, want := range map[string]string{
		"dns:///orders.internal:50051":        "orders.internal:50051",
		"dns://8.8.8.8/orders.internal:50051": "orders.internal:50051",
		"passthrough:///bufnet":               "bufnet",
		"unix:///run/orders.sock":             "run/orders.sock",
		"orders.internal:50051":               "orders.internal:50051",
		"unix:/run/orders.sock":               "unix:/run/orders.sock",
		"dns://resolver":                      "dns://resolver",
		"dns:///":                             "dns:///",
	} {
		assert.Equal(t, want, Endpoint(target), target)
	}
	assert.Equal(t, "orders:1/orders.Orders/Get", Key("dns:///orders:1", "/orders.Orders/Get"))
}

func TestOptionsPanicOnNil(t *testing.T) {
	assert.PanicsWithValue(t, "grpccommand: UnaryClientInterceptor: option 1 is nil",
		func() { UnaryClientInterceptor(WithKey(Key), nil) })
	assert.PanicsWithValue(t, "grpccommand: WithRegistry with nil argument", func() { WithRegistry(nil) })
	assert.PanicsWithValue(t, "grpccommand: WithKey with nil argument", func() { WithKey(nil) })
	assert.PanicsWithValue(t, "grpccommand: WithConfig with nil argument", func() { WithConfig(nil) })
	assert.PanicsWithValue(t, "grpccommand: WithPoolConfig with nil argument", func() { WithPoolConfig(nil) })
	assert.PanicsWithValue(t, "grpccommand: WithFallback with nil argument", func() { WithFallback(nil) })
}

// A fault injected into a call's key stands in for the server's answer,
// so its code says what it is, as the server's does: a failure code is a
// FAILURE, any other a BAD_REQUEST; the server is not called.
func TestInjectedStatusesAreClassifiedAsTheServers(t *testing.T) {
	h := newHarness(t)
	b := &backend{}
	for _, tc := range []struct {
		name  string
		code  codes.Code
		event metricsstream.EventType
	}{
		{"unavailable", codes.Unavailable, metricsstream.Failure},
		{"notfound", codes.NotFound, metricsstream.BadRequest},
	} {
		client := h.serve(t, tc.name, b)
		key := tc.name + unaryCall
		require.NoError(t, h.registry.Configure(key, command.Config{
			Faults: command.FaultConfig{Enabled: true, ErrorPercentage: 100, Error: status.Error(tc.code, "injected")}}))
		_, err := client.UnaryCall(context.Background(), request("x"))
		assert.Equal(t, tc.code, status.Code(err), tc.name)
		assert.Equal(t, int64(1), h.events(key)[tc.event], tc.name)
	}
	assert.Zero(t, b.calls.Load(), "no call reached the server")
}

// A failure keeps the server's code, and the details of its status
// (a RetryInfo on Unavailable, a QuotaFailure on ResourceExhausted): a
// client that reads them reads them through the interceptor as without
// it.
func TestAFailureKeepsTheServersStatusDetails(t *testing.T) {
	detail := &testgrpc.Payload{Body: []byte("retry in 5s")}
	h := newHarness(t)
	client := h.serve(t, "busy", &backend{unary: func(context.Context, *testgrpc.SimpleRequest) (*testgrpc.SimpleResponse, error) {
		s, err := status.New(codes.ResourceExhausted, "quota").WithDetails(protoadapt.MessageV1Of(detail))
		if err != nil {
			return nil, err
		}
		return nil, s.Err()
	}})
	_, err := client.UnaryCall(context.Background(), request("x"))
	var cmdErr *command.Error
	require.ErrorAs(t, err, &cmdErr, "a failure")
	s := status.Convert(err)
	assert.Equal(t, codes.ResourceExhausted, s.Code())
	require.Len(t, s.Details(), 1, "the server's details")
	got, ok := s.Details()[0].(*testgrpc.Payload)
	require.True(t, ok, "%T", s.Details()[0])
	assert.True(t, proto.Equal(detail, got))
}
