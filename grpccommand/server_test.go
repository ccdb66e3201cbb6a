package grpccommand

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/metadata"

	"github.com/rxhystrix/rxhystrix/clock"
	"github.com/rxhystrix/rxhystrix/command"
	"github.com/rxhystrix/rxhystrix/metricsstream"
)

const userLog = "GetUser[SUCCESS][0ms], GetUser[SUCCESS, RESPONSE_FROM_CACHE][0ms]"

// getUser is a command with a request cache, which needs a request
// context.
func getUser(r *command.Registry) *command.Command[string, string] {
	return command.New("GetUser", func(ctx context.Context, id string) (string, error) { return "user " + id, nil },
		command.WithRegistry(r), command.WithConfig(command.Config{Isolation: command.SemaphoreIsolation})).
		WithCacheKey(func(id string) string { return id })
}

// userService is a backend whose UnaryCall runs GetUser twice with its
// context, the second served by the request cache.
func userService(t *testing.T, r *command.Registry) *backend {
	cmd := getUser(r)
	return &backend{unary: func(ctx context.Context, req *testgrpc.SimpleRequest) (*testgrpc.SimpleResponse, error) {
		var user string
		for range 2 {
			var err error
			user, err = cmd.Execute(ctx, "7")
			assert.NoError(t, err, "a cache key needs the request context")
		}
		return &testgrpc.SimpleResponse{Username: user}, nil
	}}
}

func newRegistry(t *testing.T) *command.Registry {
	r := command.NewRegistry(command.WithClock(clock.NewManual(t0)))
	t.Cleanup(r.Close)
	return r
}

func TestUnaryServerInterceptorSendsTheRequestLog(t *testing.T) {
	r := newRegistry(t)
	conn := dial(t, "users", userService(t, r), []grpc.ServerOption{
		grpc.UnaryInterceptor(UnaryServerInterceptor(WithLogTrailer(LogTrailer))),
	})
	var trailer metadata.MD
	resp, err := testgrpc.NewTestServiceClient(conn).UnaryCall(context.Background(), request("x"), grpc.Trailer(&trailer))
	require.NoError(t, err)
	assert.Equal(t, "user 7", resp.GetUsername())
	assert.Equal(t, []string{userLog}, trailer.Get(LogTrailer))
}

func TestUnaryServerInterceptorWithoutTrailer(t *testing.T) {
	r := newRegistry(t)
	conn := dial(t, "users", userService(t, r), []grpc.ServerOption{grpc.UnaryInterceptor(UnaryServerInterceptor())})
	var trailer metadata.MD
	_, err := testgrpc.NewTestServiceClient(conn).UnaryCall(context.Background(), request("x"), grpc.Trailer(&trailer))
	require.NoError(t, err)
	assert.Empty(t, trailer.Get(LogTrailer), "no trailer unless asked")

	conn = dial(t, "quiet", &backend{unary: echo}, []grpc.ServerOption{
		grpc.UnaryInterceptor(UnaryServerInterceptor(WithLogTrailer("x-log"))),
	})
	_, err = testgrpc.NewTestServiceClient(conn).UnaryCall(context.Background(), request("x"), grpc.Trailer(&trailer))
	require.NoError(t, err)
	assert.Empty(t, trailer.Get("x-log"), "a call that ran no command gets no trailer")
}

