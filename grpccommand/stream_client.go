package grpccommand

import (
	"context"
	"errors"
	"io"
	"sync"
	"sync/atomic"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

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
// stream's whole life, or each attempt's.
//
// A stream is retried as gRPC retries a stream, when its key's
// Config.Retry says so: an attempt that fails before the first reply
// (the stream does not open, or RecvMsg returns a status before a reply)
// is an execution that ends as its status says, and the next attempt,
// after the backoff or the server's pushback ([PushbackTrailer]), opens
// the stream again and sends again what the caller has sent, in order,
// closing its side if the caller had, while the caller's RecvMsg waits
// for it and its SendMsg goes on. The stream is committed to its attempt,
// and no attempt follows, as gRPC commits a call: once the server's
// header or a reply has come, once the caller has asked for the stream's
// Context, or once what the caller has sent would take more than the
// call's retry buffer: 256 KiB, or what the call's
// grpc.MaxRetryRPCBufferSize option says, counting each message's encoded
// size (proto.Size). A message that is not a protocol buffer message,
// whose size is not known, commits the stream at once. When the attempts
// end without another beginning, the caller's RecvMsg returns how the
// last ended: its status, or the command's (a refusal, a timeout). A stream whose key hedges (Config.Hedge) makes one
// attempt: its attempts would run side by side. A stream key should not
// be a unary call's, whose configuration differs.
//
// A stream's grpc.OnFinish is called once, however many attempts it
// made: with the error the interceptor returns for a stream that does
// not open, and otherwise once its execution has ended (on a goroutine of
// its own), with its end as RecvMsg tells it.
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
	s := &streamClient{key: c.key, registry: c.commands.Registry, faultKey: c.faultKey}
	if s.registry == nil {
		s.registry = command.DefaultRegistry
	}
	s.commands = keyedcommand.Set[*outboundStream, struct{}]{
		Package:    c.commands.Package,
		Registry:   c.commands.Registry,
		Run:        s.run,
		Config:     streamConfig(c.commands.Config),
		PoolConfig: c.commands.PoolConfig,
		// The stream's end, and a fault injected in the stream's place.
		BadRequests: c.commands.BadRequests,
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
	commands keyedcommand.Set[*outboundStream, struct{}]
	registry *command.Registry // the commands', for their keys' Configs
	faultKey string            // "": the streams' marks for fault injection are not sent (see WithFaultMetadata)
}

func (s *streamClient) intercept(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	target := cc.Target()
	key, err := keyOf(s.key, target, method)
	if err != nil {
		return nil, finishNow(opts, err)
	}
	cmd, err := s.commands.Get(key, Endpoint(target))
	if err != nil {
		return nil, finishNow(opts, &Error{err: err, code: codes.Internal})
	}
	// The caller's OnFinish is the call's: called once, when the
	// execution ends, and not by each attempt's stream.
	opts, meta := splitMetaOpts(opts, true)
	st := &outboundStream{
		desc: desc, cc: cc, method: method, streamer: streamer, opts: opts,
		opened: make(chan struct{}),
		next:   make(chan struct{}),
	}
	if cfg, _ := s.registry.Config(key); retriesStreams(&cfg) {
		st.retries = true
		st.bufferLeft = retryBufferSize(opts)
	} else {
		ctx = command.OneAttempt(ctx)
	}
	// The execution goes on after the interceptor returns: Queue runs it
	// on a goroutine of its own (a pool's worker under pool isolation),
	// which opens the stream and waits for its end.
	st.execution = cmd.Queue(ctx, st)
	select {
	case <-st.opened:
		if len(meta.onFinish) > 0 {
			go st.finish(meta)
		}
		return st, nil
	case <-st.execution.Done(): // refused, or the stream did not open
		_, err := st.execution.Get(ctx)
		err = statusError(err)
		meta.finish(err)
		return nil, err
	}
}

// finish calls the caller's OnFinish callbacks, m's, once the execution
// has ended however it ends (read to its end, or left by the caller's
// cancellation), with the stream's end as its caller's RecvMsg tells it.
func (st *outboundStream) finish(m metaOpts) {
	<-st.execution.Done()
	_, err := st.execution.Get(context.Background())
	if err != nil {
		err = streamEnd(err)
	}
	m.finish(err)
}

// retriesStreams reports whether a stream of a key of cfg may be opened
// again until it is committed to an attempt:
// its key retries, does not hedge (its attempts follow one another, as
// gRPC's retries of a stream do), and does not retry a timeout, which
// may come after a reply, when the stream is committed to its attempt
// (a failure then says not to retry; a timeout's cause is the command's
// own).
func retriesStreams(cfg *command.Config) bool {
	retriesTimeouts := cfg.Retry.On == 0 || cfg.Retry.On.Has(command.TimeoutFailure)
	return cfg.Retry.MaxAttempts > 1 && cfg.Hedge.MaxHedges == 0 && (cfg.Timeout <= 0 || !retriesTimeouts)
}

// defaultRetryBufferSize is gRPC's bound on what a call keeps to send
// again (grpc.MaxRetryRPCBufferSize).
const defaultRetryBufferSize = 256 << 10

// retryBufferSize returns the bound of opts' grpc.MaxRetryRPCBufferSize,
// the last one's, or gRPC's default.
func retryBufferSize(opts []grpc.CallOption) int {
	size := defaultRetryBufferSize
	for _, o := range opts {
		if b, ok := o.(grpc.MaxRetryRPCBufferSizeCallOption); ok {
			size = b.MaxRetryRPCBufferSize
		}
	}
	return size
}

// errNotAgain is the error of an attempt that would have run beside
// another of its stream: a Configure gave the stream's key hedges, or
// retries of timeouts, after the interceptor looked. It is a bad request,
// which the key's health does not count and no retry follows.
var errNotAgain = command.BadRequest(errors.New("grpccommand: a stream's attempts follow one another, until it is committed to one; its key must neither hedge nor retry a timeout"))

// run is an attempt of a stream key: it opens the stream (again, after
// an attempt that failed before the first reply), hands it to the
// caller, and returns with its end, which the caller's RecvMsg tells, or
// with the end of its context (the command's timeout, the caller's
// cancellation), which ends the stream too.
//
// An attempt that may not begin (see begin) opens no stream, or, when
// the stream was committed while it opened one, cancels it: a stream
// whose side is closed before the caller's messages are sent on it would
// be an empty request, whole, to the server.
func (s *streamClient) run(ctx context.Context, st *outboundStream) (struct{}, error) {
	if err := st.refusal(); err != nil {
		return struct{}{}, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // once the stream has ended, or to reset one that may not begin
	// gRPC releases a stream whose connection closes, and its caller need
	// not read it then (grpc.ClientConn.NewStream): nor does the attempt
	// wait for that caller.
	connClosed := make(chan error, 1)
	opts := append(st.opts[:len(st.opts):len(st.opts)], grpc.OnFinish(func(err error) {
		if st.cc != nil && st.cc.GetState() == connectivity.Shutdown {
			select {
			case connClosed <- err:
			default:
			}
		}
	}))
	cs, err := st.streamer(withOutgoingMark(ctx, s.faultKey), st.desc, st.cc, st.method, opts...)
	if err != nil {
		return struct{}{}, s.ended(ctx, err)
	}
	a := &streamAttempt{ClientStream: cs, ended: make(chan error, 1)}
	if err := st.begin(a); err != nil {
		return struct{}{}, err
	}
	defer st.finished(a)
	select {
	case err := <-a.ended:
		if err != nil && st.committed.Load() {
			err = &pushbackError{err: err, wait: -1} // no attempt follows a commit
		} else if err != nil {
			err = withPushback(err, cs.Trailer())
		}
		return struct{}{}, s.ended(ctx, err)
	case err := <-connClosed:
		st.commitNow() // no attempt follows on a closed connection
		if err == nil {
			// gRPC finishes with nil only a stream that ended well, the
			// caller having read the server's OK: it succeeded, whatever
			// the connection did as it ended.
			return struct{}{}, nil
		}
		return struct{}{}, s.ended(ctx, &pushbackError{err: err, wait: -1})
	case <-ctx.Done():
		return struct{}{}, ctx.Err()
	}
}

// ended returns what the execution of a stream that ended with err (nil
// for a good end) counts as.
func (s *streamClient) ended(ctx context.Context, err error) error {
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return ctx.Err() // the command tells a timeout from a cancellation
	}
	return err // a bad request if its code is no failure (the commands' BadRequests)
}

// outboundStream is one streaming call on its way through a command: the
// stream of its attempt now, to the caller.
type outboundStream struct {
	desc     *grpc.StreamDesc
	cc       *grpc.ClientConn
	method   string
	streamer grpc.Streamer
	opts     []grpc.CallOption
	retries  bool // an attempt that fails before the stream is committed may be followed by another

	execution *observable.Future[struct{}]
	opened    chan struct{} // closed once the first attempt has begun

	// sendMu orders what is sent: the caller's SendMsg and CloseSend, and
	// an attempt's sending again of what the caller sent, each whole, so
	// that a stream's sends are never concurrent and keep their order. mu
	// guards the fields below and is never held while a message is sent,
	// so that RecvMsg reads while a send waits for flow control: a
	// server that answers as it reads is read while an attempt sends
	// again.
	sendMu     sync.Mutex
	mu         sync.Mutex
	attempt    *streamAttempt // the attempt now, once one has begun
	next       chan struct{}  // closed when the next attempt begins
	sent       []any          // what the caller sent, for a next attempt to send again
	bufferLeft int            // the bytes sent may still grow by before the stream commits
	sendClosed bool           // whether the caller closed its side
	// committed: a reply came, or sent outgrew the retry buffer; no
	// attempt follows the one now (stored under mu, read without).
	committed atomic.Bool
}

// streamAttempt is the stream of one attempt.
type streamAttempt struct {
	grpc.ClientStream
	ended   chan error // the stream's end as the caller saw it: nil for a good one
	err     error      // what was sent on ended, written before it is
	endOnce sync.Once
	over    bool // under the outboundStream's mu: its run has returned
}

// begin makes a the attempt the caller's calls go to, and sends on it
// what the caller sent before, before any message the caller sends next.
// It fails if another attempt's run has not returned (errNotAgain), or
// if the stream was committed while the attempt before waited for this
// one, as a message the caller sent then outgrew the retry buffer: the
// stream ends as that attempt did, and no attempt follows.
func (st *outboundStream) begin(a *streamAttempt) error {
	st.sendMu.Lock()
	defer st.sendMu.Unlock()
	sent, sendClosed, err := st.switchTo(a)
	if err != nil {
		return err
	}
	for _, m := range sent {
		if a.SendMsg(m) != nil {
			break // the stream has failed: its RecvMsg says how
		}
	}
	if sendClosed {
		_ = a.CloseSend()
	}
	return nil
}

// refusal returns why an attempt may not begin now (see begin), or nil.
func (st *outboundStream) refusal() error {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.refusalLocked()
}

// refusalLocked is refusal, under st.mu.
func (st *outboundStream) refusalLocked() error {
	prev := st.attempt
	switch {
	case prev == nil:
		return nil
	case !prev.over:
		return errNotAgain
	case st.committed.Load() && prev.err != nil:
		// The stream ends as prev did, and prev's failure is counted
		// already: this attempt, which reaches no server, is not
		// counted in the key's health a second time.
		return command.BadRequest(&pushbackError{err: prev.err, wait: -1})
	case st.committed.Load():
		return errNotAgain
	}
	return nil
}

// switchTo makes a the attempt now, under st.mu, and returns what it is
// to send again: see begin.
func (st *outboundStream) switchTo(a *streamAttempt) (sent []any, sendClosed bool, err error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if err := st.refusalLocked(); err != nil {
		return nil, false, err
	}
	first := st.attempt == nil
	st.attempt = a
	if first {
		close(st.opened)
	} else {
		close(st.next)
		st.next = make(chan struct{})
	}
	return st.sent, st.sendClosed, nil
}

// finished records that a's run has returned.
func (st *outboundStream) finished(a *streamAttempt) {
	st.mu.Lock()
	a.over = true
	st.mu.Unlock()
}

// current returns the attempt now, and the channel closed when the next
// one begins.
func (st *outboundStream) current() (*streamAttempt, chan struct{}) {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.attempt, st.next
}

// SendMsg sends m on the attempt's stream and, if the stream may be
// opened again, keeps it to send again (outboundStream.keep).
// A stream that has failed (io.EOF) but may be opened again takes m
// without an error: the next attempt sends it, and RecvMsg tells the end
// if there is none.
//
// st.mu is not held while m is sent: a bidirectional stream's SendMsg
// may wait for its caller's RecvMsg to read, as flow control holds it.
// An attempt that begins meanwhile waits for m to be sent (sendMu).
func (st *outboundStream) SendMsg(m any) error {
	st.sendMu.Lock()
	st.mu.Lock()
	kept := st.mayRetry() && st.keep(m)
	a := st.attempt
	st.mu.Unlock()
	err := a.SendMsg(m)
	st.sendMu.Unlock()
	switch {
	case err == io.EOF && kept:
		return nil
	case err != nil && err != io.EOF:
		// gRPC has ended the stream with err (a message over the call's
		// limit, one it could not encode), and its caller need not read
		// it (grpc.ClientConn.NewStream): the execution ends with it, and
		// no attempt follows, which would send m again.
		st.commitNow()
		st.tell(a, err)
		return st.result(err)
	}
	return err
}

// keep keeps m to send again, under st.mu, and reports whether it did.
// A message that would take what is kept past the retry buffer, or whose
// size is not known, commits the stream to its attempt instead, as gRPC
// commits a call whose buffer is full.
func (st *outboundStream) keep(m any) bool {
	size := -1
	if pm, ok := m.(proto.Message); ok {
		size = proto.Size(pm)
	}
	if size < 0 || size > st.bufferLeft {
		st.commit()
		return false
	}
	st.bufferLeft -= size
	st.sent = append(st.sent, m)
	return true
}

// commit commits the stream to its attempt, under st.mu: nothing is sent
// again.
func (st *outboundStream) commit() {
	st.committed.Store(true)
	st.sent = nil
}

// CloseSend closes the caller's side of the attempt's stream, and of the
// next's.
func (st *outboundStream) CloseSend() error {
	st.sendMu.Lock()
	defer st.sendMu.Unlock()
	st.mu.Lock()
	st.sendClosed = true
	a := st.attempt
	st.mu.Unlock()
	return a.CloseSend()
}

// Header returns the header of the attempt's stream. A header that came
// commits the stream to its attempt, as gRPC commits a call whose header
// was read: the caller holds the attempt's word.
//
// An attempt that ended without a header (trailers only) while the
// stream may be opened again ends as its status says, which Header reads
// as RecvMsg would (there is no reply to read): as gRPC's Header waits
// through its retries, the caller gets the header of the next attempt,
// and nil only once no attempt follows, when RecvMsg tells the end.
func (st *outboundStream) Header() (metadata.MD, error) {
	for {
		a, next := st.current()
		md, err := a.Header()
		if md != nil {
			st.commitNow()
			return md, err
		}
		if err != nil || !st.mayRetry() {
			return md, err
		}
		// A stream that ended without a header has no reply to decode:
		// RecvMsg returns its status at once.
		end := a.RecvMsg(new(struct{}))
		if end == nil || end == io.EOF {
			return md, err
		}
		st.tell(a, end)
		select {
		case <-next:
		case <-st.execution.Done():
			return nil, nil
		}
	}
}

// Trailer returns the trailer of the attempt's stream.
func (st *outboundStream) Trailer() metadata.MD {
	a, _ := st.current()
	return a.Trailer()
}

// Context returns the context of the attempt's stream, and commits the
// stream to it, as gRPC's Context commits a call: the caller holds the
// attempt's context.
func (st *outboundStream) Context() context.Context {
	a, _ := st.current()
	st.commitNow()
	return a.Context()
}

// RecvMsg receives as the attempt's stream does, and ends the execution
// with the stream's last answer. An attempt that fails before the first
// reply of a stream that may be opened again ends as an attempt: the
// command retries it or not, as its key's Config.Retry says, and
// RecvMsg goes on with the next attempt's stream, or returns the end.
func (st *outboundStream) RecvMsg(m any) error {
	for {
		a, next := st.current()
		err := a.RecvMsg(m)
		if err == nil {
			st.commitNow()
			if st.desc.ServerStreams {
				return nil
			}
		} else if err != io.EOF && st.mayRetry() && !st.headerCame(a) {
			st.tell(a, err)
			select {
			case <-next:
				continue
			case <-st.execution.Done():
				return st.lastAnswer(err)
			}
		}
		st.tell(a, err)
		return st.result(err)
	}
}

// mayRetry reports whether an attempt that fails now may be followed by
// another: the stream may be opened again and is not committed.
func (st *outboundStream) mayRetry() bool { return st.retries && !st.committed.Load() }

// commitNow commits the stream to its attempt, if it is not yet.
func (st *outboundStream) commitNow() {
	if !st.committed.Load() {
		st.mu.Lock()
		st.commit()
		st.mu.Unlock()
	}
}

// headerCame reports whether a, which has failed, had its header from the
// server, and if so commits the stream: gRPC retries only a call that
// ended with its trailers alone, since a server that sent its header had
// begun to answer.
func (st *outboundStream) headerCame(a *streamAttempt) bool {
	if md, _ := a.Header(); md == nil { // an ended stream's header does not wait
		return false
	}
	st.commitNow()
	return true
}

// tell ends attempt a with err, the stream's last answer (nil, the reply
// of a stream of one, or io.EOF, or its status), once.
func (st *outboundStream) tell(a *streamAttempt, err error) {
	a.endOnce.Do(func() {
		if err == io.EOF {
			err = nil
		}
		a.err = err
		a.ended <- err
	})
}

// lastAnswer is what RecvMsg returns when the execution ended after an
// attempt that failed with err, without another attempt beginning: err,
// if it is how the execution ended (no retry followed), or else the end
// of the attempt that followed and did not begin (a stream that did not
// open), or the command's own (a refusal, a timeout, the caller's
// cancellation), as the caller of a unary call gets it.
func (st *outboundStream) lastAnswer(err error) error {
	_, cmdErr := st.execution.Get(context.Background())
	if cmdErr == nil || errors.Is(cmdErr, err) {
		return st.result(err)
	}
	return streamEnd(cmdErr)
}

// streamEnd returns what the caller of a stream whose execution failed
// with cmdErr gets: the server's status, as it sent it, for a failure,
// and otherwise what a unary call's caller gets (statusError).
func streamEnd(cmdErr error) error {
	var failed *command.Error
	if errors.As(cmdErr, &failed) && failed.Failure == command.CommandFailure {
		if s, ok := status.FromError(failed.Cause); ok {
			return s.Err() // the server's status, as it sent it
		}
	}
	return statusError(cmdErr)
}

// result returns once the execution has ended, so that its metrics count
// the stream when the caller learns of its end, and returns err, the
// stream's last answer, or a DeadlineExceeded [*Error] when the command's
// timeout ended the stream.
func (st *outboundStream) result(err error) error {
	_, cmdErr := st.execution.Get(context.Background())
	if err != nil && err != io.EOF && errors.Is(cmdErr, command.ErrTimeout) {
		return statusError(cmdErr)
	}
	return err
}
