package grpccommand

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/rxhystrix/rxhystrix/command"
)

// markEcho answers each call with the mark for fault injection its
// context carries and the metadata it came with, as "marked [keys] value".
type markEcho struct{ backend }

func markOf(ctx context.Context) string {
	keys, marked := command.FaultInjectionOf(ctx)
	md, _ := metadata.FromIncomingContext(ctx)
	return fmt.Sprint(marked, keys, md.Get(FaultMetadata))
}

func (b *markEcho) UnaryCall(ctx context.Context, _ *testgrpc.SimpleRequest) (*testgrpc.SimpleResponse, error) {
	return &testgrpc.SimpleResponse{Username: markOf(ctx)}, nil
}

func (b *markEcho) FullDuplexCall(stream grpc.BidiStreamingServer[testgrpc.StreamingOutputCallRequest, testgrpc.StreamingOutputCallResponse]) error {
	return stream.Send(&testgrpc.StreamingOutputCallResponse{Payload: &testgrpc.Payload{Body: []byte(markOf(stream.Context()))}})
}

// A call's mark for fault injection goes in its metadata from the client
// interceptors, unary and stream, and the server interceptors mark the
// handler's context with it; an unmarked call sends none.
func TestFaultMetadataCarriesTheMark(t *testing.T) {
	r := newRegistry(t)
	conn := dial(t, "users", &markEcho{}, []grpc.ServerOption{
		grpc.UnaryInterceptor(UnaryServerInterceptor(WithFaultMetadata(FaultMetadata))),
		grpc.StreamInterceptor(StreamServerInterceptor(WithFaultMetadata(FaultMetadata))),
	},
		grpc.WithUnaryInterceptor(UnaryClientInterceptor(WithRegistry(r), WithFaultMetadata(FaultMetadata))),
		grpc.WithStreamInterceptor(StreamClientInterceptor(WithRegistry(r), WithFaultMetadata(FaultMetadata))),
	)
	client := testgrpc.NewTestServiceClient(conn)
	bg := context.Background()
	for _, tc := range []struct {
		name string
		ctx  context.Context
		want string
	}{
		{"keys", command.WithFaultInjection(bg, "GetUser", "Province 17"), "true [GetUser Province 17] [GetUser,Province%2017]"},
		{"every key", command.WithFaultInjection(bg), "true [] [*]"},
		{"unmarked", bg, "false [] []"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := client.UnaryCall(tc.ctx, request("x"))
			require.NoError(t, err)
			assert.Equal(t, tc.want, resp.GetUsername(), "unary")

			ctx, cancel := context.WithCancel(tc.ctx)
			defer cancel()
			stream, err := client.FullDuplexCall(ctx)
			require.NoError(t, err)
			reply, err := stream.Recv()
			require.NoError(t, err)
			assert.Equal(t, tc.want, string(reply.GetPayload().GetBody()), "stream")
		})
	}
}

// A call whose mark is malformed fails InvalidArgument, naming the key,
// and is not served; without WithFaultMetadata the metadata is not read.
func TestMalformedFaultMetadataIsInvalidArgument(t *testing.T) {
	b := &markEcho{}
	conn := dial(t, "users", b, []grpc.ServerOption{
		grpc.UnaryInterceptor(UnaryServerInterceptor(WithFaultMetadata("x-faults"))),
	})
	ctx := metadata.AppendToOutgoingContext(context.Background(), "x-faults", "%zz")
	_, err := testgrpc.NewTestServiceClient(conn).UnaryCall(ctx, request("x"))
	assert.Equal(t, codes.InvalidArgument, status.Code(err))
	assert.ErrorContains(t, err, `grpccommand: metadata x-faults: "%zz" is not a command key`)

	plain := dial(t, "plain", &markEcho{}, []grpc.ServerOption{grpc.UnaryInterceptor(UnaryServerInterceptor())})
	resp, err := testgrpc.NewTestServiceClient(plain).UnaryCall(metadata.AppendToOutgoingContext(context.Background(), FaultMetadata, "*"), request("x"))
	require.NoError(t, err)
	assert.Equal(t, "false [] [*]", resp.GetUsername())
}

func TestWithFaultMetadataPanicsOnABadKey(t *testing.T) {
	assert.PanicsWithValue(t, `grpccommand: WithFaultMetadata: "X-Faults" is not a metadata key for text`, func() { WithFaultMetadata("X-Faults") })
}