// The request context ends with the call: its log goes to the request
// events stream.
func TestUnaryServerInterceptorPublishesTheRequestWhenItEnds(t *testing.T) {
	r := newRegistry(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := make(chan metricsstream.RequestEvents, 1)
	r.Metrics().RequestEvents().SubscribeFunc(ctx, func(e metricsstream.RequestEvents) { got <- e }, nil, nil)

	conn := dial(t, "users", userService(t, r), []grpc.ServerOption{grpc.UnaryInterceptor(UnaryServerInterceptor())})
	_, err := testgrpc.NewTestServiceClient(conn).UnaryCall(context.Background(), request("x"))
	require.NoError(t, err)
	select {
	case e := <-got:
		assert.Equal(t, userLog, e.String())
	case <-time.After(stuckAfter):
		t.Fatal("the request was not published")
	}
}

// fullDuplex is a backend whose FullDuplexCall runs GetUser twice with
// its stream's context and answers once.
type fullDuplex struct {
	backend
	cmd *command.Command[string, string]
	t   *testing.T
}

func (b *fullDuplex) FullDuplexCall(stream grpc.BidiStreamingServer[testgrpc.StreamingOutputCallRequest, testgrpc.StreamingOutputCallResponse]) error {
	if _, err := stream.Recv(); err != nil {
		return err
	}
	var user string
	for range 2 {
		var err error
		user, err = b.cmd.Execute(stream.Context(), "7")
		assert.NoError(b.t, err, "a cache key needs the request context")
	}
	return stream.Send(&testgrpc.StreamingOutputCallResponse{Payload: &testgrpc.Payload{Body: []byte(user)}})
}

func TestStreamServerInterceptorSendsTheRequestLog(t *testing.T) {
	r := newRegistry(t)
	conn := dial(t, "users", &fullDuplex{cmd: getUser(r), t: t}, []grpc.ServerOption{
		grpc.StreamInterceptor(StreamServerInterceptor(WithLogTrailer(LogTrailer))),
	})
	stream, err := testgrpc.NewTestServiceClient(conn).FullDuplexCall(context.Background())
	require.NoError(t, err)
	require.NoError(t, stream.Send(&testgrpc.StreamingOutputCallRequest{}))
	resp, err := stream.Recv()
	require.NoError(t, err)
	assert.Equal(t, "user 7", string(resp.GetPayload().GetBody()))
	require.NoError(t, stream.CloseSend())
	_, err = stream.Recv()
	require.ErrorIs(t, err, io.EOF)
	assert.Equal(t, []string{userLog}, stream.Trailer().Get(LogTrailer))
}

func TestServerOptionsPanicOnBadInput(t *testing.T) {
	assert.PanicsWithValue(t, "grpccommand: UnaryServerInterceptor: option 0 is nil", func() { UnaryServerInterceptor(nil) })
	assert.PanicsWithValue(t, "grpccommand: StreamServerInterceptor: option 1 is nil",
		func() { StreamServerInterceptor(WithLogTrailer(LogTrailer), nil) })
	for _, key := range []string{"", "X-Log", "x log", "x-log:", "grpc-log", "x-log-bin", "ünicode"} {
		assert.Panics(t, func() { WithLogTrailer(key) }, "%q", key)
	}
	for _, key := range []string{LogTrailer, "x_log.v2", "log-9"} {
		assert.NotPanics(t, func() { WithLogTrailer(key) }, "%q", key)
	}
}

// A request log whose command key is any UTF-8, as a key may be, goes
// in the trailer as gRPC sends a text value, printable ASCII; the call
// gets the handler's answer, not an Internal error of a trailer the
// client's HTTP/2 refused.
func TestLogTrailerOfAKeyThatIsNotPrintableASCII(t *testing.T) {
	for key, want := range map[string]string{
		"a\x01b":  "a%01b[SUCCESS][0ms]",
		"a\nb":    "a%0Ab[SUCCESS][0ms]",
		"Grüße":   "Gr%C3%BC%C3%9Fe[SUCCESS][0ms]",
		"GetUser": "GetUser[SUCCESS][0ms]",
	} {
		r := newRegistry(t)
		cmd := command.New(key, func(ctx context.Context, id string) (string, error) { return "user " + id, nil },
			command.WithRegistry(r), command.WithConfig(command.Config{Isolation: command.SemaphoreIsolation}))
		conn := dial(t, "users", &backend{unary: func(ctx context.Context, req *testgrpc.SimpleRequest) (*testgrpc.SimpleResponse, error) {
			user, err := cmd.Execute(ctx, "7")
			return &testgrpc.SimpleResponse{Username: user}, err
		}}, []grpc.ServerOption{grpc.UnaryInterceptor(UnaryServerInterceptor(WithLogTrailer(LogTrailer)))})
		var trailer metadata.MD
		resp, err := testgrpc.NewTestServiceClient(conn).UnaryCall(context.Background(), request("x"), grpc.Trailer(&trailer))
		require.NoError(t, err, "key %q", key)
		assert.Equal(t, "user 7", resp.GetUsername())
		assert.Equal(t, []string{want}, trailer.Get(LogTrailer), "key %q", key)
	}
}
