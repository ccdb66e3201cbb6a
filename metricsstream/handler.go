package metricsstream

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/rxhystrix/rxhystrix/internal/clock"
)

// streamWriteTimeout bounds the writing of one frame, so that a client
// that stops reading without disconnecting does not hold its connection
// slot for ever. It is a deadline of the network connection, so it is
// measured on the real clock.
const streamWriteTimeout = 10 * time.Second

// The responses the stream shares with Hystrix's servlet.
const (
	streamContentType  = "text/event-stream;charset=UTF-8"
	streamCacheControl = "no-cache, no-store, max-age=0, must-revalidate"
	shutDownMessage    = "Service has been shut down."
)

// Handler returns the Hystrix metrics stream of a [Registry]: a
// [net/http.Handler] that answers GET with a text/event-stream that the
// Hystrix Dashboard, Turbine and this module's dashboard package read
// unchanged, as Hystrix 1.5.4+'s HystrixMetricsStreamServlet writes it.
//
//	mux.Handle("/hystrix.stream", metricsstream.Handler())
//
// Every interval (500ms unless [WithInterval] or the request's ?delay=
// says otherwise) the stream writes one event per command of the registry,
// then one per worker pool, then one per collapser (and per collapser of
// [WithCollapsers]),
// each as "data: " + a JSON object + "\n\n", and then a "ping: \n\n"
// keep-alive. The objects are Hystrix's "HystrixCommand",
// "HystrixThreadPool" and "HystrixCollapser", with every field in the
// order and the units Hystrix writes them: counts of the rolling window,
// latencies and their percentile keys ("0", "25", ..., "99.5", "100") in
// whole milliseconds, errorPercentage a truncated integer, currentTime in
// Unix milliseconds, reportingHosts 1. What only the command package knows
// (group, pool, isCircuitBreakerOpen, the propertyValue_* fields) comes
// from the [CommandStatusProvider] of each key, and a pool's sizes from its
// [PoolStatusProvider]; without one, the group and pool are the command
// key, the breaker reads closed (as in Hystrix for a key without a
// breaker) and the properties and sizes read 0. The response has Hystrix's
// headers: Content-Type "text/event-stream;charset=UTF-8", Cache-Control
// "no-cache, no-store, max-age=0, must-revalidate" and Pragma "no-cache".
//
// The registry is [DefaultRegistry], which the command package's default
// registry records into, unless [WithRegistry] names another; the stream
// ticks on the registry's clock.
//
// A request may ask for another interval with ?delay=<milliseconds>, from 1
// to 3600000, as Hystrix's servlet up to 1.5.3 allowed (1.5.4 ignores it);
// any other value gets 400 Bad Request with a message that names the
// parameter. At most 5 clients ([WithMaxConnections]) read the stream at
// once; the next gets 503 Service Unavailable with Hystrix's
// "MaxConcurrentConnections reached: 5". After [WithShutdown]'s channel is
// closed, streams end and requests get 503 "Service has been shut down.".
// Methods other than GET and HEAD get 405.
//
// Each stream runs on its request's goroutine and starts no other: it
// returns, stopping its ticker, as soon as the client disconnects (the
// request's context ends), a frame cannot be written within 10 seconds, or
// the shutdown channel is closed. A stream must reach the client frame by
// frame: behind a ResponseWriter that cannot flush (a middleware's wrapper
// with neither Flush nor Unwrap) it ends after its first frame, and behind
// one with no write deadline the 10 seconds do not bound a write. The
// handler is safe for concurrent use.
//
// Where the stream differs from Hystrix 1.5.4+:
//
//   - The first frame is written as soon as a client connects, not one
//     interval later, so a dashboard draws at once.
//   - Each frame ends with one ping, where Hystrix writes pings from a loop
//     of its own every 500ms; a client cannot tell the difference, and a
//     longer ?delay= makes the pings less frequent too.
//   - ?delay= is honoured, and validated instead of clamped to 1.
//   - Commands come in the order of their keys, then pools and collapsers
//     in the order of theirs (Hystrix: the order of its hash maps).
//   - Hystrix lists only pools that have completed a task; a pool here is
//     listed once it has completed, run, queued or rejected any, so that a
//     pool whose every worker hangs from the start shows too.
//   - The objects carry rxhystrix's own fields beside Hystrix's, which the
//     Hystrix Dashboard ignores and Turbine sums: a command's rolling
//     counts of its own events (rollingCountRetried, rollingCountHedged,
//     rollingCountRetryBudgetExhausted, rollingCountRateLimited) after
//     Hystrix's last field, and circuitBreakerState, the breaker's state
//     (CommandStatus.CircuitBreakerState: HALF_OPEN, FORCED_OPEN, ...),
//     where isCircuitBreakerOpen says only open or not; with an adaptive
//     limit, its algorithm
//     (propertyValue_executionIsolationSemaphoreAdaptiveLimit, or a
//     pool's propertyValue_adaptiveLimit and propertyValue_maximumSize);
//     and with partitions (command.Config.Partitions), objects keyed by
//     partition name: partitionShare, partitionGuaranteed,
//     partitionInFlight and partitionRejected (since the key was first
//     used); with a backlog (command.Config.Backlog), backlogSize,
//     backlogWaiting (the executions waiting for a permit now),
//     cumulativeCountBacklogAdmitted and
//     cumulativeBacklogWaitTimeInMilliseconds (the waits that took a
//     permit, and their time in sum), cumulativeCountBacklogFull and
//     cumulativeCountBacklogExpired (the executions it refused: full, or
//     their wait ran out), since the key was first used; with a
//     sleep window that grows or has a jitter
//     (breaker.Config.MaxSleepWindow, SleepWindowJitter),
//     circuitBreakerSleepWindowInMilliseconds, the window of the
//     breaker's latest opening; with a breaker that throttles
//     (breaker.Config.ThrottleSuccessPercentage),
//     circuitBreakerThrottlePercentage, the share of executions, 0 to
//     100, it refuses now; with faults injected (command.Config.Faults),
//     faultInjectionEnabled, whether it injects them now,
//     cumulativeCountFaultDelays and cumulativeCountFaultErrors, the
//     executions it delayed and failed since the key was first used, and,
//     while faults that end by themselves are on, faultInjectionUntil,
//     their end (RFC 3339, UTC; a string, which Turbine does not sum).
func Handler(opts ...HandlerOption) http.Handler {
	return newHandler("Handler", (*frame).appendMetrics, DefaultStreamInterval, opts)
}

