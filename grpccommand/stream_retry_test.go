package grpccommand

import (
	"context"
	"fmt"
	"io"
	"runtime"
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
	"google.golang.org/protobuf/proto"

	"github.com/rxhystrix/rxhystrix/command"
	"github.com/rxhystrix/rxhystrix/metricsstream"
	"github.com/rxhystrix/rxhystrix/observable"
)

// flakyStreams is a TestService whose first failFirst streams of each
// kind fail with Unavailable before they reply, saying to retry at once
// (a pushback of 0 ms); the others answer as streams' do.
type flakyStreams struct {
	streams
	failFirst int64
	outputs   atomic.Int64 // StreamingOutputCalls begun
	inputs    atomic.Int64 // StreamingInputCalls begun
	duplexes  atomic.Int64 // FullDuplexCalls begun
}

func (s *flakyStreams) refuse(stream grpc.ServerStream) error {
	stream.SetTrailer(metadata.Pairs(PushbackTrailer, "0"))
	return status.Error(codes.Unavailable, "not yet")
}

func (s *flakyStreams) StreamingOutputCall(req *testgrpc.StreamingOutputCallRequest, stream testgrpc.TestService_StreamingOutputCallServer) error {
	if s.outputs.Add(1) <= s.failFirst {
		return s.refuse(stream)
	}
	return s.streams.StreamingOutputCall(req, stream)
}

func (s *flakyStreams) StreamingInputCall(stream testgrpc.TestService_StreamingInputCallServer) error {
	if s.inputs.Add(1) <= s.failFirst {
		return s.refuse(stream)
	}
	return s.streams.StreamingInputCall(stream)
}

// FullDuplexCall fails as the others do once it has read the caller's
// first message: the stream has sent, and not yet had a reply.
func (s *flakyStreams) FullDuplexCall(stream testgrpc.TestService_FullDuplexCallServer) error {
	if s.duplexes.Add(1) <= s.failFirst {
		if _, err := stream.Recv(); err != nil {
			return err
		}
		return s.refuse(stream)
	}
	return s.streams.FullDuplexCall(stream)
}

// retrying is the configuration of a stream key that retries, with a
// backoff no test waits for: the servers push back 0 ms.
func retrying(attempts int) func(string) command.Config {
	return func(string) command.Config {
		return command.Config{Retry: command.RetryConfig{
			MaxAttempts: attempts,
			Backoff:     observable.Backoff{Initial: time.Hour, Jitter: observable.NoJitter},
		}}
	}
}

// A server stream that fails before its first reply is opened again,
// its request sent again, while the caller reads on: each attempt an
// execution, as a unary call's retries are.
func TestServerStreamRetriedBeforeItsFirstReply(t *testing.T) {
	h, serve := streamHarness(t, WithConfig(retrying(3)))
	svc := &flakyStreams{failFirst: 2}
	client := serve("feed", svc)

	stream, err := client.StreamingOutputCall(context.Background(), outputs(3))
	require.NoError(t, err)
	got, err := receiveAll(stream)
	assert.Equal(t, io.EOF, err)
	assert.Equal(t, []string{"0", "1", "2"}, got, "the third stream, of the request sent again")
	assert.Equal(t, int64(3), svc.outputs.Load())
	assert.Equal(t, "[SUCCESS: 1, FAILURE: 2, RETRIED: 2]", h.events("feed"+streamingOutputCall).String())
}

// Attempts that all fail end the stream with the last one's status.
func TestServerStreamRetriesRunOut(t *testing.T) {
	h, serve := streamHarness(t, WithConfig(retrying(2)))
	svc := &flakyStreams{failFirst: 5}
	client := serve("feed", svc)

	stream, err := client.StreamingOutputCall(context.Background(), outputs(3))
	require.NoError(t, err)
	got, err := receiveAll(stream)
	assert.Empty(t, got)
	assert.Equal(t, codes.Unavailable, status.Code(err))
	assert.ErrorContains(t, err, "not yet")
	assert.Equal(t, int64(2), svc.outputs.Load())
	assert.Equal(t, "[FAILURE: 2, FALLBACK_MISSING: 1, EXCEPTION_THROWN: 1, RETRIED: 1]", h.events("feed"+streamingOutputCall).String())
}

