package httpcommand

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"

	"github.com/rxhystrix/rxhystrix/command"
	"github.com/rxhystrix/rxhystrix/internal/keyedcommand"
)

// DefaultGuardKey is the key of every request a [Guard] serves when its
// Key is nil.
const DefaultGuardKey = "http-server"

// Guard is an http.Handler that serves each incoming request with
// Handler as an execution of a command, so that a server bounds the load
// it takes in as its commands bound the load they send out: the
// command's permits (Config.MaxConcurrentRequests, or an adaptive limit,
// Config.AdaptiveLimit, as Netflix's concurrency-limits puts on a
// server), its rate limit and its timeout apply to the requests, and so
// does its breaker if CircuitBreaker is on; its metrics show them on the
// dashboard and in Prometheus as any command's. A request the command
// refuses is answered at once, without Handler, by ErrorHandler: 503
// Service Unavailable by default.
//
// The fields configure the guard; set them before its first request and
// do not change them after. A Guard must not be copied after first use.
//
//	handler := &httpcommand.Guard{Handler: mux, Config: func(string) command.Config {
//		return command.Config{AdaptiveLimit: limit.Vegas{}, Timeout: 2 * time.Second}
//	}}
//
// # What counts as what
//
//   - The response Handler writes is the request's answer, whatever the
//     command records; its status says what it counts as, by the rules a
//     [Transport] applies to a response: 5xx and 429 Too Many Requests
//     are failures (counted in the breaker's health), other 4xx bad
//     requests (BAD_REQUEST, not counted), anything else, no status
//     written included, a success; FailureStatus chooses other statuses
//     of failure.
//   - The command's timeout (1s by default; a negative Config.Timeout
//     turns it off) cancels the request's context: the execution is
//     TIMEOUT, and if Handler has written nothing when it returns,
//     ErrorHandler answers.
//   - A short circuit, a rejection (permits or, under pool isolation, the
//     pool) and the rate limit never run Handler. The answer to a short
//     circuit or the rate limit has a Retry-After header, set before
//     ErrorHandler runs: the seconds, rounded up, until the breaker's
//     sleep window ends or the bucket has a token
//     (command.Registry.RetryAfter). A [Transport] whose key retries
//     waits that long before it asks again; one whose key hedges starts
//     no hedge before then.
//   - A panic in Handler is a failure, raised again on the server's
//     goroutine once the command has recorded it, so that net/http treats
//     it as it treats a panic of Handler's own (http.ErrAbortHandler
//     aborts the response); the stack it logs is the guard's.
//   - Each request is one execution: Config.Retry and Config.Hedge do not
//     apply, since a request cannot be served twice.
//   - A request that lasts (a WebSocket, a stream of server-sent events)
//     runs under its key's timeout as any other does: Bypass it, or key
//     it apart with a negative Config.Timeout. A handler that hijacks
//     the connection owns it: the guard writes nothing to it.
//
// In process, a guard adds about half a microsecond to a request, 0.7×
// what failsafe-go's failsafehttp handler adds with a bulkhead; over
// loopback it is within the round trip's spread (bench/httpserver).
//
// # Isolation
//
// A guard's command is semaphore-isolated unless its Config says
// PoolIsolation: Handler runs on the server's goroutine, and a key's
// permits bound the requests served at once. Under pool isolation
// Handler runs on a worker of the key's pool and waits in its queue
// when the workers are busy; the guard's goroutine still answers only
// after Handler has returned, since the response is the server's
// goroutine's until then, so a timeout ends the wait for a worker but
// not a running Handler's. Registry.Configure of a guard's key should
// name its Isolation, and turn its breaker off (Breaker.Disabled) unless
// CircuitBreaker is on: there DefaultIsolation means a pool and the
// breaker is on, as for any Command.
type Guard struct {
	// Handler serves the requests the guard admits. It must not be nil.
	Handler http.Handler

	// Registry is where the commands are made; nil means
	// command.DefaultRegistry.
	Registry *command.Registry

	// Key keys each request: one command, hence one set of permits, one
	// rate limit, one breaker and one set of metrics, per distinct key.
	// nil keys every request DefaultGuardKey; r.Pattern keys a request by
	// the route a ServeMux matched, when the guard wraps each route's
	// handler rather than the mux. A key must be non-empty UTF-8: a
	// request whose key is not goes to ErrorHandler with an error that is
	// command.ErrInvalidKey (by errors.Is).
	Key func(r *http.Request) string

	// Partition, if not nil, names the partition of each request, as
	// concurrency-limits' partition resolvers do (by a header, say): a
	// key whose Config has Partitions guarantees each its share of the
	// permits, so that live traffic is still served while batch jobs
	// hold the rest (see command.Config.Partitions). "" names none.
	// Handler's context names the partition too (command.PartitionFrom).
	Partition func(r *http.Request) string

	// Bypass, if not nil, picks the requests Handler serves without the
	// guard: never refused, under no timeout, and counted in no key's
	// metrics. It is for what must reach a server however busy it is, a
	// load balancer's health check, say, as concurrency-limits' bypass
	// resolver lets through.
	Bypass func(r *http.Request) bool

	// Config gives the command of each key its configuration, read when
	// the key is first used (command.Registry.Configure changes it
	// later). nil means Hystrix's defaults: 10 requests at once and a 1s
	// timeout. Its Isolation defaults to SemaphoreIsolation. A request
	// of a key whose configuration is invalid goes to ErrorHandler with
	// Config.Validate's error.
	Config func(key string) command.Config

	// ErrorHandler answers the requests the guard served without
	// Handler's answer: refused, or timed out or cancelled before
	// Handler wrote anything, or of an invalid key or configuration. err
	// is the command's error, or the key's. nil means
	// [GuardErrorHandler].
	ErrorHandler func(w http.ResponseWriter, r *http.Request, err error)

	// FailureStatus says which statuses Handler writes count as failures,
	// in the key's health and, for an adaptive limit, as drops; any
	// other of 400 or more is a bad request. nil means
	// [DefaultFailureStatus]: 5xx and 429, as a [Transport] counts a
	// response's ([WithFailureStatus]).
	FailureStatus func(code int) bool

	// CircuitBreaker turns on the circuit breaker of the guard's keys,
	// which Config.Breaker configures. It is off by default, where a
	// command's is on: Hystrix counts a rejection as an error of the
	// key's health, and a guard rejects when its server is busy, not
	// broken, so with half its requests refused the breaker would open and
	// refuse them all for a sleep window. On, it stops serving a key
	// whose handler fails, rejections counted as Hystrix counts them.
	CircuitBreaker bool

	once     sync.Once
	failure  func(code int) bool // FailureStatus, or DefaultFailureStatus
	commands keyedcommand.Set[*inbound, struct{}]
}

