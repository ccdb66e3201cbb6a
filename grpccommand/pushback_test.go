package grpccommand

import (
	"context"
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

func TestPushbackTrailerParses(t *testing.T) {
	refused := status.Error(codes.Unavailable, "busy")
	assert.Same(t, refused, withPushback(refused, nil), "no trailer: the error as it is")
	for _, tc := range []struct {
		trailer string
		want    time.Duration
	}{
		{"250", 250 * time.Millisecond},
		{"0", 0},
		{"-1", -1},
		{"soon", -1},
		{"99999999999999999", maxPushback.Truncate(time.Millisecond)},
	} {
		err := withPushback(refused, metadata.Pairs(PushbackTrailer, tc.trailer))
		var p observable.Pushback
		require.ErrorAs(t, err, &p, tc.trailer)
		got, ok := p.RetryAfter()
		assert.True(t, ok)
		assert.Equal(t, tc.want, got, tc.trailer)
		st, _ := status.FromError(err)
		assert.Equal(t, status.Convert(refused).Proto(), st.Proto(), "the server's status, as it sent it")
		assert.ErrorIs(t, err, refused)
	}

	// Several values, from two layers that each set the trailer, say
	// nothing certain: the call is not retried, as grpc-go's own retries
	// decide.
	err := withPushback(refused, metadata.Pairs(PushbackTrailer, "250", PushbackTrailer, "100"))
	var p observable.Pushback
	require.ErrorAs(t, err, &p)
	got, _ := p.RetryAfter()
	assert.Negative(t, got, "several values")
}

// recordingStream is a server's transport stream of no connection that
// keeps the trailer a call sets.
type recordingStream struct {
	grpc.ServerTransportStream
	trailer metadata.MD
}

func (s *recordingStream) SetTrailer(md metadata.MD) error {
	s.trailer = metadata.Join(s.trailer, md)
	return nil
}

// trailerStream is a server stream of no connection that keeps its
// trailer.
type trailerStream struct {
	fakeServerStream
	trailer metadata.MD
}

func (s *trailerStream) SetTrailer(md metadata.MD) { s.trailer = metadata.Join(s.trailer, md) }

func TestGuardRefusalsPushBack(t *testing.T) {
	g := newGuardHarness(t, command.Config{RateLimit: command.RateLimitConfig{Enabled: true, Rate: 4, Burst: 1}})
	call := func() ([]string, error) {
		rs := &recordingStream{}
		ctx := grpc.NewContextWithServerTransportStream(context.Background(), rs)
		_, err := g.guard.Unary(ctx, "request", &grpc.UnaryServerInfo{FullMethod: unaryCall}, answer("reply", nil))
		return rs.trailer.Get(PushbackTrailer), err
	}
	trailer, err := call()
	require.NoError(t, err)
	assert.Empty(t, trailer, "a call served says nothing")
	trailer, err = call()
	assert.Equal(t, codes.Unavailable, status.Code(err))
	assert.Equal(t, []string{"250"}, trailer, "a token every 250ms")
	g.Clock.Advance(100*time.Millisecond + 1)
	trailer, _ = call()
	assert.Equal(t, []string{"150"}, trailer, "149.999999ms, rounded up")

	ss := &trailerStream{}
	err = g.guard.Stream(nil, ss, &grpc.StreamServerInfo{FullMethod: unaryCall}, func(any, grpc.ServerStream) error { return nil })
	assert.Equal(t, codes.Unavailable, status.Code(err))
	assert.Equal(t, []string{"150"}, ss.trailer.Get(PushbackTrailer), "a stream's trailer")
}

// A client whose key retries, refused by a guard's rate limit, waits the
// pushback the guard sent, not its own backoff of a millisecond, and is
// served when it comes back.
func TestClientRetryWaitsTheGuardsPushback(t *testing.T) {
	g := newGuardHarness(t, command.Config{RateLimit: command.RateLimitConfig{Enabled: true, Rate: 1, Burst: 1}})
	h := newHarness(t, WithConfig(func(string) command.Config {
		return command.Config{Timeout: -1, Retry: command.RetryConfig{
			MaxAttempts: 2,
			Backoff:     observable.Backoff{Initial: time.Millisecond, Jitter: observable.NoJitter},
		}}
	}))
	b := &backend{unary: echo}
	client := h.serve(t, "limited", b, grpc.UnaryInterceptor(g.guard.Unary))

	_, err := client.UnaryCall(context.Background(), request("a"))
	require.NoError(t, err)
	idle := h.clock.Pending()
	done := make(chan error, 1)
	go func() {
		_, err := client.UnaryCall(context.Background(), request("b"))
		done <- err
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, h.clock.BlockUntil(ctx, idle+1), "refused, the call waits for its retry")
	h.clock.Advance(time.Second - time.Millisecond)
	assert.Equal(t, idle+1, h.clock.Pending(), "still waiting, long after the backoff's millisecond")
	g.Clock.Advance(time.Second) // the server has a token again
	h.clock.Advance(time.Millisecond)
	require.NoError(t, <-done)
	assert.Equal(t, int64(2), b.calls.Load())
	assert.Equal(t, "[SUCCESS: 2, FAILURE: 1, RETRIED: 1]", h.events("limited"+unaryCall).String())
}

// A server that says not to retry is not retried.
func TestClientDoesNotRetryWhenTheServerSaysNot(t *testing.T) {
	h := newHarness(t, WithConfig(func(string) command.Config {
		return command.Config{Timeout: -1, Retry: command.RetryConfig{
			MaxAttempts: 3,
			Backoff:     observable.Backoff{Initial: time.Millisecond, Jitter: observable.NoJitter},
		}}
	}))
	b := &backend{unary: func(ctx context.Context, _ *testgrpc.SimpleRequest) (*testgrpc.SimpleResponse, error) {
		_ = grpc.SetTrailer(ctx, metadata.Pairs(PushbackTrailer, "-1"))
		return nil, status.Error(codes.Unavailable, "going away")
	}}
	client := h.serve(t, "leaving", b)
	done := make(chan error, 1)
	go func() {
		_, err := client.UnaryCall(context.Background(), request("a"))
		done <- err
	}()
	// A retry would wait for the manual clock, which the test does not
	// move: the call would never return. (Counting the clock's timers
	// cannot tell: the call's first use of its pool arms the sweep of
	// idle pools.)
	var err error
	select {
	case err = <-done:
	case <-time.After(stuckAfter):
		t.Fatal("the call waits for a retry")
	}
	assert.Equal(t, codes.Unavailable, status.Code(err))
	assert.ErrorContains(t, err, "going away")
	assert.Equal(t, int64(1), b.calls.Load())
	assert.Equal(t, "[FAILURE: 1, FALLBACK_MISSING: 1, EXCEPTION_THROWN: 1]", h.events("leaving"+unaryCall).String())
}
