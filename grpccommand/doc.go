// Package grpccommand runs outgoing gRPC calls as rxhystrix commands: an
// interceptor gives every unary call a circuit breaker, a worker pool per
// downstream, a timeout, metrics and, optionally, a fallback. One option
// of grpc.NewClient puts a connection's calls under them, and another
// its streams ([StreamClientInterceptor]: each stream one execution, as
// long as the stream, bounded by its key's permits, and retried until its
// first reply by sending again what the caller sent, as gRPC retries a
// stream):
//
//	conn, err := grpc.NewClient(target,
//		grpc.WithTransportCredentials(creds),
//		grpc.WithUnaryInterceptor(grpccommand.UnaryClientInterceptor()),
//		grpc.WithStreamInterceptor(grpccommand.StreamClientInterceptor()))
//
// # Keys and pools
//
// Each call is a command of the key [WithKey] gives it: by default ([Key])
// the endpoint of the connection's target and the full method,
// "orders.internal:50051/orders.Orders/Get", so a method has a breaker
// and metrics of its own on each downstream, on the dashboard and in
// Prometheus as any command's; where thirty regional systems serve one
// service, the one that fails opens only its own circuits. The calls of a
// downstream run in a worker pool of its own (Config.Pool defaults to the
// [Endpoint]), so a downstream that hangs fills its own pool and is
// rejected there, while calls to the others go on. [WithConfig] and
// [WithPoolConfig] configure each key when it is first used, as
// command.Registry.Configure and ConfigurePool do.
//
// A pool runs each call on a goroutine started for it, whose stack grows
// as deep as gRPC's client goes; semaphore isolation runs the call on the
// caller's goroutine. A gRPC call ends when its context does, so under
// semaphore isolation the caller is not held past the timeout either, and
// a hung downstream is bounded by the permits of each of its keys (per
// method), where its pool bounds all its methods together. WithConfig
// returning Config{Isolation: command.SemaphoreIsolation} chooses it. On
// a loopback call (bench/grpcclient), against the same call under a
// context with a 1s deadline, as the commands' calls have: 1.17× in a
// pool, 1.05× under a semaphore.
//
// # What counts as what
//
//   - OK is a success.
//   - The codes that say the server failed or refused the load are
//     failures, counted in the breaker's health and answered by the
//     fallback: [DefaultFailureCodes] (Unavailable, ResourceExhausted,
//     Internal, Unknown, DataLoss, DeadlineExceeded, and Canceled when the
//     server or a proxy cancelled), or those of [WithFailureCodes].
//   - Every other code (InvalidArgument, NotFound, PermissionDenied,
//     FailedPrecondition, Unimplemented, ...) is a bad request: recorded as
//     BAD_REQUEST, not counted in health, no fallback, and the caller gets
//     the server's error as it is.
//   - The command's timeout (1s by default) cancels the call's context and
//     ends it as TIMEOUT; the caller's context cancelling it is CANCELLED.
//   - Short circuits and rejections never reach the server.
//
// The caller of a call the command ended gets an [*Error], whose code
// status.Code reads: the server's for a failure, Unavailable for a short
// circuit or a rejection, DeadlineExceeded for a timeout (the list is on
// Error). errors.Is finds the command's sentinels through it
// (command.ErrShortCircuited, command.ErrTimeout), and errors.As its
// *command.Error.
//
// # Replies
//
// Each attempt of a call decodes the server's answer into a reply of its
// own, and the caller's reply gets the answer of the attempt that won,
// merged into it with proto.Merge once the call is over (a reply that is
// not a protocol buffer message, of a codec of the program's own, is
// copied as a value). So a caller that leaves at a timeout never sees its
// reply written behind its back by the attempt still running, and the
// attempts of a hedge never write one message side by side; the price is
// one copy of the answer per call. The same holds for what grpc.Header,
// grpc.Trailer and grpc.Peer ask for: the caller gets the header, trailer
// and peer of the attempt whose answer it got, or of the attempt the
// server failed when the call fails so (a failure or a bad request), and
// none after a timeout, a cancellation or a refusal. A unary call's
// grpc.OnFinish is called once, with the error the call returns, however
// many attempts it made.
//
// # Retries and hedges
//
// A key whose Config retries or hedges (command.Config.Retry,
// Config.Hedge) sends the call again, with the same request: gRPC does
// not say which methods are idempotent, so configure retries and hedges
// only for keys whose methods are, or put a call that must go once under
// command.OneAttempt's context.
//
// A server that pushes back with [PushbackTrailer] (gRFC A6; a [Guard]
// does) has the word on the retry: it comes after the milliseconds the
// trailer says, in place of the backoff, and not at all when the trailer
// says not to retry or asks for longer than the backoff's Max
// (observable.RetryPolicy.Next).
//
// # Fallbacks
//
// [WithFallback] answers failures, timeouts, rejections and
// short-circuits by filling the caller's reply (from a cache, or a
// degraded answer), or with an error of its own.
//
// # Incoming calls: request contexts
//
// [UnaryServerInterceptor] and [StreamServerInterceptor] are the server
// side, Hystrix's request servlet filters: each incoming call runs in a
// request context of its own (command.WithRequestContext), which the
// commands its handler executes share for their request cache, request
// log and request-scoped collapsers, and which ends with the call.
// [WithLogTrailer] sends the request log in the call's trailer.
//
// # Fault injection across services
//
// [WithFaultMetadata], given to the server and the client interceptors,
// carries a call's mark for fault injection (command.WithFaultInjection)
// in its metadata ([FaultMetadata]) from service to service, with the
// values of httpcommand.FaultHeader, so that the mark of a test request
// crosses HTTP and gRPC alike: in every service it reaches, it meets the
// faults that the commands there inject into marked requests only
// (command.FaultConfig.MarkedOnly). A [Guard]'s key takes faults as any
// command's, which makes them the server's own: the handler is not
// called, and the caller gets the injected error, with its code when it
// has one (status.Error(codes.Unavailable, ...), say). An injected error
// stands in for the server's answer, on a client's key as on a guard's,
// so its code makes it a failure or a bad request as the answer's would.
// [FaultStatuses] lets httpcommand.FaultsHandler inject a status an
// operator names ({"code":"Unavailable","error":"draining"}), live, for
// a game day on a gRPC service:
//
//	adminMux.Handle("/faults", httpcommand.FaultsHandler(command.DefaultRegistry, grpccommand.FaultStatuses))
//
// # Incoming calls: a guard
//
// [Guard] bounds what a server takes in as the client interceptor bounds
// what it sends: its [Guard.Unary] and [Guard.Stream] interceptors serve
// each incoming call as an execution of a command (semaphore-isolated,
// one key for the server unless Guard.Key splits it, by method, say), so
// the key's permits, or an adaptive limit that follows the handlers'
// latency (Config.AdaptiveLimit, as Netflix's concurrency-limits does on
// a server) and its rate limit refuse what the server cannot serve in
// time, at once and with the code Unavailable, without running the
// handler; a refusal by the rate limit or an open breaker pushes back
// with [PushbackTrailer], the time until the command would admit the
// call. (Its breaker is off unless Guard.CircuitBreaker turns it on:
// Hystrix counts rejections in a key's health, and a busy server is not
// a broken one.) The handlers' codes count as the client counts a
// server's, the server's load is on the dashboard beside its
// downstreams', and Guard.Bypass lets through what must reach a busy
// server (a load balancer's health check).
//
// # Tests on a manual clock
//
// A command's timeout is the deadline of its call's context, and gRPC
// sends a call's deadline to the server, which holds it to its own, real,
// clock. A test that runs the commands on a manual clock
// (command.WithClock) starts that clock ahead of the real time, as
// clock.NewManual(time.Now().Add(time.Hour)), or the server sees every
// call past its deadline.
//
// # What it does not do
//
// A stream is one execution from its opening to its end: its messages
// are not commands of their own, its latency is its life, and it has no
// fallback (there is no reply to fill) and no hedge (a key that hedges
// makes one attempt of a stream). It is retried only until it is
// committed, as gRPC retries a stream: never after its first reply, nor
// once what the caller sent outgrows the retry buffer (see
// [StreamClientInterceptor]). gRPC's own retry policy (the service
// config) retries inside an attempt, where the command sees one call;
// use one or the other.
package grpccommand
