package grpccommand

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"

	"github.com/rxhystrix/rxhystrix/command"
	"github.com/rxhystrix/rxhystrix/metricsstream"
)

// idleConn is a connection that is never used: the tests below call the
// interceptor with invokers of their own, which need its Target only.
func idleConn(t *testing.T, name string) *grpc.ClientConn {
	t.Helper()
	cc, err := grpc.NewClient("passthrough:///"+name, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	t.Cleanup(func() { _ = cc.Close() })
	return cc
}

// An attempt the caller left at its timeout goes on, as a run does, and
// answers late; the caller's reply is not written behind its back (the
// race detector would say so, and so does the reply).
func TestAnAbandonedAttemptNeverWritesTheReply(t *testing.T) {
	h := newHarness(t, WithConfig(func(string) command.Config {
		return command.Config{Timeout: 100 * time.Millisecond}
	}))
	arrived, release, returned := make(chan struct{}), make(chan struct{}), make(chan struct{})
	deaf := func(_ context.Context, _ string, _, reply any, _ *grpc.ClientConn, _ ...grpc.CallOption) error {
		defer close(returned)
		close(arrived)
		<-release // deaf to its context, as an invoker behind an interceptor may be
		reply.(*testgrpc.SimpleResponse).Hostname = "late"
		return nil
	}
	reply := &testgrpc.SimpleResponse{}
	errc := make(chan error, 1)
	go func() {
		errc <- h.interceptor(context.Background(), unaryCall, request("x"), reply, idleConn(t, "deaf"), deaf)
	}()
	<-arrived
	h.clock.Advance(100 * time.Millisecond)
	assert.ErrorIs(t, <-errc, command.ErrTimeout)
	close(release)
	<-returned
	assert.Empty(t, reply.GetHostname(), "the late answer stays the attempt's")
}

// A hedge that answers first fills the reply; the first attempt, which
// answers once cancelled, writes only a reply of its own.
func TestTheHedgeThatWinsFillsTheReply(t *testing.T) {
	h := newHarness(t, WithConfig(func(string) command.Config {
		return command.Config{Hedge: command.HedgeConfig{MaxHedges: 1, Delay: 50 * time.Millisecond}}
	}))
	var attempts atomic.Int32
	firstArrived, firstReturned := make(chan struct{}), make(chan struct{})
	invoker := func(ctx context.Context, _ string, _, reply any, _ *grpc.ClientConn, _ ...grpc.CallOption) error {
		if attempts.Add(1) == 1 {
			defer close(firstReturned)
			close(firstArrived)
			<-ctx.Done()
			reply.(*testgrpc.SimpleResponse).Hostname = "first"
			return ctx.Err()
		}
		reply.(*testgrpc.SimpleResponse).Hostname = "second"
		return nil
	}
	reply := &testgrpc.SimpleResponse{}
	errc := make(chan error, 1)
	go func() {
		errc <- h.interceptor(context.Background(), unaryCall, request("x"), reply, idleConn(t, "hedged"), invoker)
	}()
	<-firstArrived
	h.clock.Advance(50 * time.Millisecond)
	require.NoError(t, <-errc)
	<-firstReturned
	assert.Equal(t, "second", reply.GetHostname())
	ev := h.events("hedged" + unaryCall)
	assert.Equal(t, int64(1), ev[metricsstream.Hedged])
	assert.Equal(t, int64(1), ev[metricsstream.Success])
	assert.Equal(t, int64(1), ev[metricsstream.Cancelled])
}

func TestAReplyThatIsNotAPointerIsABadRequest(t *testing.T) {
	h := newHarness(t)
	var invoked bool
	invoker := func(context.Context, string, any, any, *grpc.ClientConn, ...grpc.CallOption) error {
		invoked = true
		return nil
	}
	for _, reply := range []any{nil, "not a message", (*testgrpc.SimpleResponse)(nil)} {
		err := h.interceptor(context.Background(), unaryCall, request("x"), reply, idleConn(t, "odd"), invoker)
		assert.ErrorContains(t, err, "grpccommand: the reply of /grpc.testing.TestService/UnaryCall is")
		assert.ErrorContains(t, err, "not a pointer to a message")
	}
	assert.False(t, invoked)
	assert.Equal(t, int64(3), h.events("odd" + unaryCall)[metricsstream.BadRequest])
}

// A reply of a codec of the program's own, not a protocol buffer message,
// is copied as a value.
func TestMoveReplyCopiesAValueThatIsNotAMessage(t *testing.T) {
	type plain struct {
		N    int
		Tags []string
	}
	dst, src := &plain{N: 1, Tags: []string{"old"}}, &plain{N: 2, Tags: []string{"new"}}
	moveReply(dst, src)
	assert.Equal(t, plain{N: 2, Tags: []string{"new"}}, *dst)

	msg := &testgrpc.SimpleResponse{Hostname: "old", Username: "stale"}
	answer := &testgrpc.SimpleResponse{Hostname: "new", Payload: &testgrpc.Payload{Body: []byte("data")}}
	moveReply(msg, answer)
	assert.Equal(t, "new", msg.GetHostname())
	assert.Equal(t, "data", string(msg.GetPayload().GetBody()))
	assert.Empty(t, msg.GetUsername(), "the reply is the answer, not merged with what it held")
	assert.NotSame(t, answer.GetPayload(), msg.GetPayload(),
		"a message is copied as protobuf copies (proto.Merge), never as a Go value that would share the attempt's")
}
