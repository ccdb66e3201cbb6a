package grpccommand_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"

	"github.com/rxhystrix/rxhystrix/clock"
	"github.com/rxhystrix/rxhystrix/command"
	"github.com/rxhystrix/rxhystrix/grpccommand"
)

// A client of a health service whose calls are commands: a call for a
// service the server does not know is a bad request, which the caller
// gets as the server sent it and which never opens the circuit.
func Example() {
	registry := command.NewRegistry()
	defer registry.Close()

	// The downstream, in memory here.
	lis := bufconn.Listen(1 << 16)
	srv := grpc.NewServer()
	checks := health.NewServer()
	checks.SetServingStatus("orders", healthpb.HealthCheckResponse_SERVING)
	healthpb.RegisterHealthServer(srv, checks)
	go srv.Serve(lis)
	defer srv.Stop()

	conn, err := grpc.NewClient("passthrough:///orders.internal:50051",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithUnaryInterceptor(grpccommand.UnaryClientInterceptor(grpccommand.WithRegistry(registry))))
	if err != nil {
		panic(err)
	}
	defer conn.Close()
	client := healthpb.NewHealthClient(conn)

	resp, err := client.Check(context.Background(), &healthpb.HealthCheckRequest{Service: "orders"})
	fmt.Println(resp.GetStatus(), err)
	_, err = client.Check(context.Background(), &healthpb.HealthCheckRequest{Service: "billing"})
	fmt.Println(status.Code(err), status.Convert(err).Message())

	const key = "orders.internal:50051/grpc.health.v1.Health/Check"
	cfg, _ := registry.Config(key)
	fmt.Println("pool:", cfg.Pool, "open:", registry.Breaker(key).IsOpen())
	// Output:
	// SERVING <nil>
	// NotFound unknown service
	// pool: orders.internal:50051 open: false
}

// A server whose incoming calls are commands of one key, limited to one
// call a second: the second call of the same second is refused with
// Unavailable, without reaching the handler.
func ExampleGuard() {
	registry := command.NewRegistry(command.WithClock(clock.NewManual(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))))
	defer registry.Close()
	guard := &grpccommand.Guard{Registry: registry, Config: func(string) command.Config {
		return command.Config{RateLimit: command.RateLimitConfig{Enabled: true, Rate: 1}} // or AdaptiveLimit: limit.Vegas{}
	}}

	lis := bufconn.Listen(1 << 16)
	srv := grpc.NewServer(grpc.UnaryInterceptor(guard.Unary), grpc.StreamInterceptor(guard.Stream))
	checks := health.NewServer()
	healthpb.RegisterHealthServer(srv, checks)
	go srv.Serve(lis)
	defer srv.Stop()

	conn, err := grpc.NewClient("passthrough:///orders",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		panic(err)
	}
	defer conn.Close()
	client := healthpb.NewHealthClient(conn)
	for range 2 {
		resp, err := client.Check(context.Background(), &healthpb.HealthCheckRequest{})
		fmt.Println(resp.GetStatus(), status.Code(err))
	}
	// Output:
	// SERVING OK
	// UNKNOWN Unavailable
}

// Watching a health service: each stream is one execution, which holds
// a permit of its key while the stream is open (here the key has one),
// so a second watch is refused until the first ends.
func ExampleStreamClientInterceptor() {
	registry := command.NewRegistry()
	defer registry.Close()

	lis := bufconn.Listen(1 << 16)
	srv := grpc.NewServer()
	checks := health.NewServer()
	checks.SetServingStatus("orders", healthpb.HealthCheckResponse_SERVING)
	healthpb.RegisterHealthServer(srv, checks)
	go srv.Serve(lis)
	defer srv.Stop()

	conn, err := grpc.NewClient("passthrough:///orders.internal:50051",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithStreamInterceptor(grpccommand.StreamClientInterceptor(grpccommand.WithRegistry(registry),
			grpccommand.WithConfig(func(string) command.Config { return command.Config{MaxConcurrentRequests: 1} }))))
	if err != nil {
		panic(err)
	}
	defer conn.Close()
	client := healthpb.NewHealthClient(conn)

	ctx, cancel := context.WithCancel(context.Background())
	watch, err := client.Watch(ctx, &healthpb.HealthCheckRequest{Service: "orders"})
	if err != nil {
		panic(err)
	}
	resp, err := watch.Recv()
	fmt.Println(resp.GetStatus(), err)
	_, err = client.Watch(context.Background(), &healthpb.HealthCheckRequest{Service: "orders"})
	fmt.Println(status.Code(err), errors.Is(err, command.ErrSemaphoreRejected))

	checks.SetServingStatus("orders", healthpb.HealthCheckResponse_NOT_SERVING)
	resp, err = watch.Recv()
	fmt.Println(resp.GetStatus(), err)
	cancel()
	_, err = watch.Recv()
	fmt.Println(status.Code(err))
	// Output:
	// SERVING <nil>
	// Unavailable true
	// NOT_SERVING <nil>
	// Canceled
}
