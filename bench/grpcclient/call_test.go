package grpcclient

import (
	"context"
	"net"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"

	"github.com/rxhystrix/rxhystrix/command"
	"github.com/rxhystrix/rxhystrix/grpccommand"
)

type echo struct {
	testgrpc.UnimplementedTestServiceServer
}

func (echo) UnaryCall(_ context.Context, req *testgrpc.SimpleRequest) (*testgrpc.SimpleResponse, error) {
	return &testgrpc.SimpleResponse{Payload: req.GetPayload(), Username: "ann"}, nil
}

// serveEcho serves echo on a loopback port until the benchmark ends,
// and returns its address.
func serveEcho(b *testing.B) string {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := grpc.NewServer()
	testgrpc.RegisterTestServiceServer(srv, echo{})
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = srv.Serve(lis)
	}()
	b.Cleanup(func() {
		srv.Stop()
		<-served
	})
	return lis.Addr().String()
}

// dial connects to addr with opts.
func dial(b *testing.B, addr string, opts []grpc.DialOption) (testgrpc.TestServiceClient, *grpc.ClientConn) {
	conn, err := grpc.NewClient(addr, append(opts, grpc.WithTransportCredentials(insecure.NewCredentials()))...)
	if err != nil {
		b.Fatal(err)
	}
	return testgrpc.NewTestServiceClient(conn), conn
}

// BenchmarkUnaryCall makes unary calls in parallel through each
// connection to a loopback server.
func BenchmarkUnaryCall(b *testing.B) {
	addr := serveEcho(b)

	rows := []struct {
		name     string
		deadline bool // each call under a context with a 1s timeout, as the commands' calls are
		make     func() ([]grpc.DialOption, func())
	}{
		{"bare-no-deadline", false, func() ([]grpc.DialOption, func()) { return nil, func() {} }},
		{"bare", true, func() ([]grpc.DialOption, func()) { return nil, func() {} }},
		{"rxhystrix-interceptor", false, func() ([]grpc.DialOption, func()) {
			reg := command.NewRegistry()
			interceptor := grpccommand.UnaryClientInterceptor(grpccommand.WithRegistry(reg),
				grpccommand.WithPoolConfig(func(string) command.PoolConfig { return command.PoolConfig{CoreSize: 64} }))
			return []grpc.DialOption{grpc.WithUnaryInterceptor(interceptor)}, reg.Close
		}},
		{"rxhystrix-interceptor-semaphore", false, func() ([]grpc.DialOption, func()) {
			reg := command.NewRegistry()
			interceptor := grpccommand.UnaryClientInterceptor(grpccommand.WithRegistry(reg),
				grpccommand.WithConfig(func(string) command.Config {
					return command.Config{Isolation: command.SemaphoreIsolation, MaxConcurrentRequests: 64}
				}))
			return []grpc.DialOption{grpc.WithUnaryInterceptor(interceptor)}, reg.Close
		}},
	}
	req := &testgrpc.SimpleRequest{Payload: &testgrpc.Payload{Body: []byte(`{"id":1}`)}}
	for _, row := range rows {
		b.Run(row.name, func(b *testing.B) {
			opts, closeRow := row.make()
			client, conn := dial(b, addr, opts)
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					ctx, cancel := context.Background(), context.CancelFunc(func() {})
					if row.deadline {
						ctx, cancel = context.WithTimeout(ctx, time.Second)
					}
					_, err := client.UnaryCall(ctx, req)
					cancel()
					if err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.StopTimer()
			_ = conn.Close()
			closeRow()
		})
	}
}