// Once a reply has come, the stream is committed to its attempt: a
// failure after it ends the stream.
func TestServerStreamNotRetriedAfterItsFirstReply(t *testing.T) {
	h, serve := streamHarness(t, WithConfig(retrying(3)))
	svc := &streams{end: status.Error(codes.Unavailable, "draining")}
	client := serve("feed", svc)

	stream, err := client.StreamingOutputCall(context.Background(), outputs(1))
	require.NoError(t, err)
	got, err := receiveAll(stream)
	assert.Equal(t, []string{"0"}, got)
	assert.Equal(t, codes.Unavailable, status.Code(err))
	assert.Equal(t, int64(1), svc.calls.Load())
	assert.Equal(t, "[FAILURE: 1, FALLBACK_MISSING: 1, EXCEPTION_THROWN: 1]", h.events("feed"+streamingOutputCall).String())
}

// A stream the caller streams to is opened again when it fails before
// its reply, and the next attempt sends what the caller sent, in order,
// and closes its side as the caller did: the server answers all of it.
func TestClientStreamRetriedWithWhatItSent(t *testing.T) {
	h, serve := streamHarness(t, WithConfig(retrying(3)))
	svc := &flakyStreams{failFirst: 2}
	reply, err := upload(t, serve("upload", svc), []string{"ab", "cde"})
	require.NoError(t, err)
	assert.Equal(t, int32(5), reply.GetAggregatedPayloadSize(), "both messages reached the third stream")
	assert.Equal(t, int64(3), svc.inputs.Load())
	assert.Equal(t, "[SUCCESS: 1, FAILURE: 2, RETRIED: 2]", h.events("upload"+streamingInputCall).String())
}

// A bidirectional stream that fails before its first reply is opened
// again, with what the caller sent; the caller sends on meanwhile, and
// reads the next attempt's replies.
func TestBidirectionalStreamRetriedBeforeItsFirstReply(t *testing.T) {
	h, serve := streamHarness(t, WithConfig(retrying(2)))
	svc := &flakyStreams{failFirst: 1}
	chat, err := serve("chat", svc).FullDuplexCall(context.Background())
	require.NoError(t, err)
	echoes(t, chat, "hi") // the second stream's echo of the message sent again
	echoes(t, chat, "there")
	require.NoError(t, chat.CloseSend())
	_, err = chat.Recv()
	assert.Equal(t, io.EOF, err)
	assert.Equal(t, int64(2), svc.duplexes.Load())
	assert.Equal(t, "[SUCCESS: 1, FAILURE: 1, RETRIED: 1]", h.events("chat"+fullDuplexCall).String())
}

// What a stream keeps to send again is bounded by the call's retry
// buffer, as gRPC bounds it: a stream that has sent more is committed to
// its attempt, and its failure ends it.
func TestStreamRetryBufferBoundsWhatIsSentAgain(t *testing.T) {
	h, serve := streamHarness(t, WithConfig(retrying(3)))
	svc := &flakyStreams{failFirst: 1}
	_, err := upload(t, serve("upload", svc), []string{"ab", "cdefghijk"}, grpc.MaxRetryRPCBufferSize(8)) // the second outgrows 8 bytes
	assert.Equal(t, codes.Unavailable, status.Code(err))
	assert.Equal(t, int64(1), svc.inputs.Load())
	assert.Equal(t, "[FAILURE: 1, FALLBACK_MISSING: 1, EXCEPTION_THROWN: 1]", h.events("upload"+streamingInputCall).String())
}

// The retry buffer is gRPC's 256 KiB unless the call's
// grpc.MaxRetryRPCBufferSize says otherwise, the last one given.
func TestRetryBufferSize(t *testing.T) {
	assert.Equal(t, 256<<10, retryBufferSize(nil))
	assert.Equal(t, 10, retryBufferSize([]grpc.CallOption{grpc.MaxRetryRPCBufferSize(20), grpc.WaitForReady(true), grpc.MaxRetryRPCBufferSize(10)}))
}

