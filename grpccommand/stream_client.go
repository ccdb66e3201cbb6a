package grpccommand

import (
	"context"
	"errors"
	"io"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"

	"github.com/rxhystrix/rxhystrix/command"
	"github.com/rxhystrix/rxhystrix/internal/keyedcommand"
	"github.com/rxhystrix/rxhystrix/observable"
)

// StreamClientInterceptor returns an interceptor that runs every
// streaming call of the connections it is given to as one execution of
// the command of its key ([WithKey]; [Key] by default), which lasts as
// long as the stream: its breaker is asked and a permit taken before the
// stream opens, and the execution ends, its permit back, with the
// stream's end as the caller sees it.
//
//	conn, err := grpc.NewClient(target,
//		grpc.WithTransportCredentials(creds),
//		grpc.WithUnaryInterceptor(grpccommand.UnaryClientInterceptor()),
//		grpc.WithStreamInterceptor(grpccommand.StreamClientInterceptor()))
//
// What counts as what:
//
//   - A stream whose last RecvMsg returns io.EOF (or, for a stream of one
//     reply, the reply) is a SUCCESS. One that ends with a status whose
//     code is a failure code ([WithFailureCodes]), or that fails to open
//     so, is a FAILURE, counted in the breaker's health; any other code
//     is a BAD_REQUEST. The caller gets the server's status unchanged.
//   - A short circuit, a rejection or the rate limit fails the call at
//     once, before the stream opens, with an [*Error] of code
//     Unavailable, as for a unary call; a command timeout that ends the
//     stream is DeadlineExceeded to the caller's RecvMsg; the caller's
//     own cancellation is CANCELLED.
//   - The execution's latency is the stream's life, from the breaker's
//     check to its end.
//
// A stream key's configuration is [WithConfig]'s, with two defaults of
// its own: DefaultIsolation means semaphore isolation, so that the
// key's permits (Config.MaxConcurrentRequests, 10 unless set) bound its
// streams open at once without holding a worker of the endpoint's pool
// for a stream's life; and a zero Timeout means none, since Hystrix's 1s
// would cut every stream that outlives a call. A Timeout set bounds the
// stream's whole life. Config.Retry and Config.Hedge do not apply: a
// stream the caller has used cannot be started again. A stream key
// should not be a unary call's, whose configuration differs.
//
// As with gRPC, a caller must read a stream to its end or cancel its
// context: until then the execution holds its permit. It panics if an
// option is nil, or on [WithFallback], which fills a unary call's reply
// and has nothing to fill here.
func StreamClientInterceptor(opts ...Option) grpc.StreamClientInterceptor {
	c := newClient("StreamClientInterceptor", opts)
	if c.commands.Fallback != nil {
		panic("grpccommand: StreamClientInterceptor: WithFallback fills a unary call's reply; a stream has none")
	}
	s := &streamClient{key: c.key, failures: c.failures}
	s.commands = keyedcommand.Set[*outboundStream, struct{}]{
		Package:    c.commands.Package,
		Registry:   c.commands.Registry,
		Run:        s.run,
		Config:     streamConfig(c.commands.Config),
		PoolConfig: c.commands.PoolConfig,
	}
	return s.intercept
}

// streamConfig returns the configuration of each stream key: f's, or
// the defaults, where DefaultIsolation is semaphore isolation and a
// zero Timeout none (see StreamClientInterceptor).
func streamConfig(f func(key string) command.Config) func(key string) command.Config {
	return func(key string) command.Config {
		var cfg command.Config
		if f != nil {
			cfg = f(key)
		}
		if cfg.Isolation == command.DefaultIsolation {
			cfg.Isolation = command.SemaphoreIsolation
		}
		if cfg.Timeout == 0 {
			cfg.Timeout = -1
		}
		return cfg
	}
}

// streamClient is what StreamClientInterceptor's interceptor runs on.
type streamClient struct {
	key      func(target, method string) string
	failures codeSet
	commands keyedcommand.Set[*outboundStream, struct{}]
}

func (s *streamClient) intercept(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	target := cc.Target()
	key, err := keyOf(s.key, target, method)
	if err != nil {
		return nil, err
	}
	cmd, err := s.commands.Get(key, Endpoint(target))
	if err != nil {
		return nil, &Error{err: err, code: codes.Internal}
	}
	st := &outboundStream{
		desc: desc, cc: cc, method: method, streamer: streamer, opts: opts,
		opened: make(chan struct{}),
		ended:  make(chan error, 1),
	}
	// The execution goes on after the interceptor returns: Queue runs it
	// on a goroutine of its own (a pool's worker under pool isolation),
	// which opens the stream and waits for its end.
	st.execution = cmd.Queue(command.OneAttempt(ctx), st)
	select {
	case <-st.opened:
		return st, nil
	case <-st.execution.Done(): // refused, or the stream did not open
		_, err := st.execution.Get(ctx)
		return nil, statusError(err)
	}
}

// run is a stream key's run: it opens the stream, hands it to the
// caller, and returns with its end, which the caller's RecvMsg tells, or
// with the end of its context (the command's timeout, the caller's
// cancellation), which ends the stream too.
func (s *streamClient) run(ctx context.Context, st *outboundStream) (struct{}, error) {
	cs, err := st.streamer(ctx, st.desc, st.cc, st.method, st.opts...)
	if err != nil {
		return struct{}{}, s.ended(ctx, err)
	}
	st.ClientStream = cs
	close(st.opened)
	select {
	case err := <-st.ended:
		return struct{}{}, s.ended(ctx, err)
	case <-ctx.Done():
		return struct{}{}, ctx.Err()
	}
}

// ended returns what the execution of a stream that ended with err (nil
// for a good end) counts as. A pushback in the trailer is not read: it
// tells a retry or a hedge when to go, and a stream has neither.
func (s *streamClient) ended(ctx context.Context, err error) error {
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return ctx.Err() // the command tells a timeout from a cancellation
	}
	return s.failures.classify(err)
}

// outboundStream is one streaming call on its way through a command: the
// caller's ClientStream, once the run has opened it.
type outboundStream struct {
	grpc.ClientStream

	desc     *grpc.StreamDesc
	cc       *grpc.ClientConn
	method   string
	streamer grpc.Streamer
	opts     []grpc.CallOption

	execution *observable.Future[struct{}]
	opened    chan struct{} // closed once ClientStream is set
	ended     chan error    // the stream's end as the caller saw it: nil for a good one
	endOnce   sync.Once
}

// RecvMsg receives as the stream does, and ends the execution with the
// stream's last answer.
func (st *outboundStream) RecvMsg(m any) error {
	err := st.ClientStream.RecvMsg(m)
	if err == nil && st.desc.ServerStreams {
		return nil
	}
	return st.end(err)
}

// end ends the execution with err, the stream's last answer (nil, the
// reply of a stream of one, or io.EOF, or its status), and returns once
// the execution has, so that its metrics count the stream when the
// caller learns of its end. The caller gets err, but a DeadlineExceeded
// [*Error] when the command's timeout ended the stream.
func (st *outboundStream) end(err error) error {
	st.endOnce.Do(func() {
		if err == io.EOF {
			st.ended <- nil
			return
		}
		st.ended <- err
	})
	_, cmdErr := st.execution.Get(context.Background())
	if err != nil && err != io.EOF && errors.Is(cmdErr, command.ErrTimeout) {
		return statusError(cmdErr)
	}
	return err
}
