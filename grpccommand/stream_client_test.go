package grpccommand

import (
	"context"
	"errors"
	"io"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"

	"github.com/rxhystrix/rxhystrix/breaker"
	"github.com/rxhystrix/rxhystrix/command"
)

const (
	streamingOutputCall = "/grpc.testing.TestService/StreamingOutputCall"
	streamingInputCall  = "/grpc.testing.TestService/StreamingInputCall"
	fullDuplexCall      = "/grpc.testing.TestService/FullDuplexCall"
)

// streams is a TestService whose StreamingOutputCall sends the response
// sizes' count of messages, then waits for proceed if it is not nil,
// then ends with end's error; whose StreamingInputCall answers with the
// sum of the sizes of the payloads it got; and whose FullDuplexCall
// echoes.
type streams struct {
	streamer
	proceed chan struct{}
	end     error
	opened  chan struct{} // if not nil, gets a value as each StreamingOutputCall starts
}

func (s *streams) StreamingOutputCall(req *testgrpc.StreamingOutputCallRequest, stream testgrpc.TestService_StreamingOutputCallServer) error {
	s.calls.Add(1)
	if s.opened != nil {
		s.opened <- struct{}{}
	}
	for i := range req.GetResponseParameters() {
		if err := stream.Send(&testgrpc.StreamingOutputCallResponse{Payload: &testgrpc.Payload{Body: []byte(strconv.Itoa(i))}}); err != nil {
			return err
		}
	}
	if s.proceed != nil {
		select {
		case <-s.proceed:
		case <-stream.Context().Done():
			return stream.Context().Err()
		}
	}
	return s.end
}

func (s *streams) StreamingInputCall(stream testgrpc.TestService_StreamingInputCallServer) error {
	total := 0
	for {
		req, err := stream.Recv()
		if err == io.EOF {
			return stream.SendAndClose(&testgrpc.StreamingInputCallResponse{AggregatedPayloadSize: int32(total)})
		}
		if err != nil {
			return err
		}
		total += len(req.GetPayload().GetBody())
	}
}

// streamHarness is a harness whose interceptor is a stream interceptor.
func streamHarness(t *testing.T, opts ...Option) (*harness, func(name string, svc testgrpc.TestServiceServer) testgrpc.TestServiceClient) {
	t.Helper()
	h := newHarness(t)
	interceptor := StreamClientInterceptor(append([]Option{WithRegistry(h.registry)}, opts...)...)
	return h, func(name string, svc testgrpc.TestServiceServer) testgrpc.TestServiceClient {
		return testgrpc.NewTestServiceClient(dial(t, name, svc, nil, grpc.WithStreamInterceptor(interceptor)))
	}
}

// outputs asks for n messages.
func outputs(n int) *testgrpc.StreamingOutputCallRequest {
	return &testgrpc.StreamingOutputCallRequest{ResponseParameters: make([]*testgrpc.ResponseParameters, n)}
}

// upload sends bodies on a client stream of client's, opened with opts,
// and returns its reply. A Send that finds the stream ended (io.EOF)
// stops the sending: the reply's error tells how it ended.
func upload(t *testing.T, client testgrpc.TestServiceClient, bodies []string, opts ...grpc.CallOption) (*testgrpc.StreamingInputCallResponse, error) {
	t.Helper()
	stream, err := client.StreamingInputCall(context.Background(), opts...)
	require.NoError(t, err)
	for _, body := range bodies {
		if err := stream.Send(message(body)); err != nil {
			require.Equal(t, io.EOF, err)
			break
		}
	}
	return stream.CloseAndRecv()
}

// message is a protocol buffer message of body, as a client stream sends.
func message(body string) *testgrpc.StreamingInputCallRequest {
	return &testgrpc.StreamingInputCallRequest{Payload: &testgrpc.Payload{Body: []byte(body)}}
}

// echoes sends body on a bidirectional stream of streamer's, and checks
// that it comes back.
func echoes(t *testing.T, chat grpc.BidiStreamingClient[testgrpc.StreamingOutputCallRequest, testgrpc.StreamingOutputCallResponse], body string) {
	t.Helper()
	require.NoError(t, chat.Send(&testgrpc.StreamingOutputCallRequest{Payload: &testgrpc.Payload{Body: []byte(body)}}))
	got, err := chat.Recv()
	require.NoError(t, err)
	assert.Equal(t, body, string(got.GetPayload().GetBody()))
}