// A stream of a key that hedges makes one attempt: its attempts would run
// side by side.
func TestStreamOfAHedgingKeyNotRetried(t *testing.T) {
	h, serve := streamHarness(t, WithConfig(func(key string) command.Config {
		cfg := retrying(3)(key)
		cfg.Hedge = command.HedgeConfig{MaxHedges: 1, Delay: time.Hour}
		return cfg
	}))
	svc := &flakyStreams{failFirst: 1}
	client := serve("feed", svc)
	stream, err := client.StreamingOutputCall(context.Background(), outputs(1))
	require.NoError(t, err)
	_, err = receiveAll(stream)
	assert.Equal(t, codes.Unavailable, status.Code(err))
	assert.Equal(t, int64(1), svc.outputs.Load())
	assert.Equal(t, "[FAILURE: 1, FALLBACK_MISSING: 1, EXCEPTION_THROWN: 1]", h.events("feed"+streamingOutputCall).String())
}

// A stream that does not open is retried too, after its backoff on the
// registry's clock, and its caller gets the stream of the attempt that
// opens.
func TestServerStreamRetriedWhenItDoesNotOpen(t *testing.T) {
	h := newHarness(t)
	interceptor := StreamClientInterceptor(WithRegistry(h.registry), WithConfig(func(string) command.Config {
		return command.Config{Retry: command.RetryConfig{
			MaxAttempts: 2,
			Backoff:     observable.Backoff{Initial: time.Millisecond, Jitter: observable.NoJitter},
		}}
	}))
	var opens atomic.Int64
	refuseFirst := func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
		if opens.Add(1) == 1 {
			return nil, status.Error(codes.Unavailable, "no connection yet")
		}
		return streamer(ctx, desc, cc, method, opts...)
	}
	client := testgrpc.NewTestServiceClient(dial(t, "feed", &streams{}, nil, grpc.WithChainStreamInterceptor(interceptor, refuseFirst)))

	type opened struct {
		stream grpc.ServerStreamingClient[testgrpc.StreamingOutputCallResponse]
		err    error
	}
	done := make(chan opened, 1)
	go func() {
		stream, err := client.StreamingOutputCall(context.Background(), outputs(2))
		done <- opened{stream, err}
	}()
	// The clock moves until the backoff has passed, on a goroutine of its
	// own: the retry runs on the goroutine that fires its timer, and
	// holds it for the stream's life, as a timer's goroutine of the
	// runtime's is held.
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			select {
			case <-stop:
				return
			default:
				h.clock.Advance(time.Millisecond)
				runtime.Gosched()
			}
		}
	}()
	o := recv(t, done, "the stream to open")
	require.NoError(t, o.err)
	got, err := receiveAll(o.stream)
	close(stop)
	<-stopped
	assert.Equal(t, io.EOF, err)
	assert.Equal(t, []string{"0", "1"}, got)
	assert.Equal(t, int64(2), opens.Load())
	assert.Equal(t, "[SUCCESS: 1, FAILURE: 1, RETRIED: 1]", h.events("feed"+streamingOutputCall).String())
}

// A stream key with a timeout retries a stream only if its retries leave
// timeouts out: a timeout may come after a reply, and its cause is the
// command's own, which cannot say that the stream is committed.
func TestRetriesStreams(t *testing.T) {
	retry := command.RetryConfig{MaxAttempts: 2}
	failuresOnly := command.RetryConfig{MaxAttempts: 2, On: command.FailureTypesOf(command.CommandFailure)}
	for _, tc := range []struct {
		cfg  command.Config
		want bool
	}{
		{command.Config{Timeout: -1, Retry: retry}, true},
		{command.Config{Timeout: time.Second, Retry: retry}, false},
		{command.Config{Timeout: time.Second, Retry: failuresOnly}, true},
		{command.Config{Timeout: -1, Retry: command.RetryConfig{MaxAttempts: 1}}, false},
		{command.Config{Timeout: -1, Retry: retry, Hedge: command.HedgeConfig{MaxHedges: 1}}, false},
	} {
		assert.Equal(t, tc.want, retriesStreams(&tc.cfg), "%+v", tc.cfg)
	}
}

