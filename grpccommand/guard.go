package grpccommand

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rxhystrix/rxhystrix/command"
	"github.com/rxhystrix/rxhystrix/internal/keyedcommand"
)

// DefaultGuardKey is the key of every call a [Guard] serves when its Key
// is nil.
const DefaultGuardKey = "grpc-server"

// Guard serves a server's incoming calls as executions of a command, so
// that a server bounds the load it takes in as its commands bound the
// load they send out: the command's permits (Config.MaxConcurrentRequests,
// or an adaptive limit, Config.AdaptiveLimit, as Netflix's
// concurrency-limits puts on a gRPC server), its rate limit and its
// timeout apply to the calls, and so does its breaker if CircuitBreaker
// is on; its metrics show them on the dashboard and in Prometheus as any
// command's. A call the command refuses is answered at once, without the
// handler, with the code Unavailable, which a client's
// [UnaryClientInterceptor] counts as a failure of the server and a gRPC
// retry policy may retry elsewhere.
// [Guard.Unary] and [Guard.Stream] are its interceptors:
//
//	guard := &grpccommand.Guard{Config: func(string) command.Config {
//		return command.Config{AdaptiveLimit: limit.Vegas{}, Timeout: 2 * time.Second}
//	}}
//	srv := grpc.NewServer(grpc.ChainUnaryInterceptor(guard.Unary), grpc.ChainStreamInterceptor(guard.Stream))
//
// The fields configure the guard; set them before its first call and do
// not change them after. A Guard must not be copied after first use.
//
// # What counts as what
//
//   - The handler's error counts as a client counts a server's: a code of
//     FailureCodes (or an error with no gRPC status) is a failure,
//     counted in the breaker's health; any other code is a bad request
//     (BAD_REQUEST, not counted). The caller gets the handler's own
//     answer, reply or error, as it returned it.
//   - The command's timeout (1s by default; a negative Config.Timeout
//     turns it off) cancels the call's context; the execution is TIMEOUT
//     and the caller gets DeadlineExceeded, whatever the handler returned
//     after. A stream runs under the same timeout, so a key of streams
//     that last wants a longer one, or none: past it, the stream's
//     RecvMsg and SendMsg fail with DeadlineExceeded, but a RecvMsg
//     already waiting for a client that sends nothing returns only when
//     the client sends, closes its side or leaves (gRPC lets no one but
//     the handler end a stream), and the permit is held until then.
//   - A short circuit, a rejection (permits or, under pool isolation, the
//     pool) and the rate limit never run the handler: the caller gets an
//     [*Error] of code Unavailable. A short circuit or the rate limit
//     sets [PushbackTrailer] to the milliseconds, rounded up, until the
//     breaker's sleep window ends or the bucket has a token
//     (command.Registry.RetryAfter); a client interceptor whose key
//     retries waits that long, and one whose key hedges starts no hedge
//     before then. An invalid key, configuration or
//     FailureCodes is an *Error of code Internal naming what is wrong.
//   - A panic in the handler is a failure, raised again on the server's
//     goroutine once the command has recorded it, as if there were no
//     guard.
//   - Each call is one execution: Config.Retry and Config.Hedge do not
//     apply, since a call cannot be served twice.
//
// # Isolation
//
// A guard's command is semaphore-isolated unless its Config says
// PoolIsolation: the handler runs on the server's goroutine for the call,
// and a key's permits bound the calls served at once. Under pool
// isolation the handler runs on a worker of the key's pool and waits in
// its queue when the workers are busy; the interceptor still returns
// only after the handler has, since the call's headers, trailers and
// stream are the server goroutine's until then, so a timeout ends the
// wait for a worker but not a running handler's. Registry.Configure of a
// guard's key should name its Isolation, and turn its breaker off
// (Breaker.Disabled) unless CircuitBreaker is on: there DefaultIsolation
// means a pool and the breaker is on, as for any Command.
type Guard struct {
	// Registry is where the commands are made; nil means
	// command.DefaultRegistry.
	Registry *command.Registry

	// Key keys each call, given its context and full method
	// ("/orders.Orders/Get"): one command, hence one set of permits, one
	// rate limit, one breaker and one set of metrics, per distinct key.
	// nil keys every call DefaultGuardKey, so that the permits bound the
	// whole server; the method keys a bulkhead per method. A key must be
	// non-empty UTF-8.
	Key func(ctx context.Context, method string) string

	// Partition, if not nil, names the partition of each call, given its
	// context and full method, as concurrency-limits' partition resolvers
	// do (by the call's metadata, say): a key whose Config has Partitions
	// guarantees each its share of the permits, so that live traffic is
	// still served while batch jobs hold the rest (see
	// command.Config.Partitions). "" names none. The handler's context
	// names the partition too (command.PartitionFrom).
	Partition func(ctx context.Context, method string) string

	// Bypass, if not nil, picks the calls, given their context and full
	// method, that the handler serves without the guard: never refused,
	// under no timeout, and counted in no key's metrics. It is for what
	// must reach a server however busy it is, a load balancer's health
	// check ("/grpc.health.v1.Health/Check"), say, as concurrency-limits'
	// bypass resolver lets through.
	Bypass func(ctx context.Context, method string) bool

	// Config gives the command of each key its configuration, read when
	// the key is first used (command.Registry.Configure changes it
	// later). nil means Hystrix's defaults: 10 calls at once and a 1s
	// timeout. Its Isolation defaults to SemaphoreIsolation.
	Config func(key string) command.Config

	// FailureCodes are the codes of the handler's errors that count as
	// failures; nil means DefaultFailureCodes. As for WithFailureCodes,
	// it must hold at least one code, none of them OK.
	FailureCodes []codes.Code

	// CircuitBreaker turns on the circuit breaker of the guard's keys,
	// which Config.Breaker configures. It is off by default, where a
	// command's is on: Hystrix counts a rejection as an error of the
	// key's health, and a guard rejects when its server is busy, not
	// broken, so with half its calls refused the breaker would open and
	// refuse them all for a sleep window. On, it stops serving a key
	// whose handler fails, rejections counted as Hystrix counts them.
	CircuitBreaker bool

	once     sync.Once
	failures codeSet
	invalid  error // FailureCodes', if they are not valid
	commands keyedcommand.Set[*inboundCall, any]
}

