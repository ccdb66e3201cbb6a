package grpccommand

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/test/bufconn"

	"github.com/rxhystrix/rxhystrix/clock"
	"github.com/rxhystrix/rxhystrix/command"
	"github.com/rxhystrix/rxhystrix/metricsstream"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// t0 is where the tests' manual clocks start: ahead of the real time,
// since gRPC sends a call's deadline to the server, which holds it to
// its own clock.
var t0 = time.Now().Add(24 * time.Hour)

const unaryCall = "/grpc.testing.TestService/UnaryCall"

// stuckAfter bounds, in real time, a wait for what should have happened
// already, so that a broken test fails instead of hanging; it never
// paces a test.
const stuckAfter = 10 * time.Second

// harness is a client interceptor on a registry of its own on a manual
// clock.
type harness struct {
	clock       *clock.Manual
	registry    *command.Registry
	interceptor grpc.UnaryClientInterceptor
}

func newHarness(t *testing.T, opts ...Option) *harness {
	t.Helper()
	h := &harness{clock: clock.NewManual(t0)}
	h.registry = command.NewRegistry(command.WithClock(h.clock))
	t.Cleanup(h.registry.Close) // last: after the backends' cleanups
	h.interceptor = UnaryClientInterceptor(append([]Option{WithRegistry(h.registry)}, opts...)...)
	return h
}

// events returns the cumulative counts of key's events once the rolling
// buckets have closed.
func (h *harness) events(key string) metricsstream.EventTotals {
	h.clock.Advance(time.Second)
	m, ok := h.registry.Metrics().LookupCommand(key)
	if !ok {
		return metricsstream.EventTotals{}
	}
	return m.CumulativeCounts()
}

// backend is a TestService whose UnaryCall is unary, counting its calls.
type backend struct {
	testgrpc.UnimplementedTestServiceServer
	unary func(context.Context, *testgrpc.SimpleRequest) (*testgrpc.SimpleResponse, error)
	calls atomic.Int64
}

func (b *backend) UnaryCall(ctx context.Context, req *testgrpc.SimpleRequest) (*testgrpc.SimpleResponse, error) {
	b.calls.Add(1)
	return b.unary(ctx, req)
}

// serve starts a server of b on an in-memory listener, stopped at the
// test's end, and returns a client of it through the harness's
// interceptor, on the target "passthrough:///"+name.
func (h *harness) serve(t *testing.T, name string, b *backend, opts ...grpc.ServerOption) testgrpc.TestServiceClient {
	t.Helper()
	return testgrpc.NewTestServiceClient(dial(t, name, b, opts, grpc.WithUnaryInterceptor(h.interceptor)))
}

func dial(t *testing.T, name string, svc testgrpc.TestServiceServer, serverOpts []grpc.ServerOption, dialOpts ...grpc.DialOption) *grpc.ClientConn {
	t.Helper()
	lis := bufconn.Listen(1 << 16)
	srv := grpc.NewServer(serverOpts...)
	testgrpc.RegisterTestServiceServer(srv, svc)
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = srv.Serve(lis)
	}()
	conn, err := grpc.NewClient("passthrough:///"+name, append([]grpc.DialOption{
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
	}, dialOpts...)...)
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = conn.Close()
		srv.Stop()
		<-served
	})
	return conn
}

// echo answers with the request's payload.
func echo(_ context.Context, req *testgrpc.SimpleRequest) (*testgrpc.SimpleResponse, error) {
	return &testgrpc.SimpleResponse{Payload: req.GetPayload(), Hostname: "echo"}, nil
}

func request(body string) *testgrpc.SimpleRequest {
	return &testgrpc.SimpleRequest{Payload: &testgrpc.Payload{Body: []byte(body)}}
}