// An attempt that would begin beside another of its stream's, or after
// its first reply, does not, and opens no stream: a Configure changed the
// key under the stream.
func TestStreamAttemptNotAgain(t *testing.T) {
	s := &streamClient{}
	opened := 0
	for _, tc := range []struct {
		name string
		prev *streamAttempt
		sent bool
	}{
		{"beside a running attempt", &streamAttempt{}, false},
		{"after a reply", &streamAttempt{over: true}, true},
	} {
		st := &outboundStream{
			desc: &grpc.StreamDesc{ServerStreams: true}, attempt: tc.prev, next: make(chan struct{}),
			streamer: func(ctx context.Context, _ *grpc.StreamDesc, _ *grpc.ClientConn, _ string, _ ...grpc.CallOption) (grpc.ClientStream, error) {
				opened++
				return idleStream{}, nil
			},
		}
		st.committed.Store(tc.sent)
		_, err := s.run(context.Background(), st)
		assert.ErrorIs(t, err, command.ErrBadRequest, tc.name)
		assert.Same(t, tc.prev, st.attempt, tc.name)
	}
	assert.Zero(t, opened, "no stream opened for nothing")
}

// idleStream is a ClientStream that does nothing.
type idleStream struct{ grpc.ClientStream }

func (idleStream) CloseSend() error { return nil }

// recv waits for a value from ch, or fails the test.
func recv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(stuckAfter):
		t.Fatalf("waited %v for %s", stuckAfter, what)
		panic("unreachable")
	}
}

// A bidirectional stream sends and receives at once: a SendMsg that
// flow control holds until the caller reads does not keep RecvMsg from
// reading.
func TestBidirectionalStreamSendsWhileItReceives(t *testing.T) {
	_, serve := streamHarness(t)
	client := serve("chat", &streams{})
	chat, err := client.FullDuplexCall(context.Background())
	require.NoError(t, err)
	const messages, size = 200, 32 << 10
	sent := make(chan error, 1)
	go func() {
		body := make([]byte, size)
		for range messages {
			if err := chat.Send(&testgrpc.StreamingOutputCallRequest{Payload: &testgrpc.Payload{Body: body}}); err != nil {
				sent <- err
				return
			}
		}
		sent <- chat.CloseSend()
	}()
	received := 0
	for {
		_, err := chat.Recv()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		received++
	}
	assert.NoError(t, recv(t, sent, "the sends"))
	assert.Equal(t, messages, received)
}

// sendRecorder is a ClientStream that records what is sent on it, and
// whose SendMsg fails with sendErr.
type sendRecorder struct {
	grpc.ClientStream
	sendErr    error
	sent       []any
	sendClosed bool
}

func (s *sendRecorder) SendMsg(m any) error {
	s.sent = append(s.sent, m)
	return s.sendErr
}

func (s *sendRecorder) CloseSend() error {
	s.sendClosed = true
	return nil
}

// A stream that may be opened again keeps what its caller sends, and
// takes it without an error from a stream that has failed (io.EOF): the
// next attempt sends it, and RecvMsg tells the end. A stream that may
// not keeps nothing and says io.EOF, as gRPC's does.
func TestStreamSendMsgToAFailedStream(t *testing.T) {
	request := message("request")
	for _, retries := range []bool{true, false} {
		st := &outboundStream{retries: retries, bufferLeft: defaultRetryBufferSize, attempt: &streamAttempt{ClientStream: &sendRecorder{sendErr: io.EOF}}}
		err := st.SendMsg(request)
		if retries {
			assert.NoError(t, err)
			assert.Equal(t, []any{request}, st.sent)
		} else {
			assert.Equal(t, io.EOF, err)
			assert.Empty(t, st.sent)
		}
	}
	st := &outboundStream{retries: true, bufferLeft: defaultRetryBufferSize, attempt: &streamAttempt{ClientStream: &sendRecorder{sendErr: io.EOF}}}
	st.committed.Store(true)
	assert.Equal(t, io.EOF, st.SendMsg(message("more")), "committed: nothing is sent again")
	assert.Empty(t, st.sent)
}

