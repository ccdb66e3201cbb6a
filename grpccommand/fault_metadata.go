package grpccommand

import (
	"context"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"

	"github.com/rxhystrix/rxhystrix/internal/faultmark"
)

// FaultMetadata is the metadata key that carries a call's mark for fault
// injection (command.WithFaultInjection) from service to service, for
// [WithFaultMetadata]: "*" marks the call for every key, and a
// comma-separated list of keys, each escaped as a URL path segment
// (url.PathEscape), for those keys. It is httpcommand.FaultHeader as gRPC
// spells metadata keys, with the same values.
const FaultMetadata = "rxhystrix-fault-injection"

// FaultMetadataOption is what [WithFaultMetadata] returns: an [Option] of
// the client interceptors and a [ServerOption] of the server
// interceptors at once.
type FaultMetadataOption struct{ key string }

// WithFaultMetadata carries a call's mark for fault injection in the
// metadata key ([FaultMetadata], say), so that a test request reaches,
// through every service of the call graph, the faults its commands
// inject into marked requests only (command.FaultConfig.MarkedOnly), as
// Netflix's Failure Injection Testing marked its requests.
//
// Given to [UnaryServerInterceptor] or [StreamServerInterceptor], it
// marks the context of each incoming call whose metadata has the key, as
// command.WithFaultInjection does; a call whose value is malformed fails
// with the code InvalidArgument, naming the key, and is not served.
// Given to [UnaryClientInterceptor] or [StreamClientInterceptor], each
// outgoing call (each attempt) whose context is marked sends the mark
// under the key, for the downstream service to read.
//
// Anyone who can call a service can send the metadata: a service that
// honours it must take it only from clients it trusts.
//
// It panics if key is not a metadata key of text values: lowercase
// letters, digits, '-', '_' and '.', not beginning with "grpc-" nor
// ending with "-bin".
func WithFaultMetadata(key string) FaultMetadataOption {
	if !validTextKey(key) {
		panic(fmt.Sprintf("grpccommand: WithFaultMetadata: %q is not a metadata key for text", key))
	}
	return FaultMetadataOption{key}
}

func (o FaultMetadataOption) apply(c *client) { c.faultKey = o.key }

func (o FaultMetadataOption) applyServer(s *server) { s.faultKey = o.key }

// withOutgoingMark returns ctx with its mark for fault injection in its
// outgoing metadata under key, or ctx itself when key is "" or ctx is not
// marked.
func withOutgoingMark(ctx context.Context, key string) context.Context {
	if key == "" {
		return ctx
	}
	if v, marked := faultmark.Value(ctx); marked {
		return metadata.AppendToOutgoingContext(ctx, key, v)
	}
	return ctx
}

// markIncoming returns ctx marked for fault injection as its incoming
// metadata says under s's key, or an error of code InvalidArgument.
func (s *server) markIncoming(ctx context.Context) (context.Context, error) {
	if s.faultKey == "" {
		return ctx, nil
	}
	marked, err := faultmark.Mark(ctx, metadata.ValueFromIncomingContext(ctx, s.faultKey))
	if err != nil {
		return nil, &Error{err: fmt.Errorf("grpccommand: metadata %s: %w", s.faultKey, err), code: codes.InvalidArgument}
	}
	return marked, nil
}
