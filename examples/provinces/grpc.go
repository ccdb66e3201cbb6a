package main

import (
	"context"
	"net"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/rxhystrix/rxhystrix/command"
	"github.com/rxhystrix/rxhystrix/grpccommand"
)

// pushMethod is the provinces' gRPC method: the data in, a code out.
const pushMethod = "/provinces.Province/Push"

// provinceService describes the method for grpc.Server, written out so
// that the example needs no generated code: its messages are protocol
// buffers' well-known wrappers.
var provinceService = grpc.ServiceDesc{
	ServiceName: "provinces.Province",
	HandlerType: (*any)(nil),
	Methods: []grpc.MethodDesc{{
		MethodName: "Push",
		Handler: func(srv any, ctx context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
			if err := dec(new(wrapperspb.BytesValue)); err != nil {
				return nil, err
			}
			if !srv.(*province).accept(ctx) {
				return nil, status.FromContextError(ctx.Err()).Err()
			}
			return wrapperspb.String("OK"), nil
		},
	}},
}

// grpcProvince is a province's gRPC server.
type grpcProvince struct {
	addr   string
	server *grpc.Server
	served chan struct{}
}

func startGRPCProvince(p *province) *grpcProvince {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err) // as httptest.NewServer does
	}
	g := &grpcProvince{addr: lis.Addr().String(), server: grpc.NewServer(), served: make(chan struct{})}
	g.server.RegisterService(&provinceService, p)
	go func() {
		defer close(g.served)
		_ = g.server.Serve(lis)
	}()
	return g
}

func (g *grpcProvince) close() {
	g.server.Stop()
	<-g.served
}

// grpcService is service A calling the provinces over gRPC, its isolation
// in one option of the connections: the interceptor runs every push as a
// command of the province's address and the method, each address with a
// pool of its own.
type grpcService struct {
	conns map[string]*grpc.ClientConn
}

func newGRPCService(reg *command.Registry, provinces []*province, cfg command.Config, poolSize int) (*grpcService, error) {
	interceptor := grpccommand.UnaryClientInterceptor(
		grpccommand.WithRegistry(reg),
		grpccommand.WithConfig(func(string) command.Config { return cfg }),
		grpccommand.WithPoolConfig(func(string) command.PoolConfig { return command.PoolConfig{CoreSize: poolSize} }),
	)
	s := &grpcService{conns: make(map[string]*grpc.ClientConn, len(provinces))}
	for _, p := range provinces {
		conn, err := grpc.NewClient(p.Target,
			grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithUnaryInterceptor(interceptor))
		if err != nil {
			s.close()
			return nil, err
		}
		s.conns[p.Name] = conn
	}
	return s, nil
}

// push calls the province; a call the interceptor ended (timed out,
// rejected, short-circuited, failed) is answered as the seed's fallback
// answers it.
func (s *grpcService) push(ctx context.Context, p *province, data []byte) (receipt, error) {
	var code wrapperspb.StringValue
	err := s.conns[p.Name].Invoke(ctx, pushMethod, wrapperspb.Bytes(data), &code)
	if err != nil {
		return deferred(ctx, push{Province: p.Name, URL: p.Target, Data: data}, err)
	}
	return receipt{Code: code.GetValue()}, nil
}

func (s *grpcService) close() {
	for _, conn := range s.conns {
		_ = conn.Close()
	}
}