// What is kept to send again counts each message's encoded size against
// the retry buffer: the message that would outgrow it, or whose size is
// not known, commits the stream, and what was kept is let go.
func TestStreamKeepsWithinItsRetryBuffer(t *testing.T) {
	a, b := message("a"), message("b")
	size := proto.Size(a)
	st := &outboundStream{retries: true, bufferLeft: 2 * size, attempt: &streamAttempt{ClientStream: &sendRecorder{}}}
	require.NoError(t, st.SendMsg(a))
	require.NoError(t, st.SendMsg(b))
	assert.Equal(t, []any{a, b}, st.sent, "exactly full")
	assert.False(t, st.committed.Load())
	require.NoError(t, st.SendMsg(message("c")))
	assert.True(t, st.committed.Load())
	assert.Nil(t, st.sent)

	st = &outboundStream{retries: true, bufferLeft: defaultRetryBufferSize, attempt: &streamAttempt{ClientStream: &sendRecorder{}}}
	require.NoError(t, st.SendMsg("not a protocol buffer message"))
	assert.True(t, st.committed.Load(), "a size not known")
}

// A next attempt sends what the caller sent, in order, and closes its
// side if the caller did; it stops at the first send that fails, whose
// stream's RecvMsg tells the end.
func TestStreamAttemptSendsAgain(t *testing.T) {
	prev := &streamAttempt{over: true}
	st := &outboundStream{attempt: prev, sent: []any{"a", "b"}, sendClosed: true, next: make(chan struct{})}
	next := st.next
	fresh := &sendRecorder{}
	require.NoError(t, st.begin(&streamAttempt{ClientStream: fresh}))
	assert.Equal(t, []any{"a", "b"}, fresh.sent)
	assert.True(t, fresh.sendClosed)
	select {
	case <-next:
	default:
		t.Fatal("the caller waiting for the next attempt is not told")
	}

	st.attempt.over = true
	broken := &sendRecorder{sendErr: io.EOF}
	require.NoError(t, st.begin(&streamAttempt{ClientStream: broken}))
	assert.Equal(t, []any{"a"}, broken.sent, "no send after one that failed")
}

// A stream committed while its attempt before waited for the next, as
// the caller sent a message that outgrew the retry buffer, ends as that
// attempt did: the next does not begin, and none follows it.
func TestStreamCommittedBeforeItsNextAttempt(t *testing.T) {
	failed := status.Error(codes.Unavailable, "not yet")
	prev := &streamAttempt{ended: make(chan error, 1)}
	st := &outboundStream{attempt: prev, next: make(chan struct{})}
	st.tell(prev, failed)
	assert.Equal(t, failed, <-prev.ended, "its run's")
	prev.over = true
	st.committed.Store(true)
	err := st.begin(&streamAttempt{ClientStream: &sendRecorder{}})
	assert.Equal(t, codes.Unavailable, status.Code(err))
	assert.True(t, command.IsBadRequest(err), "counted once, as the attempt before")
	var pb *pushbackError
	require.ErrorAs(t, err, &pb)
	wait, ok := pb.RetryAfter()
	assert.True(t, ok)
	assert.Negative(t, wait, "no attempt follows")
}