// GuardErrorHandler is a [Guard]'s default ErrorHandler. It answers with
// [GuardStatus]'s status and that status's text; the answer to an
// invalid key or configuration, a mistake of the program's own, gives
// err's message instead, so that it is seen at once.
func GuardErrorHandler(w http.ResponseWriter, _ *http.Request, err error) {
	code := GuardStatus(err)
	text := http.StatusText(code)
	if errors.Is(err, command.ErrInvalidKey) || errors.Is(err, command.ErrInvalidConfig) {
		text = err.Error() // not an injected 500's, which answers as the server's would
	}
	http.Error(w, text, code)
}

// GuardStatus returns the status a [Guard] answers err with by default:
// 429 Too Many Requests for the rate limit (command.ErrRateLimited), 500
// Internal Server Error for an invalid key or configuration
// (command.ErrInvalidKey, command.ErrInvalidConfig), an injected
// status's own ([FaultStatuses]), and 503 Service Unavailable for a
// short circuit, a rejection, a timeout, a cancellation or another
// injected error.
func GuardStatus(err error) int {
	switch {
	case errors.Is(err, command.ErrRateLimited):
		return http.StatusTooManyRequests
	case errors.Is(err, command.ErrInvalidKey), errors.Is(err, command.ErrInvalidConfig):
		return http.StatusInternalServerError
	}
	if s, ok := statusOf(err); ok {
		return s.StatusCode
	}
	return http.StatusServiceUnavailable
}

