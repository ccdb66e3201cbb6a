package grpccommand

import (
	"context"
	"fmt"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/rxhystrix/rxhystrix/command"
	"github.com/rxhystrix/rxhystrix/internal/keyedcommand"
)

// LogTrailer is the trailer key [WithLogTrailer] suggests, the name of
// Hystrix's X-HystrixLog header as gRPC's metadata spells keys.
const LogTrailer = "x-hystrixlog"

// UnaryServerInterceptor returns an interceptor that serves each incoming
// unary call in a request context of its own, as Hystrix's
// HystrixRequestContextServletFilter serves each HTTP request: the
// handler's context carries command.WithRequestContext's, so the commands
// it executes with that context (or one made from it) share one request
// cache, one request log and the request-scoped collapsers. The request
// context ends with the call: its log then goes to the request events
// stream (metricsstream.RequestEventsHandler) if somebody watches it. It
// panics if an option is nil.
//
//	srv := grpc.NewServer(grpc.ChainUnaryInterceptor(
//		grpccommand.UnaryServerInterceptor(grpccommand.WithLogTrailer(grpccommand.LogTrailer))))
func UnaryServerInterceptor(opts ...ServerOption) grpc.UnaryServerInterceptor {
	s := newServer("UnaryServerInterceptor", opts)
	return func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		ctx, err := s.markIncoming(ctx)
		if err != nil {
			return nil, err
		}
		ctx = command.WithRequestContext(ctx)
		resp, err := handler(ctx, req)
		if trailer := s.trailer(ctx); trailer != nil {
			_ = grpc.SetTrailer(ctx, trailer)
		}
		return resp, err
	}
}

// StreamServerInterceptor returns an interceptor that serves each
// incoming stream in a request context of its own, as
// [UnaryServerInterceptor] serves a unary call: the stream's Context
// carries it, and it ends with the stream. It panics if an option is nil.
func StreamServerInterceptor(opts ...ServerOption) grpc.StreamServerInterceptor {
	s := newServer("StreamServerInterceptor", opts)
	return func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		ctx, err := s.markIncoming(ss.Context())
		if err != nil {
			return err
		}
		ctx = command.WithRequestContext(ctx)
		err = handler(srv, &requestStream{ServerStream: ss, ctx: ctx})
		if trailer := s.trailer(ctx); trailer != nil {
			ss.SetTrailer(trailer)
		}
		return err
	}
}

// requestStream is a server stream whose Context carries a request
// context.
type requestStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *requestStream) Context() context.Context { return s.ctx }

// A ServerOption changes what [UnaryServerInterceptor] and
// [StreamServerInterceptor] do.
type ServerOption interface {
	applyServer(*server)
}

type logTrailerOption string

func (o logTrailerOption) applyServer(s *server) { s.logTrailer = string(o) }

// WithLogTrailer sends each call's request log in its trailer, under
// key, as Hystrix's HystrixRequestLogViaResponseHeaderServletFilter sends
// it in the X-HystrixLog header ([LogTrailer]): "GetUser[SUCCESS][12ms],
// GetOrders[TIMEOUT, FALLBACK_SUCCESS][1000ms]" (command.RequestLog.String),
// a byte that is not printable ASCII, or a '%', percent-encoded as gRPC
// encodes a status message (a key "Grüße" is "Gr%C3%BC%C3%9Fe").
// The trailer goes once the handler has returned, so it lists every
// execution of the call that ended by then; a call that logged nothing
// gets none. It panics if key is not a metadata key of text values:
// lowercase letters, digits, '-', '_' and '.', not beginning with "grpc-"
// nor ending with "-bin".
func WithLogTrailer(key string) ServerOption {
	if !validTextKey(key) {
		panic(fmt.Sprintf("grpccommand: WithLogTrailer: %q is not a metadata key for text", key))
	}
	return logTrailerOption(key)
}

// server is what the server interceptors are made of.
type server struct {
	logTrailer string // "": no trailer
	faultKey   string // "": the calls' marks for fault injection are not read (see WithFaultMetadata)
}

func newServer(name string, opts []ServerOption) *server {
	s := &server{}
	for i, o := range opts {
		if o == nil {
			panic(fmt.Sprintf("grpccommand: %s: option %d is nil", name, i))
		}
		o.applyServer(s)
	}
	return s
}

// trailer returns the trailer of a call whose request context is ctx's,
// or nil if it has none.
func (s *server) trailer(ctx context.Context) metadata.MD {
	if s.logTrailer == "" {
		return nil
	}
	log := keyedcommand.LogText(ctx)
	if log == "" {
		return nil
	}
	return metadata.Pairs(s.logTrailer, log)
}

// validTextKey reports whether key is a metadata key gRPC sends as text:
// its characters are those gRPC allows, and it is neither reserved
// ("grpc-") nor binary ("-bin").
func validTextKey(key string) bool {
	if key == "" || strings.HasPrefix(key, "grpc-") || strings.HasSuffix(key, "-bin") {
		return false
	}
	for _, r := range key {
		switch {
		case 'a' <= r && r <= 'z', '0' <= r && r <= '9', r == '-', r == '_', r == '.':
		default:
			return false
		}
	}
	return true
}
