package httpcommand

import (
	"context"
	"fmt"
	"net/http"

	"golang.org/x/net/http/httpguts"

	"github.com/rxhystrix/rxhystrix/command"
	"github.com/rxhystrix/rxhystrix/internal/faultmark"
	"github.com/rxhystrix/rxhystrix/internal/keyedcommand"
)

// LogHeader is the response header Hystrix's request log filter
// (HystrixRequestLogViaResponseHeaderServletFilter) writes the request log
// under, for [WithLogHeader].
const LogHeader = "X-HystrixLog"

// RequestContext returns a handler that serves each request with h in a
// request context of its own, as Hystrix's
// HystrixRequestContextServletFilter: the request's context carries
// command.WithRequestContext's, so the commands h executes with
// r.Context() (or a context made from it) share one request cache, one
// request log and the request-scoped collapsers. The request context ends
// with the request, when h returns: its log then goes to the request
// events stream (metricsstream.RequestEventsHandler) if somebody watches
// it. It panics if h or an option is nil.
//
//	http.ListenAndServe(addr, httpcommand.RequestContext(mux, httpcommand.WithLogHeader(httpcommand.LogHeader)))
func RequestContext(h http.Handler, opts ...RequestContextOption) http.Handler {
	mustNotNil("RequestContext", h == nil)
	rh := &requestContextHandler{next: h}
	for i, o := range opts {
		if o == nil {
			panic(fmt.Sprintf("httpcommand: RequestContext: option %d is nil", i))
		}
		o.applyRequestContext(rh)
	}
	return rh
}

// A RequestContextOption changes what [RequestContext] does.
type RequestContextOption interface {
	applyRequestContext(*requestContextHandler)
}

type logHeaderOption string

func (o logHeaderOption) applyRequestContext(h *requestContextHandler) { h.logHeader = string(o) }

// WithLogHeader makes [RequestContext] add the request log to each
// response, in the header name, as Hystrix's
// HystrixRequestLogViaResponseHeaderServletFilter adds X-HystrixLog
// ([LogHeader]): "GetUser[SUCCESS][12ms], GetOrders[TIMEOUT,
// FALLBACK_SUCCESS][1000ms]" (command.RequestLog.String). The header goes
// with the response's headers, so it lists the executions that ended
// before h first wrote or flushed the response, or before h returned if
// it wrote nothing; a request that logged nothing by then gets no header.
// A log that is not printable ASCII (a command key is any UTF-8) goes
// with each other byte, and each '%', percent-encoded ("B%C3%BCcher"), as
// a control character would make HTTP/2 drop the header and Go's HTTP/1.1
// client refuse the response; url.PathUnescape gives the log back.
// It panics if name is not a valid header field name.
func WithLogHeader(name string) RequestContextOption {
	if !httpguts.ValidHeaderFieldName(name) { // net/http drops a bad name silently, when it writes it
		panic(fmt.Sprintf("httpcommand: WithLogHeader: %q is not a valid header field name", name))
	}
	return logHeaderOption(name)
}

// requestContextHandler is the handler RequestContext returns.
type requestContextHandler struct {
	next        http.Handler
	logHeader   string // "": no header
	faultHeader string // "": the requests' marks for fault injection are not read (see WithFaultHeader)
}

func (h *requestContextHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	if h.faultHeader != "" {
		var err error
		if ctx, err = faultmark.Mark(ctx, r.Header.Values(h.faultHeader)); err != nil {
			http.Error(w, fmt.Sprintf("httpcommand: header %s: %v", h.faultHeader, err), http.StatusBadRequest)
			return
		}
	}
	// The request context ends when h returns, as the type's doc says,
	// whether or not the server cancels the request's context then.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ctx = command.WithRequestContext(ctx)
	r = r.WithContext(ctx)
	if h.logHeader == "" {
		h.next.ServeHTTP(w, r)
		return
	}
	sw := &startWriter{ResponseWriter: w}
	sw.before = func() {
		if s := keyedcommand.LogText(ctx); s != "" {
			w.Header().Set(h.logHeader, s)
		}
	}
	h.next.ServeHTTP(sw, r)
	sw.beforeHeaders() // h wrote nothing: the server writes the headers now
}