// The caller reads while an attempt sends again what it sent: a server
// that answers each message as it reads it, more of them than flow
// control lets wait unread, is read as the attempt sends, and the
// stream ends with every answer.
func TestBidirectionalStreamReadWhileItIsSentAgain(t *testing.T) {
	h, serve := streamHarness(t, WithConfig(retrying(2)))
	svc := &flakyStreams{failFirst: 1}
	// Not a deadline: the registry's clock, which the retry policy reads,
	// is the test's. Cancelled, a stream that hangs ends.
	ctx, cancel := context.WithCancel(context.Background())
	defer time.AfterFunc(stuckAfter, cancel).Stop()
	chat, err := serve("chat", svc).FullDuplexCall(ctx, grpc.MaxRetryRPCBufferSize(4<<20))
	require.NoError(t, err)
	const messages, size = 32, 32 << 10 // 1 MiB, past the windows of flow control both ways
	body := make([]byte, size)
	for range messages { // the first stream reads one and fails: the rest are kept for the next
		require.NoError(t, chat.Send(&testgrpc.StreamingOutputCallRequest{Payload: &testgrpc.Payload{Body: body}}))
	}
	require.NoError(t, chat.CloseSend())
	received := 0
	for {
		_, err := chat.Recv()
		if err == io.EOF {
			break
		}
		require.NoError(t, err, "after %d answers", received)
		received++
	}
	assert.Equal(t, messages, received)
	assert.Equal(t, int64(2), svc.duplexes.Load())
	assert.Equal(t, "[SUCCESS: 1, FAILURE: 1, RETRIED: 1]", h.events("chat"+fullDuplexCall).String())
}

// sendCounter is a ClientStream that records whether its side was closed
// before anything was sent on it.
type sendCounter struct {
	grpc.ClientStream
	sent        atomic.Int64
	closedEmpty atomic.Bool
}

func (s *sendCounter) SendMsg(m any) error { s.sent.Add(1); return s.ClientStream.SendMsg(m) }

func (s *sendCounter) CloseSend() error {
	s.closedEmpty.Store(s.sent.Load() == 0)
	return s.ClientStream.CloseSend()
}

// A stream committed while its next attempt opens (the caller sent past
// the retry buffer meanwhile) does not close that attempt's side: the
// server would take an empty upload, whole. The attempt is cancelled, and
// the stream ends as the attempt before it did.
func TestStreamCommittedWhileItsNextAttemptOpens(t *testing.T) {
	h := newHarness(t)
	interceptor := StreamClientInterceptor(WithRegistry(h.registry), WithConfig(retrying(2)))
	reopening, proceed := make(chan struct{}), make(chan struct{})
	var opens atomic.Int64
	second := &sendCounter{}
	gate := func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
		if opens.Add(1) != 2 {
			return streamer(ctx, desc, cc, method, opts...)
		}
		close(reopening)
		<-proceed
		cs, err := streamer(ctx, desc, cc, method, opts...)
		second.ClientStream = cs
		return second, err
	}
	client := testgrpc.NewTestServiceClient(dial(t, "upload", &flakyStreams{failFirst: 1}, nil, grpc.WithChainStreamInterceptor(interceptor, gate)))
	stream, err := client.StreamingInputCall(context.Background(), grpc.MaxRetryRPCBufferSize(8))
	require.NoError(t, err)
	require.NoError(t, stream.Send(message("ab")), "kept: 6 bytes")
	ended := make(chan error, 1)
	go func() { ended <- stream.RecvMsg(new(testgrpc.StreamingInputCallResponse)) }()
	recv(t, reopening, "the second attempt")
	assert.Equal(t, io.EOF, stream.Send(message("cdefghijk")), "past the buffer: committed, to the attempt that failed")
	close(proceed)
	assert.Equal(t, codes.Unavailable, status.Code(recv(t, ended, "the stream's end")))
	assert.False(t, second.closedEmpty.Load(), "the second attempt's side closed with nothing sent")
}