// Unary is a grpc.UnaryServerInterceptor that serves each unary call
// with handler as an execution of the command of its key; the type's
// documentation says what the caller gets. A call Bypass picks, the
// handler serves as it is.
func (g *Guard) Unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	if g.Bypass != nil && g.Bypass(ctx, info.FullMethod) {
		return handler(ctx, req)
	}
	c := &inboundCall{unary: handler, req: req}
	if err := g.execute(ctx, info.FullMethod, c); err != nil {
		return nil, err
	}
	return c.resp, nil
}

// Stream is a grpc.StreamServerInterceptor that serves each stream with
// handler as an execution of the command of its key: the stream's
// Context is the execution's, which the command's timeout cancels. A
// stream Bypass picks, the handler serves as it is.
func (g *Guard) Stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	if g.Bypass != nil && g.Bypass(ss.Context(), info.FullMethod) {
		return handler(srv, ss)
	}
	return g.execute(ss.Context(), info.FullMethod, &inboundCall{stream: handler, srv: srv, ss: ss})
}

// execute runs c as an execution of the command of its key and returns
// the error the caller gets.
func (g *Guard) execute(ctx context.Context, method string, c *inboundCall) error {
	g.once.Do(g.init)
	if g.invalid != nil {
		return &Error{err: g.invalid, code: codes.Internal}
	}
	key := DefaultGuardKey
	if g.Key != nil {
		key = g.Key(ctx, method)
	}
	if !command.ValidKey(key) {
		err := fmt.Errorf("grpccommand: Guard: the key of %s is %q: %w", method, key, command.ErrInvalidKey)
		return &Error{err: err, code: codes.Internal}
	}
	cmd, err := g.commands.Get(key, key)
	if err != nil {
		return &Error{err: err, code: codes.Internal}
	}
	if g.Partition != nil {
		if p := g.Partition(ctx, method); p != "" {
			ctx = command.WithPartition(ctx, p)
		}
	}
	_, err = cmd.Execute(command.OneAttempt(ctx), c)
	c.Wait()
	var failed *command.Error
	switch {
	case err == nil:
		return nil
	case c.err != nil && (command.IsBadRequest(err) || errors.As(err, &failed) && failed.Failure == command.CommandFailure):
		return c.err // the handler's own answer
	case errors.As(err, &failed) && failed.Failure == command.CommandFailure:
		// A fault injected in the handler's place (command.Config.Faults),
		// as the handler would have returned it.
		return failed.Cause
	}
	if d, ok := g.commands.RetryAfter(err); ok {
		pushBack(ctx, c.ss, d)
	}
	return statusError(err)
}

func (g *Guard) init() {
	g.failures = defaultFailures
	if g.FailureCodes != nil {
		g.failures, g.invalid = failureCodes(g.FailureCodes)
		if g.invalid != nil {
			g.invalid = fmt.Errorf("grpccommand: Guard.FailureCodes: %w", g.invalid)
		}
	}
	g.commands.Package = "grpccommand: Guard"
	g.commands.Registry = g.Registry
	g.commands.Run = g.serve
	g.commands.BadRequests = g.failures.isBad // the handler's error, or a fault injected in its place
	g.commands.Config = keyedcommand.GuardConfig(g.Config, g.CircuitBreaker)
}

// inboundCall is one incoming call, unary or a stream, on its way
// through a guard's command.
type inboundCall struct {
	keyedcommand.Inbound

	unary grpc.UnaryHandler
	req   any

	stream grpc.StreamHandler
	srv    any
	ss     grpc.ServerStream

	resp any
	err  error // the handler's
}

// serve is a guard's run: the handler serves the call under the run's
// context, and its error says what the execution counts as.
func (g *Guard) serve(ctx context.Context, c *inboundCall) (any, error) {
	err := c.Serve(func() {
		if c.stream != nil {
			c.err = c.stream(c.srv, &guardedStream{requestStream{ServerStream: c.ss, ctx: ctx}})
		} else {
			c.resp, c.err = c.unary(ctx, c.req)
		}
	})
	if err != nil {
		return nil, fmt.Errorf("grpccommand: Guard: %w", err)
	}
	if c.err != nil {
		return nil, c.err // a bad request if its code is no failure (init's BadRequests)
	}
	return c.resp, nil
}

// guardedStream is the stream a guard's handler serves: its Context is
// the execution's, and its RecvMsg and SendMsg fail with the code of the
// context's end (DeadlineExceeded at the command's timeout) once it has
// ended, as gRPC's do once a stream's deadline has passed. A RecvMsg
// that waits already for a message is not interrupted: gRPC gives a
// server no way to end a stream before its handler returns.
type guardedStream struct{ requestStream }

func (s *guardedStream) RecvMsg(m any) error {
	if err := s.ctx.Err(); err != nil {
		return status.FromContextError(err).Err()
	}
	return s.ServerStream.RecvMsg(m)
}

func (s *guardedStream) SendMsg(m any) error {
	if err := s.ctx.Err(); err != nil {
		return status.FromContextError(err).Err()
	}
	return s.ServerStream.SendMsg(m)
}