// receiveAll reads stream to its end, and returns the messages' bodies
// and the end.
func receiveAll(stream grpc.ServerStreamingClient[testgrpc.StreamingOutputCallResponse]) ([]string, error) {
	var got []string
	for {
		m, err := stream.Recv()
		if err != nil {
			return got, err
		}
		got = append(got, string(m.GetPayload().GetBody()))
	}
}

// Each stream is one execution of the command of its endpoint and
// method, counted when the caller reads its end: server streams, client
// streams and bidirectional streams alike.
func TestStreamIsOneExecution(t *testing.T) {
	h, serve := streamHarness(t)
	client := serve("feed", &streams{})

	stream, err := client.StreamingOutputCall(context.Background(), outputs(3))
	require.NoError(t, err)
	got, err := receiveAll(stream)
	assert.Equal(t, io.EOF, err)
	assert.Equal(t, []string{"0", "1", "2"}, got)
	m, ok := h.registry.Metrics().LookupCommand("feed" + streamingOutputCall)
	require.True(t, ok)
	assert.Equal(t, int64(0), m.ConcurrentExecutions(), "the execution ended with the stream, before its end reached the caller")
	assert.Equal(t, "[SUCCESS: 1]", h.events("feed"+streamingOutputCall).String())

	reply, err := upload(t, client, []string{"ab", "cde"})
	require.NoError(t, err)
	assert.Equal(t, int32(5), reply.GetAggregatedPayloadSize())
	assert.Equal(t, "[SUCCESS: 1]", h.events("feed"+streamingInputCall).String(), "a stream of one reply ends with it")

	chat, err := client.FullDuplexCall(context.Background())
	require.NoError(t, err)
	echoes(t, chat, "hi")
	require.NoError(t, chat.CloseSend())
	_, err = chat.Recv()
	assert.Equal(t, io.EOF, err)
	assert.Equal(t, "[SUCCESS: 1]", h.events("feed"+fullDuplexCall).String())
}

// A stream that ends with a failure code is a FAILURE, counted in the
// breaker's health, and one that ends with another code a BAD_REQUEST;
// the caller gets the server's status as it sent it.
func TestStreamEndsAsItsStatusSays(t *testing.T) {
	for _, tc := range []struct {
		end    error
		events string
	}{
		{status.Error(codes.Unavailable, "draining"), "[FAILURE: 1, FALLBACK_MISSING: 1, EXCEPTION_THROWN: 1]"},
		{status.Error(codes.NotFound, "no such feed"), "[BAD_REQUEST: 1, EXCEPTION_THROWN: 1]"},
	} {
		t.Run(status.Code(tc.end).String(), func(t *testing.T) {
			h, serve := streamHarness(t)
			client := serve("feed", &streams{end: tc.end})
			stream, err := client.StreamingOutputCall(context.Background(), outputs(2))
			require.NoError(t, err)
			got, err := receiveAll(stream)
			assert.Equal(t, []string{"0", "1"}, got)
			assert.Equal(t, status.Convert(tc.end).Proto(), status.Convert(err).Proto())
			var cmdErr *Error
			assert.False(t, errors.As(err, &cmdErr), "the server's own status, not the command's")
			assert.Equal(t, tc.events, h.events("feed"+streamingOutputCall).String())
		})
	}
}

// A fault injected into a stream's key stands in for the stream, so its
// code makes it a FAILURE or a BAD_REQUEST as the stream's end would; the
// server never sees the stream.
func TestStreamFaultsAreClassifiedAsItsEnd(t *testing.T) {
	for _, tc := range []struct {
		code   codes.Code
		events string
	}{
		{codes.Unavailable, "[FAILURE: 1, FALLBACK_MISSING: 1, EXCEPTION_THROWN: 1]"},
		{codes.NotFound, "[BAD_REQUEST: 1, EXCEPTION_THROWN: 1]"},
	} {
		t.Run(tc.code.String(), func(t *testing.T) {
			h, serve := streamHarness(t)
			opened := make(chan struct{}, 1)
			client := serve("feed", &streams{opened: opened})
			key := "feed" + streamingOutputCall
			require.NoError(t, h.registry.Configure(key, command.Config{Isolation: command.SemaphoreIsolation,
				Faults: command.FaultConfig{Enabled: true, ErrorPercentage: 100, Error: status.Error(tc.code, "injected")}}))
			stream, err := client.StreamingOutputCall(context.Background(), outputs(2))
			if err == nil {
				_, err = receiveAll(stream)
			}
			assert.Equal(t, tc.code, status.Code(err))
			assert.Equal(t, tc.events, h.events(key).String())
			assert.Empty(t, opened, "the server never saw the stream")
		})
	}
}