// newHandler returns a stream of the events that appendEvents appends to
// a frame, written every interval unless an option or the request says
// otherwise, after the options opts of the constructor named name.
func newHandler(name string, appendEvents func(*frame, *handler, []byte) []byte, interval time.Duration, opts []HandlerOption) *handler {
	h := &handler{
		appendEvents:   appendEvents,
		registry:       DefaultRegistry,
		interval:       interval,
		maxConnections: DefaultMaxStreamConnections,
	}
	for i, o := range opts {
		if o == nil {
			panic(fmt.Sprintf("metricsstream: %s: option %d is nil", name, i))
		}
		o.applyHandler(h)
	}
	if h.clock == nil {
		h.clock = h.registry.clock
	}
	return h
}

// handler is the http.Handler that Handler, ConfigHandler,
// UtilizationHandler, RequestEventsHandler and EventsHandler return: one transport,
// Hystrix's, for the events each appends to a frame. Its fields but the
// connection count are set once.
type handler struct {
	appendEvents   func(*frame, *handler, []byte) []byte
	registry       *Registry
	clock          clock.Clock
	interval       time.Duration
	maxConnections int64
	collapsers     CollapserSource // nil: no collapsers
	requests       bool            // each stream subscribes to the registry's requests
	shutdown       <-chan struct{} // nil: never

	connections atomic.Int64 // streams being served
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !answersGet(w, r, "the stream") {
		return
	}
	interval, err := streamInterval(r.URL.RawQuery, h.interval)
	if err != nil {
		http.Error(w, "metricsstream: "+err.Error(), http.StatusBadRequest)
		return
	}
	if h.isShutDown() {
		http.Error(w, shutDownMessage, http.StatusServiceUnavailable)
		return
	}
	if n := h.connections.Add(1); n > h.maxConnections {
		h.connections.Add(-1)
		http.Error(w, "MaxConcurrentConnections reached: "+strconv.FormatInt(h.maxConnections, 10), http.StatusServiceUnavailable)
		return
	}
	defer h.connections.Add(-1)

	hdr := w.Header()
	hdr.Set("Content-Type", streamContentType)
	hdr.Set("Cache-Control", streamCacheControl)
	hdr.Set("Pragma", "no-cache")
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return
	}
	h.stream(r.Context(), w, interval)
}

// answersGet reports whether r is a GET or a HEAD, the methods the
// package's handlers answer, and answers any other 405, naming what
// refused it.
func answersGet(w http.ResponseWriter, r *http.Request, what string) bool {
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return true
	}
	w.Header().Set("Allow", "GET, HEAD")
	http.Error(w, "metricsstream: "+what+" answers GET, not "+r.Method, http.StatusMethodNotAllowed)
	return false
}

