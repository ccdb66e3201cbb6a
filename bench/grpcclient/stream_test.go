package grpcclient

import (
	"context"
	"io"
	"testing"

	"google.golang.org/grpc"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"

	"github.com/rxhystrix/rxhystrix/command"
	"github.com/rxhystrix/rxhystrix/grpccommand"
)

// StreamingOutputCall sends one message per response parameter.
func (echo) StreamingOutputCall(req *testgrpc.StreamingOutputCallRequest, stream testgrpc.TestService_StreamingOutputCallServer) error {
	for range req.GetResponseParameters() {
		if err := stream.Send(&testgrpc.StreamingOutputCallResponse{Payload: req.GetPayload()}); err != nil {
			return err
		}
	}
	return nil
}

// BenchmarkServerStream opens server streams of three messages in
// parallel, each read to its end, through a bare connection and through
// the stream interceptor (one execution per stream, under its key's
// semaphore, without a timeout, as a stream key has by default). A
// command's stream has a context that can be cancelled, for which gRPC
// starts a goroutine of its own: bare is the bare stream under such a
// context, the base the interceptor's row compares with, and
// bare-no-deadline the bare stream under context.Background.
func BenchmarkServerStream(b *testing.B) {
	addr := serveEcho(b)

	rows := []struct {
		name        string
		cancellable bool // each stream under a context that can be cancelled, as the interceptor's streams are
		make        func() ([]grpc.DialOption, func())
	}{
		{"bare-no-deadline", false, func() ([]grpc.DialOption, func()) { return nil, func() {} }},
		{"bare", true, func() ([]grpc.DialOption, func()) { return nil, func() {} }},
		{"rxhystrix-stream-interceptor", false, func() ([]grpc.DialOption, func()) {
			reg := command.NewRegistry()
			interceptor := grpccommand.StreamClientInterceptor(grpccommand.WithRegistry(reg),
				grpccommand.WithConfig(func(string) command.Config { return command.Config{MaxConcurrentRequests: 64} }))
			return []grpc.DialOption{grpc.WithStreamInterceptor(interceptor)}, reg.Close
		}},
	}
	req := &testgrpc.StreamingOutputCallRequest{
		ResponseParameters: make([]*testgrpc.ResponseParameters, 3),
		Payload:            &testgrpc.Payload{Body: []byte(`{"id":1}`)},
	}
	for _, row := range rows {
		b.Run(row.name, func(b *testing.B) {
			opts, closeRow := row.make()
			client, conn := dial(b, addr, opts)
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					ctx, cancel := context.Background(), context.CancelFunc(func() {})
					if row.cancellable {
						ctx, cancel = context.WithCancel(ctx)
					}
					stream, err := client.StreamingOutputCall(ctx, req)
					if err != nil {
						cancel()
						b.Error(err)
						return
					}
					for err == nil {
						_, err = stream.Recv()
					}
					cancel()
					if err != io.EOF {
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