// An open circuit, a full semaphore and a rate limit refuse a stream
// before it opens: the server never sees it, the caller gets
// Unavailable at once.
func TestStreamRefusedBeforeItOpens(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cfg    command.Config
		want   error
		events string
	}{
		{"open circuit", command.Config{Breaker: breaker.Config{ForceOpen: true}}, command.ErrShortCircuited,
			"[SHORT_CIRCUITED: 1, FALLBACK_MISSING: 1, EXCEPTION_THROWN: 1]"},
		{"rate limit", command.Config{RateLimit: command.RateLimitConfig{Enabled: true, Rate: 1, Burst: 1}}, command.ErrRateLimited,
			"[SUCCESS: 1, FALLBACK_MISSING: 1, EXCEPTION_THROWN: 1, RATE_LIMITED: 1]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, serve := streamHarness(t, WithConfig(func(string) command.Config { return tc.cfg }))
			svc := &streams{}
			client := serve("feed", svc)
			if tc.want == command.ErrRateLimited { // the bucket's one token
				stream, err := client.StreamingOutputCall(context.Background(), outputs(1))
				require.NoError(t, err)
				_, err = receiveAll(stream)
				require.Equal(t, io.EOF, err)
			}
			calls := svc.calls.Load()
			_, err := client.StreamingOutputCall(context.Background(), outputs(1))
			assert.ErrorIs(t, err, tc.want)
			assert.Equal(t, codes.Unavailable, status.Code(err))
			assert.Equal(t, calls, svc.calls.Load(), "the server never saw it")
			assert.Equal(t, tc.events, h.events("feed"+streamingOutputCall).String())
		})
	}
}

// A key's permits bound its streams open at once, by default under
// semaphore isolation; a stream's end gives its permit back.
func TestStreamsHoldTheirPermitsWhileOpen(t *testing.T) {
	h, serve := streamHarness(t, WithConfig(func(string) command.Config { return command.Config{MaxConcurrentRequests: 2} }))
	svc := &streams{proceed: make(chan struct{})}
	client := serve("feed", svc)
	var open []grpc.ServerStreamingClient[testgrpc.StreamingOutputCallResponse]
	for range 2 {
		stream, err := client.StreamingOutputCall(context.Background(), outputs(1))
		require.NoError(t, err)
		_, err = stream.Recv()
		require.NoError(t, err)
		open = append(open, stream)
	}
	_, err := client.StreamingOutputCall(context.Background(), outputs(1))
	assert.ErrorIs(t, err, command.ErrSemaphoreRejected)
	assert.Equal(t, codes.Unavailable, status.Code(err))

	close(svc.proceed)
	for _, stream := range open {
		_, err := receiveAll(stream)
		assert.Equal(t, io.EOF, err)
	}
	stream, err := client.StreamingOutputCall(context.Background(), outputs(1))
	require.NoError(t, err, "the permits are back")
	_, err = receiveAll(stream)
	assert.Equal(t, io.EOF, err)
	assert.Equal(t, "[SUCCESS: 3, SEMAPHORE_REJECTED: 1, FALLBACK_MISSING: 1, EXCEPTION_THROWN: 1]", h.events("feed"+streamingOutputCall).String())
}

// A Timeout set bounds the stream's life: it ends the stream, and the
// caller's Recv gets DeadlineExceeded. The caller's own cancellation is
// CANCELLED, its permit back. Neither is retried, whatever the Config.
func TestStreamTimeoutAndCancellation(t *testing.T) {
	h, serve := streamHarness(t, WithConfig(func(key string) command.Config {
		return command.Config{Timeout: 300 * time.Millisecond, MaxConcurrentRequests: 1, Retry: command.RetryConfig{MaxAttempts: 3}}
	}))
	svc := &streams{proceed: make(chan struct{}), opened: make(chan struct{}, 1)}
	client := serve("feed", svc)

	stream, err := client.StreamingOutputCall(context.Background(), outputs(1))
	require.NoError(t, err)
	_, err = stream.Recv()
	require.NoError(t, err)
	<-svc.opened
	h.clock.Advance(300 * time.Millisecond)
	_, err = receiveAll(stream)
	assert.ErrorIs(t, err, command.ErrTimeout)
	assert.Equal(t, codes.DeadlineExceeded, status.Code(err))

	ctx, cancel := context.WithCancel(context.Background())
	stream, err = client.StreamingOutputCall(ctx, outputs(1))
	require.NoError(t, err, "the permit of the stream that timed out is back")
	_, err = stream.Recv()
	require.NoError(t, err)
	<-svc.opened
	cancel()
	_, err = receiveAll(stream)
	assert.Equal(t, codes.Canceled, status.Code(err))
	assert.Equal(t, "[TIMEOUT: 1, FALLBACK_MISSING: 1, EXCEPTION_THROWN: 1, CANCELLED: 1]", h.events("feed"+streamingOutputCall).String())
	assert.Equal(t, int64(2), svc.calls.Load(), "no stream was opened again")
}