// When the attempt after a failure does not begin (its stream does not
// open), the caller gets that attempt's status, as the execution ended
// with it, not the failure before.
func TestStreamEndsAsItsLastAttemptDid(t *testing.T) {
	h := newHarness(t)
	interceptor := StreamClientInterceptor(WithRegistry(h.registry), WithConfig(retrying(2)))
	var opens atomic.Int64
	refuseSecond := func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
		if opens.Add(1) == 2 {
			return nil, status.Error(codes.PermissionDenied, "attempt 2")
		}
		return streamer(ctx, desc, cc, method, opts...)
	}
	client := testgrpc.NewTestServiceClient(dial(t, "feed", &flakyStreams{failFirst: 1}, nil, grpc.WithChainStreamInterceptor(interceptor, refuseSecond)))
	stream, err := client.StreamingOutputCall(context.Background(), outputs(1))
	require.NoError(t, err)
	_, err = receiveAll(stream)
	assert.Equal(t, codes.PermissionDenied, status.Code(err), "got %v", err)
	assert.Equal(t, "[FAILURE: 1, BAD_REQUEST: 1, EXCEPTION_THROWN: 1, RETRIED: 1]", h.events("feed"+streamingOutputCall).String())
}

// headerThenFail is a TestService whose first StreamingOutputCall sends
// its header and then fails, saying to retry at once.
type headerThenFail struct {
	streams
	outputs atomic.Int64
}

func (s *headerThenFail) StreamingOutputCall(req *testgrpc.StreamingOutputCallRequest, stream testgrpc.TestService_StreamingOutputCallServer) error {
	if s.outputs.Add(1) > 1 {
		return s.streams.StreamingOutputCall(req, stream)
	}
	if err := stream.SendHeader(metadata.Pairs("attempt", "1")); err != nil {
		return err
	}
	stream.SetTrailer(metadata.Pairs(PushbackTrailer, "0"))
	return status.Error(codes.Unavailable, "failed after its header")
}

// A stream whose server sent its header has begun to be answered: as in
// gRPC, its failure is not retried, whether or not the caller read the
// header.
func TestStreamCommittedByItsHeader(t *testing.T) {
	for _, read := range []bool{true, false} {
		t.Run(fmt.Sprintf("header read %v", read), func(t *testing.T) {
			h, serve := streamHarness(t, WithConfig(retrying(2)))
			svc := &headerThenFail{}
			stream, err := serve("feed", svc).StreamingOutputCall(context.Background(), outputs(1))
			require.NoError(t, err)
			if read {
				md, err := stream.Header()
				require.NoError(t, err)
				require.Equal(t, []string{"1"}, md.Get("attempt"))
			}
			_, err = receiveAll(stream)
			assert.Equal(t, codes.Unavailable, status.Code(err))
			assert.Equal(t, int64(1), svc.outputs.Load())
			assert.Equal(t, "[FAILURE: 1, FALLBACK_MISSING: 1, EXCEPTION_THROWN: 1]", h.events("feed"+streamingOutputCall).String())
		})
	}
}

// A stream committed while its next attempt opens (the caller sent past
// the retry buffer) ends as its failed attempt did: the one failure of
// the server is one FAILURE in the key's health, not two, since the
// attempt that does not begin is not the server's.
func TestStreamCommittedBeforeItsRetryCountsOneFailure(t *testing.T) {
	h := newHarness(t)
	interceptor := StreamClientInterceptor(WithRegistry(h.registry), WithConfig(retrying(2)))
	reopening, proceed := make(chan struct{}), make(chan struct{})
	var opens atomic.Int64
	gate := func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
		if opens.Add(1) == 2 {
			close(reopening)
			<-proceed
		}
		return streamer(ctx, desc, cc, method, opts...)
	}
	svc := &flakyStreams{failFirst: 1}
	client := testgrpc.NewTestServiceClient(dial(t, "upload", svc, nil, grpc.WithChainStreamInterceptor(interceptor, gate)))
	stream, err := client.StreamingInputCall(context.Background(), grpc.MaxRetryRPCBufferSize(8))
	require.NoError(t, err)
	require.NoError(t, stream.Send(message("ab")), "kept")
	ended := make(chan error, 1)
	go func() { ended <- stream.RecvMsg(new(testgrpc.StreamingInputCallResponse)) }()
	recv(t, reopening, "the second attempt")
	assert.Equal(t, io.EOF, stream.Send(message("cdefghijk")), "past the buffer: committed")
	close(proceed)
	err = recv(t, ended, "the stream's end")
	assert.Equal(t, codes.Unavailable, status.Code(err))
	assert.ErrorContains(t, err, "not yet")
	ev := h.events("upload" + streamingInputCall)
	assert.Equal(t, int64(1), ev[metricsstream.Failure], "%v", ev)
}