// ServeHTTP serves r with Handler as an execution of the command of r's
// key, or answers it with ErrorHandler; the type's documentation says
// when. A request Bypass picks, Handler serves as it is. It panics if
// Handler is nil.
func (g *Guard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g.once.Do(g.init)
	if g.Bypass != nil && g.Bypass(r) {
		g.Handler.ServeHTTP(w, r)
		return
	}
	key := DefaultGuardKey
	if g.Key != nil {
		key = g.Key(r)
	}
	if !command.ValidKey(key) {
		g.refuse(w, r, fmt.Errorf("httpcommand: Guard: the key of a request for %s is %q: %w", r.URL.Path, key, command.ErrInvalidKey))
		return
	}
	cmd, err := g.commands.Get(key, key)
	if err != nil {
		g.refuse(w, r, err)
		return
	}
	ctx := r.Context()
	if g.Partition != nil {
		if p := g.Partition(r); p != "" {
			ctx = command.WithPartition(ctx, p)
		}
	}
	c := &inbound{handler: g.Handler, failure: g.failure, req: r, w: startWriter{ResponseWriter: w}}
	_, err = cmd.Execute(command.OneAttempt(ctx), c)
	c.Wait()
	if err != nil && c.w.code == 0 {
		g.refuse(w, r, err)
	}
}

func (g *Guard) init() {
	if g.Handler == nil {
		panic("httpcommand: Guard with nil Handler")
	}
	g.failure = g.FailureStatus
	if g.failure == nil {
		g.failure = DefaultFailureStatus
	}
	g.commands.Package = "httpcommand: Guard"
	g.commands.Registry = g.Registry
	g.commands.Run = serveInbound
	g.commands.Config = keyedcommand.GuardConfig(g.Config, g.CircuitBreaker)
	g.commands.BadRequests = notFailureStatus(g.failure) // an injected status (FaultStatuses)
}

// refuse answers r with ErrorHandler, after a Retry-After header when
// the command can say when it would admit r.
func (g *Guard) refuse(w http.ResponseWriter, r *http.Request, err error) {
	if d, ok := g.commands.RetryAfter(err); ok {
		setRetryAfter(w.Header(), d)
	}
	if g.ErrorHandler != nil {
		g.ErrorHandler(w, r, err)
		return
	}
	GuardErrorHandler(w, r, err)
}

// inbound is one request on its way through a guard's command.
type inbound struct {
	keyedcommand.Inbound
	handler http.Handler
	failure func(code int) bool // the guard's FailureStatus
	req     *http.Request
	w       startWriter
}

// serveInbound is a guard's run: Handler serves the request under the
// run's context, and the status it wrote says what the execution counts
// as.
func serveInbound(ctx context.Context, c *inbound) (struct{}, error) {
	if err := c.Serve(func() { c.handler.ServeHTTP(&c.w, c.req.WithContext(ctx)) }); err != nil {
		return struct{}{}, fmt.Errorf("httpcommand: Guard: %w", err)
	}
	return struct{}{}, classifyServed(c.w.code, c.failure)
}

// servedStatusError is the error a guard's execution records for a
// response whose status counts against it.
type servedStatusError struct{ code int }

func (e *servedStatusError) Error() string {
	return fmt.Sprintf("httpcommand: the handler answered %d %s", e.code, http.StatusText(e.code))
}

// classifyServed returns the error a response Handler wrote with status
// code counts as, by the rules of classify with failure; 0 (nothing
// written) is a success.
func classifyServed(code int, failure func(code int) bool) error {
	switch {
	case code == 0:
		return nil
	case failure(code):
		return &servedStatusError{code: code}
	case code >= 400:
		return command.BadRequest(&servedStatusError{code: code})
	}
	return nil
}