// Without a Timeout of its own a stream has none: it outlives Hystrix's
// 1s default.
func TestStreamHasNoTimeoutByDefault(t *testing.T) {
	h, serve := streamHarness(t)
	svc := &streams{proceed: make(chan struct{}), opened: make(chan struct{}, 1)}
	client := serve("feed", svc)
	stream, err := client.StreamingOutputCall(context.Background(), outputs(1))
	require.NoError(t, err)
	<-svc.opened
	h.clock.Advance(time.Hour)
	close(svc.proceed)
	got, err := receiveAll(stream)
	assert.Equal(t, io.EOF, err)
	assert.Equal(t, []string{"0"}, got)
	assert.Equal(t, "[SUCCESS: 1]", h.events("feed"+streamingOutputCall).String())
}

// A stream that the server refuses to open counts as its status says.
func TestStreamThatDoesNotOpen(t *testing.T) {
	h, serve := streamHarness(t)
	client := serve("feed", &streams{}) // StreamingOutputCall is served; HalfDuplexCall is not
	stream, err := client.HalfDuplexCall(context.Background())
	require.NoError(t, err, "gRPC opens a stream before the server answers")
	_, err = stream.Recv()
	assert.Equal(t, codes.Unimplemented, status.Code(err))
	assert.Equal(t, "[BAD_REQUEST: 1, EXCEPTION_THROWN: 1]",
		h.events("feed/grpc.testing.TestService/HalfDuplexCall").String())
}

func TestStreamClientInterceptorPanics(t *testing.T) {
	assert.PanicsWithValue(t, "grpccommand: StreamClientInterceptor: option 0 is nil", func() { StreamClientInterceptor(nil) })
	assert.PanicsWithValue(t, "grpccommand: StreamClientInterceptor: WithFallback fills a unary call's reply; a stream has none",
		func() {
			StreamClientInterceptor(WithFallback(func(context.Context, string, any, any, error) error { return nil }))
		})
}

// gRPC releases a stream whose SendMsg returns an error other than
// io.EOF (a message over the call's limit, say): the call has failed, as
// the caller sees it, and the caller need not read the stream any more
// (grpc.ClientConn.NewStream, item 4). So does the interceptor: the
// execution ends, its permit back, and is not retried.
func TestStreamEndsWhenItsSendFails(t *testing.T) {
	for _, retry := range []int{0, 3} {
		h, serve := streamHarness(t, WithConfig(func(string) command.Config {
			return command.Config{MaxConcurrentRequests: 1, Retry: command.RetryConfig{MaxAttempts: retry}}
		}))
		svc := &streamer{}
		client := serve("echo", svc)
		for range 3 {
			chat, err := client.FullDuplexCall(context.Background(), grpc.MaxCallSendMsgSize(8))
			require.NoError(t, err, "the permit of the stream before is back")
			err = chat.Send(&testgrpc.StreamingOutputCallRequest{Payload: &testgrpc.Payload{Body: make([]byte, 64)}})
			assert.Equal(t, codes.ResourceExhausted, status.Code(err))
		}
		assert.Equal(t, "[FAILURE: 3, FALLBACK_MISSING: 3, EXCEPTION_THROWN: 3]", h.events("echo"+fullDuplexCall).String(), "retry %d", retry)
	}
}