func (h *handler) isShutDown() bool {
	select {
	case <-h.shutdown:
		return true
	default:
		return false
	}
}

// stream writes a frame now, one every interval and, for
// RequestEventsHandler, one as soon as a request has ended, until the
// client leaves, a write fails or the handler shuts down.
func (h *handler) stream(ctx context.Context, w http.ResponseWriter, interval time.Duration) {
	rc := http.NewResponseController(w)
	// A ResponseWriter that has no deadlines (a test recorder) has nothing
	// to clear: the errors are ErrNotSupported.
	defer rc.SetWriteDeadline(time.Time{})
	ticker := h.clock.NewTicker(interval)
	defer ticker.Stop()
	var f frame
	if h.requests {
		f.requests = h.registry.requests.subscribe()
		defer h.registry.requests.unsubscribe(f.requests)
	}
	for {
		b := f.build(h)
		_ = rc.SetWriteDeadline(time.Now().Add(streamWriteTimeout))
		if _, err := w.Write(b); err != nil {
			return
		}
		if err := rc.Flush(); err != nil {
			return
		}
		// The deadline bounds the write, not the wait for the next frame:
		// an HTTP/2 server resets a stream whose write deadline passes
		// even while nothing is being written, which would cut a stream
		// whose interval is longer than streamWriteTimeout.
		_ = rc.SetWriteDeadline(time.Time{})
		select {
		case <-ctx.Done():
			return
		case <-h.shutdown:
			return
		case <-ticker.C():
		case e := <-f.requests: // nil, never ready, but for RequestEventsHandler
			f.arrived = append(f.arrived, e)
		}
	}
}

// frame is the buffers one stream reuses from frame to frame.
type frame struct {
	buf        []byte
	commands   []*CommandMetrics
	pools      []*PoolMetrics
	collapsers []*CollapserMetrics

	requests chan RequestEvents // the stream's subscription, or nil
	arrived  []RequestEvents    // taken from requests, not yet written
}

// build returns the events of one frame and a ping.
func (f *frame) build(h *handler) []byte {
	b := h.appendEvents(f, h, f.buf[:0])
	b = append(b, "ping: \n\n"...)
	// Keep the buffers, not the metrics: a key evicted from the registry
	// must not stay reachable from a stream.
	clear(f.commands)
	clear(f.pools)
	clear(f.collapsers)
	clear(f.arrived)
	f.arrived = f.arrived[:0]
	f.buf = b
	return b
}

// sortedKeys fills f's lists with the registry's commands, pools and
// collapsers, each list in the order of their keys.
func (f *frame) sortedKeys(r *Registry) {
	f.commands = slices.AppendSeq(f.commands[:0], r.Commands())
	slices.SortFunc(f.commands, func(x, y *CommandMetrics) int { return strings.Compare(x.key, y.key) })
	f.pools = slices.AppendSeq(f.pools[:0], r.Pools())
	slices.SortFunc(f.pools, func(x, y *PoolMetrics) int { return strings.Compare(x.key, y.key) })
	f.collapsers = slices.AppendSeq(f.collapsers[:0], r.Collapsers())
	slices.SortFunc(f.collapsers, func(x, y *CollapserMetrics) int { return strings.Compare(x.key, y.key) })
}

// appendMetrics appends the dashboard's events: every command, every pool
// that has done anything, every collapser of the registry and of the
// WithCollapsers source.
func (f *frame) appendMetrics(h *handler, b []byte) []byte {
	f.sortedKeys(h.registry)
	for _, m := range f.commands {
		s := m.Snapshot()
		b = append(b, "data: "...)
		b = appendCommandJSON(b, &s)
		b = append(b, "\n\n"...)
	}
	for _, p := range f.pools {
		s := p.Snapshot()
		if !poolShown(&s) {
			continue
		}
		b = append(b, "data: "...)
		b = appendPoolJSON(b, &s)
		b = append(b, "\n\n"...)
	}
	for _, c := range f.collapsers {
		s := c.Snapshot()
		b = append(b, "data: "...)
		b = appendCollapserJSON(b, &s)
		b = append(b, "\n\n"...)
	}
	if h.collapsers != nil {
		for s := range h.collapsers.Collapsers() {
			b = append(b, "data: "...)
			b = appendCollapserJSON(b, &s)
			b = append(b, "\n\n"...)
		}
	}
	return b
}

// poolShown reports whether the stream lists a pool: once it has
// completed, run, queued or rejected a command.
func poolShown(s *PoolSnapshot) bool {
	return s.CompletedTaskCount > 0 || s.ActiveCount > 0 || s.QueueSize > 0 ||
		s.Rolling[PoolRejection] > 0 || s.Cumulative[PoolRejection] > 0
}
