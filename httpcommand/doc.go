// Package httpcommand runs outgoing HTTP requests as rxhystrix commands:
// a [Transport] is an [http.RoundTripper] that gives every request a
// circuit breaker, a worker pool, a timeout, metrics and, optionally, a
// fallback, per downstream host. One line puts a client's requests under
// them:
//
//	client.Transport = httpcommand.New()
//
// # Keys and pools
//
// Each request is a command of the key [WithKey] gives it, its URL's host
// by default ([Host]: "api.example.com:8443", in lower case and without
// its scheme's default port, so that one host is one key however its
// URLs spell it); commands of one key share one
// breaker and one set of metrics, on the dashboard and in Prometheus as
// any command's. Each key runs in a worker pool of its own (Config.Pool
// defaults to the key), so a host that hangs fills its own pool and is
// rejected there, while requests to the other hosts go on. [WithConfig]
// and [WithPoolConfig] configure each key when it is first used, as
// command.Registry.Configure and ConfigurePool do.
//
// # What counts as what
//
//   - 2xx and 3xx are successes (the transport does not follow redirects;
//     http.Client does, each hop a request of its own).
//   - 5xx and 429 Too Many Requests are failures: counted in the breaker's
//     health, answered by the fallback. The response's body is drained
//     (up to 4 KB) and closed; the error is the command's [*command.Error]
//     with a [*StatusError] as its cause (errors.As finds it), giving the
//     status and the headers (Retry-After, say).
//   - Other 4xx are bad requests: recorded as BAD_REQUEST, not counted in
//     health, no fallback, and the caller gets the response as it is.
//   - [WithFailureStatus] chooses other statuses of failure for a
//     downstream whose statuses say something else: every other status
//     of 400 or more is then a bad request.
//   - Connection errors (refused, reset, DNS) are failures. A request
//     the base transport refuses because its method, or a header or
//     trailer field, is malformed is a bad request, the caller's
//     mistake, with the transport's error.
//   - The command's timeout (1s by default) cancels the request's context
//     and fails it as TIMEOUT; the caller's context cancelling it is
//     CANCELLED, and the error is context.Canceled's.
//   - Short-circuits and rejections never reach the host; the request's
//     body is closed, as an http.RoundTripper must.
//
// # When the command ends, and the body
//
// The command ends when the response's headers arrive: its latency is
// the time to the headers, its timeout bounds only that, and its pool
// worker is free while the caller reads the body. The body stays
// readable after: the request is sent on a context of the caller's that
// the command's timeout and cancellation end only until the headers
// arrive, and after that only the caller's context, or closing the body,
// does. A caller that needs to bound the whole exchange, body included,
// gives the request a context with a deadline, or sets http.Client's
// Timeout.
//
// # Retries and hedges
//
// A key whose Config retries or hedges (command.Config.Retry,
// Config.Hedge) sends a request again only when that is safe: its method
// is idempotent (GET, HEAD, OPTIONS, TRACE, PUT, DELETE, as RFC 9110
// says) or it carries an Idempotency-Key header, and its body, if any,
// can be made again by its GetBody, which http.NewRequest sets for a
// bytes.Buffer, bytes.Reader or strings.Reader body. Each attempt sends
// the whole body; a response an attempt got that the caller does not
// (a hedge's race lost, say) is closed. Any other request is sent once
// (command.OneAttempt), and its failure is the answer.
//
// A failure whose response has a Retry-After header, a 503 or a 429 of a
// server that knows when it can serve again ([Guard]'s among them), is
// retried after the wait the header asks for, in place of the backoff;
// one longer than the backoff's Max ends the retries, and the failure is
// the answer ([*StatusError.RetryAfter], observable.RetryPolicy.Next).
//
// # Fallbacks
//
// [WithFallback] builds an answer for failures, timeouts, rejections and
// short-circuits: a response (a cached one, a degraded one) or an error.
// Its response goes to the caller as the transport's, so it must be a
// whole one, with a Body.
//
// # Incoming requests: request contexts
//
// [RequestContext] is the server side, Hystrix's request servlet filters:
// it wraps a service's handler so that each incoming request runs in a
// request context of its own (command.WithRequestContext), which its
// commands share for their request cache, request log and request-scoped
// collapsers, and which ends with the request. [WithLogHeader] adds the
// request log to each response, as Hystrix's X-HystrixLog header:
//
//	handler = httpcommand.RequestContext(mux, httpcommand.WithLogHeader(httpcommand.LogHeader))
//
// # Fault injection across services
//
// [WithFaultHeader], given to both [RequestContext] and [New], carries a
// request's mark for fault injection (command.WithFaultInjection) in a
// header ([FaultHeader]) from service to service: a test request marked
// at the edge meets, in every service it reaches, the faults that the
// commands there inject into marked requests only
// (command.FaultConfig.MarkedOnly), as Netflix's Failure Injection
// Testing failed chosen requests through its call graph.
//
//	mark := httpcommand.WithFaultHeader(httpcommand.FaultHeader)
//	handler = httpcommand.RequestContext(mux, mark)
//	client := &http.Client{Transport: httpcommand.New(mark)}
//
// A [Guard]'s key takes faults as any command's, which makes them the
// server's own, as Envoy's fault filter injects them: an injected error
// is answered 503 without reaching the handler (an injected status of
// [FaultStatuses] with that status), and an injected delay holds the
// request's permit until the timeout.
//
// [FaultsHandler] reads and sets the faults of a registry's commands
// live, over HTTP, for a game day run from a terminal:
//
//	adminMux.Handle("/faults", httpcommand.FaultsHandler(command.DefaultRegistry))
//	// curl -X PUT 'localhost:9090/faults?command=GetUser' -d '{"enabled":true,"errorPercentage":50,"for":"10m"}'
//
// Given a [FaultErrors], it injects errors of a protocol's codes too: an
// HTTP status with [FaultStatuses] ({"code":"503"}), as Envoy's fault
// filter aborts a request, a gRPC status with grpccommand.FaultStatuses.
//
// # Incoming requests: a guard
//
// [Guard] bounds what a server takes in as a Transport bounds what a
// client sends: each incoming request is an execution of a command
// (semaphore-isolated, one key for the server unless Guard.Key splits
// it), so the key's permits, or an adaptive limit that follows the
// handler's latency (Config.AdaptiveLimit, as Netflix's concurrency-limits
// does on a server) and its rate limit refuse what the server cannot
// serve in time, at once and without running the handler: 503 Service
// Unavailable, 429 Too Many Requests for the rate limit, each with a
// Retry-After header when the command knows when it would admit the
// request (the rate limit's next token, an open breaker's sleep window),
// which a Transport that retries honours. (Its breaker is
// off unless Guard.CircuitBreaker turns it on: Hystrix counts
// rejections in a key's health, and a busy server is not a broken one.)
// The handler's statuses count as a Transport counts a response's
// (Guard.FailureStatus chooses others, as WithFailureStatus does), the
// server's load is on the dashboard beside its downstreams', and
// Guard.Bypass lets through what must reach a busy server (a load
// balancer's health check):
//
//	handler = &httpcommand.Guard{Handler: mux, Config: func(string) command.Config {
//		return command.Config{AdaptiveLimit: limit.Gradient2{}}
//	}}
//
// # Where it differs from Hystrix
//
// Hystrix wraps calls, not transports or servers, so it has no rule of
// its own for HTTP statuses. The rules above count against a host's
// health what says the host is failing or refusing the load (5xx, 429,
// no connection), and not what says the request was wrong: every other
// 4xx, 408 Request Timeout included, is the caller's to fix and opens no
// circuit.
package httpcommand