// gRPC releases a stream when its ClientConn closes (grpc.ClientConn.NewStream,
// item 1): so must the interceptor, or the execution's goroutine and its
// permit stay for ever, and a new connection to the same downstream,
// whose streams share the key, finds the key's permits taken.
func TestStreamEndsWhenItsConnectionCloses(t *testing.T) {
	h := newHarness(t)
	interceptor := StreamClientInterceptor(WithRegistry(h.registry),
		WithConfig(func(string) command.Config { return command.Config{MaxConcurrentRequests: 1} }))
	svc := &streams{proceed: make(chan struct{})}
	defer close(svc.proceed)
	lis := bufconn.Listen(1 << 16)
	srv := grpc.NewServer()
	testgrpc.RegisterTestServiceServer(srv, svc)
	served := make(chan struct{})
	go func() { defer close(served); _ = srv.Serve(lis) }()
	t.Cleanup(func() { srv.Stop(); <-served })
	connect := func() *grpc.ClientConn {
		conn, err := grpc.NewClient("passthrough:///feed",
			grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
			grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithStreamInterceptor(interceptor))
		require.NoError(t, err)
		return conn
	}

	conn := connect()
	stream, err := testgrpc.NewTestServiceClient(conn).StreamingOutputCall(context.Background(), outputs(1))
	require.NoError(t, err)
	_, err = stream.Recv()
	require.NoError(t, err)
	require.NoError(t, conn.Close()) // the stream is neither read to its end nor cancelled

	m, ok := h.registry.Metrics().LookupCommand("feed" + streamingOutputCall)
	require.True(t, ok)
	deadline := time.Now().Add(stuckAfter)
	for m.ConcurrentExecutions() != 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond) // polls for what should have happened already
	}
	assert.Equal(t, int64(0), m.ConcurrentExecutions(), "the closed connection's stream still holds its permit")

	conn = connect()
	defer conn.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err = testgrpc.NewTestServiceClient(conn).StreamingOutputCall(ctx, outputs(1))
	assert.NoError(t, err, "a new connection's stream is refused: the permit is the old stream's")
}

// A stream the command refuses before it opens completes too: its
// OnFinish is called, with what the caller gets, as a unary call's is.
func TestOnFinishOfARefusedStream(t *testing.T) {
	_, serve := streamHarness(t, WithConfig(func(string) command.Config {
		return command.Config{Breaker: breaker.Config{ForceOpen: true}}
	}))
	client := serve("feed", &streams{})
	opt, ch := onFinish()
	_, err := client.StreamingOutputCall(context.Background(), outputs(1), opt)
	require.ErrorIs(t, err, command.ErrShortCircuited)
	assert.Equal(t, []codes.Code{codes.Unavailable}, finished(t, ch, 1))
}

// A stream its caller leaves by cancelling its context, without reading
// its end, completes with Canceled: its OnFinish says so, once.
func TestOnFinishOfAStreamCancelledUnread(t *testing.T) {
	_, serve := streamHarness(t, WithConfig(retrying(3)))
	svc := &streams{proceed: make(chan struct{}), opened: make(chan struct{}, 1)}
	client := serve("feed", svc)
	opt, ch := onFinish()
	ctx, cancel := context.WithCancel(context.Background())
	_, err := client.StreamingOutputCall(ctx, outputs(1), opt)
	require.NoError(t, err)
	<-svc.opened
	cancel()
	assert.Equal(t, []codes.Code{codes.Canceled}, finished(t, ch, 1))
}

// gRPC finishes a stream that ended well (the server's OK, read by the
// caller) with nil: one whose connection shuts down as it ends has
// succeeded all the same, not been cancelled by the close.
func TestStreamEndingWellAsItsConnectionClosesSucceeds(t *testing.T) {
	h := newHarness(t)
	interceptor := StreamClientInterceptor(WithRegistry(h.registry))
	conn, err := grpc.NewClient("passthrough:///feed", grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	require.NoError(t, conn.Close())
	endsWell := func(ctx context.Context, _ *grpc.StreamDesc, _ *grpc.ClientConn, _ string, opts ...grpc.CallOption) (grpc.ClientStream, error) {
		for _, o := range opts {
			if f, ok := o.(grpc.OnFinishCallOption); ok {
				f.OnFinish(nil)
			}
		}
		return &endedStream{ctx: ctx}, nil
	}
	_, err = interceptor(context.Background(), &grpc.StreamDesc{ServerStreams: true}, conn, streamingOutputCall, endsWell)
	require.NoError(t, err)

	m, ok := h.registry.Metrics().LookupCommand("feed" + streamingOutputCall)
	require.True(t, ok)
	deadline := time.Now().Add(stuckAfter)
	for m.ConcurrentExecutions() != 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond) // polls for what should have happened already
	}
	assert.Equal(t, "[SUCCESS: 1]", h.events("feed"+streamingOutputCall).String())
}

// endedStream is a ClientStream gRPC has finished.
type endedStream struct {
	grpc.ClientStream
	ctx context.Context
}

func (s *endedStream) Context() context.Context { return s.ctx }