// headerOfSecond is a TestService whose first StreamingOutputCall fails
// before its header (trailers only), saying to retry at once, and whose
// next ones send the header "attempt: 2" before they answer.
type headerOfSecond struct {
	flakyStreams
}

func (s *headerOfSecond) StreamingOutputCall(req *testgrpc.StreamingOutputCallRequest, stream testgrpc.TestService_StreamingOutputCallServer) error {
	if s.outputs.Add(1) <= s.failFirst {
		return s.refuse(stream)
	}
	if err := stream.SendHeader(metadata.Pairs("attempt", "2")); err != nil {
		return err
	}
	return s.streams.StreamingOutputCall(req, stream)
}

// gRPC's Header waits for the header of the attempt the stream commits
// to, through its retries; a nil header says the stream ended without
// one (grpc.ClientStream.Header). A caller that asks for the header of a
// stream retried before it had one gets the next attempt's, not nil.
func TestStreamHeaderOfARetriedStream(t *testing.T) {
	h, serve := streamHarness(t, WithConfig(retrying(2)))
	svc := &headerOfSecond{flakyStreams{failFirst: 1}}
	stream, err := serve("feed", svc).StreamingOutputCall(context.Background(), outputs(1))
	require.NoError(t, err)
	md, err := stream.Header()
	require.NoError(t, err)
	assert.Equal(t, []string{"2"}, md.Get("attempt"), "the header of the attempt that answers, got %v", md)
	got, err := receiveAll(stream)
	assert.Equal(t, io.EOF, err)
	assert.Equal(t, []string{"0"}, got)
	assert.Equal(t, int64(2), svc.outputs.Load())
	assert.Equal(t, "[SUCCESS: 1, FAILURE: 1, RETRIED: 1]", h.events("feed"+streamingOutputCall).String())
}

// Attempts that all end before their header leave Header nil, and the
// stream's end for RecvMsg.
func TestStreamHeaderOfAStreamWhoseRetriesRunOut(t *testing.T) {
	h, serve := streamHarness(t, WithConfig(retrying(2)))
	svc := &headerOfSecond{flakyStreams{failFirst: 5}}
	stream, err := serve("feed", svc).StreamingOutputCall(context.Background(), outputs(1))
	require.NoError(t, err)
	md, err := stream.Header()
	assert.NoError(t, err)
	assert.Nil(t, md)
	_, err = receiveAll(stream)
	assert.Equal(t, codes.Unavailable, status.Code(err))
	assert.Equal(t, int64(2), svc.outputs.Load())
	assert.Equal(t, "[FAILURE: 2, FALLBACK_MISSING: 1, EXCEPTION_THROWN: 1, RETRIED: 1]", h.events("feed"+streamingOutputCall).String())
}

// gRPC calls a stream's grpc.OnFinish once, when the call completes (a
// stream interceptor's way to learn a stream's end): a stream the command
// opens again is one call to its caller, and its OnFinish is called once,
// not once per attempt.
func TestOnFinishOfARetriedStreamIsCalledOnce(t *testing.T) {
	_, serve := streamHarness(t, WithConfig(retrying(3)))
	svc := &flakyStreams{failFirst: 2}
	client := serve("feed", svc)
	opt, ch := onFinish()
	stream, err := client.StreamingOutputCall(context.Background(), outputs(2), opt)
	require.NoError(t, err)
	_, err = receiveAll(stream)
	require.Equal(t, io.EOF, err)
	require.Equal(t, int64(3), svc.outputs.Load())
	assert.Equal(t, []codes.Code{codes.OK}, finished(t, ch, 1), "one call, one OnFinish, with its status")
}
