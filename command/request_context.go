package command

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/rxhystrix/rxhystrix/metricsstream"
)

// ErrNoRequestContext is the error of an execution that needs a request
// context its context does not carry: a command with a cache key
// (WithCacheKey) whose request cache is on, or a RequestScope collapser.
// Hystrix says "Request caching is not available. Maybe you need to
// initialize the HystrixRequestContext?".
var ErrNoRequestContext = errors.New("request caching is not available: maybe the context needs WithRequestContext")

// ErrRequestContextDone is the error of a collapsed request whose request
// context ended before its batch ran (Hystrix's "Requests not executed
// before shutdown."), and of a request made to a RequestScope collapser
// after its request context ended.
var ErrRequestContextDone = errors.New("request context ended before the request was executed")

// requestScoped is set once a request context or a command with a cache
// key exists. Until then no execution needs to look for a request context:
// Execute's fast path checks nothing but this flag. Looking up the context
// value every time costs 7 % (1 caller) to 12 % (75 callers) of
// bench/peers rxhystrix-semaphore.
var requestScoped atomic.Bool

// requestContextKey is the context key of the request context.
type requestContextKey struct{}

// requestContext is the Go form of Hystrix's HystrixRequestContext: the
// request cache, the request log and the request-scoped collapsers of one
// request.
type requestContext struct {
	// ctx is the context WithRequestContext returned; its end ends the
	// request scope of collapsers. It is kept, against the usual rule,
	// because it is the request scope itself, and it carries the request
	// context to request-scoped batches.
	ctx      context.Context
	cache    sync.Map // requestCacheKey → *cachedResult[Out] or *collapsedRequest[In, Out]
	log      RequestLog
	batchers sync.Map // *Collapser[In, Out] → *batcher[In, Out]

	streamMu sync.Mutex
	streamTo []*metricsstream.Registry // whose request events get the log when ctx ends
}

// WithRequestContext returns a copy of ctx that carries a new request
// context, the Go form of HystrixRequestContext.initializeContext: the
// scope of a request cache, a request log and request-scoped collapsing.
// Commands and collapsers executed with the returned context, or any
// context derived from it, share them: pool workers and fallbacks see
// the same context values, so the request context reaches them as Hystrix
// propagates its request variables to its threads.
//
//	ctx = command.WithRequestContext(r.Context()) // at the start of a request
//	...
//	log.Print(command.RequestLogFrom(ctx))       // GetUser[SUCCESS][12ms], ...
//
// The request context of an execution is the one its ctx carries: for
// ToObservable, Observe and Queue, the ctx they are given. A request
// context ends with ctx: requests still waiting in a batch of a
// RequestScope collapser then fail with ErrRequestContextDone, and the
// log, as it is then, goes to the request events of the registries whose
// commands it logged while somebody watched them
// (metricsstream.Registry.RequestEvents, served by
// metricsstream.RequestEventsHandler); a ctx that never ends publishes
// nothing. The cache and the log stay readable afterwards. Each call
// starts a new request context, even if ctx carries one already. It
// panics if ctx is nil.
//
// Once any request context exists, every execution looks its context up
// (a context.Value call); before that, executions skip the lookup.
func WithRequestContext(ctx context.Context) context.Context {
	if ctx == nil {
		panic("command: WithRequestContext with nil ctx")
	}
	rc := &requestContext{}
	rc.ctx = context.WithValue(ctx, requestContextKey{}, rc)
	requestScoped.Store(true)
	return rc.ctx
}

// RequestLogFrom returns the request log of the request context ctx
// carries, or nil if it carries none. The methods of a nil *RequestLog
// report an empty log.
func RequestLogFrom(ctx context.Context) *RequestLog {
	if rc := requestContextOf(ctx); rc != nil {
		return &rc.log
	}
	return nil
}

// requestContextOf returns the request context ctx carries, or nil.
func requestContextOf(ctx context.Context) *requestContext {
	if ctx == nil {
		return nil
	}
	rc, _ := ctx.Value(requestContextKey{}).(*requestContext)
	return rc
}

// orBackground returns ctx, or context.Background for a nil ctx: every
// entry point of the package reads a nil context as Background, as
// package observable does.
func orBackground(ctx context.Context) context.Context {
	if ctx == nil {
		return context.Background()
	}
	return ctx
}

// logFor returns the log the executions of k record into in this request
// context, or nil when there is no request context or k's log is off.
// While somebody watches the request events of k's registry, the log is
// published there when the request context ends.
func (rc *requestContext) logFor(k *keyState) *RequestLog {
	if rc == nil || k.config.Load().RequestLogDisabled {
		return nil
	}
	if m := k.registry.metrics; m.RequestEventsWatched() {
		rc.publishTo(m)
	}
	return &rc.log
}

// publishTo makes the log go to m's request events when the request
// context ends, as Hystrix's request log goes to HystrixRequestEventsStream
// when its HystrixRequestContext shuts down. The first registry arms the
// publication: nothing is armed for requests nobody watches.
func (rc *requestContext) publishTo(m *metricsstream.Registry) {
	rc.streamMu.Lock()
	defer rc.streamMu.Unlock()
	if slices.Contains(rc.streamTo, m) {
		return
	}
	rc.streamTo = append(rc.streamTo, m)
	if len(rc.streamTo) == 1 {
		context.AfterFunc(rc.ctx, rc.publish)
	}
}

// publish gives the log, as it is when the request context ends, to the
// request events of every registry publishTo named. Executions that end
// later are in the log only.
func (rc *requestContext) publish() {
	events := metricsstream.RequestEvents(rc.log.Executions())
	if len(events) == 0 {
		return
	}
	rc.streamMu.Lock()
	to := rc.streamTo
	rc.streamMu.Unlock()
	for _, m := range to {
		m.PublishRequestEvents(events)
	}
}

// ended reports whether the request scope is over.
func (rc *requestContext) ended() bool { return rc.ctx.Err() != nil }
