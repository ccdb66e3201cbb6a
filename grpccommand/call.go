package grpccommand

import (
	"context"
	"fmt"
	"reflect"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"

	"github.com/rxhystrix/rxhystrix/command"
)

// call is one unary call on its way through a command.
type call struct {
	method  string
	req     any
	reply   any // the caller's; no attempt writes it
	cc      *grpc.ClientConn
	invoker grpc.UnaryInvoker
	opts    []grpc.CallOption
}

// invoke is the command's run: one attempt of the call, decoded into a
// reply of its own. The caller may leave before an attempt returns (a
// timeout, a cancellation, a hedge that won), and attempts may run side
// by side, so none writes the caller's reply: the caller moves the
// winning attempt's into it (moveReply).
func (c *client) invoke(ctx context.Context, call *call) (any, error) {
	t := reflect.TypeOf(call.reply)
	if t == nil || t.Kind() != reflect.Pointer || reflect.ValueOf(call.reply).IsNil() {
		return nil, command.BadRequest(fmt.Errorf("grpccommand: the reply of %s is %T, not a pointer to a message", call.method, call.reply))
	}
	reply := reflect.New(t.Elem()).Interface()
	// The trailer may push back (PushbackTrailer). The option goes on a
	// copy of the caller's: attempts of one call run side by side.
	var trailer metadata.MD
	opts := append(call.opts[:len(call.opts):len(call.opts)], grpc.Trailer(&trailer))
	err := call.invoker(withOutgoingMark(ctx, c.faultKey), call.method, call.req, reply, call.cc, opts...)
	if err == nil {
		return reply, nil
	}
	if ctx.Err() != nil {
		// The command's timeout or the caller's cancellation ended the
		// attempt; the command tells which.
		return nil, ctx.Err()
	}
	return nil, withPushback(err, trailer) // a bad request if its code is no failure (newClient's BadRequests)
}

// moveReply makes dst what src is. A protocol buffer message is merged
// into dst once dst is reset, as proto.Merge copies; any other reply (of
// a codec of the program's own) is copied as a value.
func moveReply(dst, src any) {
	if d, ok := dst.(proto.Message); ok {
		if s, ok := src.(proto.Message); ok {
			proto.Reset(d)
			proto.Merge(d, s)
			return
		}
	}
	reflect.ValueOf(dst).Elem().Set(reflect.ValueOf(src).Elem())
}
