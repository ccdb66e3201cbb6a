package grpccommand

import (
	"context"
	"fmt"
	"reflect"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
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
	opts    []grpc.CallOption // the caller's, but for those of metaOpts

	// The caller's grpc.Header, grpc.Trailer and grpc.Peer options: no
	// attempt writes them either, since attempts run side by side and
	// may end after the call; the caller gets the metadata of the
	// attempt whose answer it got (setMetadata).
	meta metaOpts

	mu     sync.Mutex
	failed *attemptMetadata // of the last attempt the server failed
}

// metaOpts are a caller's options that an attempt would write into.
type metaOpts struct {
	headers, trailers []*metadata.MD
	peers             []*peer.Peer
	// The caller's grpc.OnFinish callbacks, which gRPC calls once a call
	// completes: the call's, once, not each attempt's (finish).
	onFinish []func(error)
}

// finish calls the caller's OnFinish callbacks with err, what the call
// returns.
func (m *metaOpts) finish(err error) {
	for _, f := range m.onFinish {
		f(err)
	}
}

// splitMetaOpts returns opts without their Header, Trailer, Peer and
// OnFinish options, and those options; with finishOnly, without their
// OnFinish options alone, and those (a stream's, whose attempts write the
// others as gRPC's stream would, and do not call OnFinish).
func splitMetaOpts(opts []grpc.CallOption, finishOnly bool) ([]grpc.CallOption, metaOpts) {
	var m metaOpts
	rest := opts[:0:0]
	for _, o := range opts {
		switch o := o.(type) {
		case grpc.OnFinishCallOption:
			m.onFinish = append(m.onFinish, o.OnFinish)
			continue
		case grpc.HeaderCallOption:
			if !finishOnly {
				m.headers = append(m.headers, o.HeaderAddr)
				continue
			}
		case grpc.TrailerCallOption:
			if !finishOnly {
				m.trailers = append(m.trailers, o.TrailerAddr)
				continue
			}
		case grpc.PeerCallOption:
			if !finishOnly {
				m.peers = append(m.peers, o.PeerAddr)
				continue
			}
		}
		rest = append(rest, o)
	}
	if len(rest) == len(opts) {
		return opts, m
	}
	return rest, m
}

// finishNow calls the OnFinish callbacks of opts with err, the error of
// a call that ends before its command runs (an invalid key or
// configuration), and returns err.
func finishNow(opts []grpc.CallOption, err error) error {
	_, m := splitMetaOpts(opts, true)
	m.finish(err)
	return err
}

// attemptMetadata is what one attempt's call got besides its reply.
type attemptMetadata struct {
	header, trailer metadata.MD
	peer            peer.Peer
}

// answered is the answer of an attempt that succeeded.
type answered struct {
	reply any
	md    *attemptMetadata
}

// setMetadata writes md into the caller's options, as gRPC writes a
// call's once it has ended.
func (m *metaOpts) setMetadata(md *attemptMetadata) {
	for _, h := range m.headers {
		*h = md.header
	}
	for _, t := range m.trailers {
		*t = md.trailer
	}
	if md.peer.Addr != nil {
		for _, p := range m.peers {
			*p = md.peer
		}
	}
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
	// So do the header and the peer the caller asked for.
	md := &attemptMetadata{}
	opts := append(call.opts[:len(call.opts):len(call.opts)], grpc.Trailer(&md.trailer))
	if len(call.meta.headers) > 0 {
		opts = append(opts, grpc.Header(&md.header))
	}
	if len(call.meta.peers) > 0 {
		opts = append(opts, grpc.Peer(&md.peer))
	}
	err := call.invoker(withOutgoingMark(ctx, c.faultKey), call.method, call.req, reply, call.cc, opts...)
	if err == nil {
		return &answered{reply: reply, md: md}, nil
	}
	if ctx.Err() != nil {
		// The command's timeout or the caller's cancellation ended the
		// attempt; the command tells which.
		return nil, ctx.Err()
	}
	call.mu.Lock()
	call.failed = md
	call.mu.Unlock()
	return nil, withPushback(err, md.trailer) // a bad request if its code is no failure (newClient's BadRequests)
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
