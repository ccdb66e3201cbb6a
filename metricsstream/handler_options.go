package metricsstream

import (
	"fmt"
	"time"

	"github.com/rxhystrix/rxhystrix/internal/clock"
)

// The defaults of [Handler], Hystrix's.
const (
	// DefaultStreamInterval is how often the stream writes the metrics
	// (hystrix.stream.dashboard.intervalInMilliseconds).
	DefaultStreamInterval = 500 * time.Millisecond
	// DefaultMaxStreamConnections is how many clients may read one
	// handler's stream at once (hystrix.config.stream.maxConcurrentConnections).
	DefaultMaxStreamConnections = 5
)

// A HandlerOption changes what [Handler] serves. Options are values built
// by the With* functions of this package; a nil HandlerOption makes Handler
// panic.
type HandlerOption interface {
	applyHandler(*handler)
}

type handlerRegistryOption struct{ r *Registry }

func (o handlerRegistryOption) applyHandler(h *handler) { h.registry = o.r }

// WithRegistry makes the stream show the commands and pools of r instead
// of [DefaultRegistry] (which the command package's DefaultRegistry records
// into). The stream ticks on r's clock. It panics if r is nil.
func WithRegistry(r *Registry) HandlerOption {
	if r == nil {
		panic("metricsstream: WithRegistry with nil registry")
	}
	return handlerRegistryOption{r}
}

type handlerIntervalOption time.Duration

func (o handlerIntervalOption) applyHandler(h *handler) { h.interval = time.Duration(o) }

// WithInterval sets how often the stream writes the metrics when the
// request does not say (with ?delay=); the default is
// [DefaultStreamInterval], 500ms. It panics if d is not positive.
func WithInterval(d time.Duration) HandlerOption {
	if d <= 0 {
		panic(fmt.Sprintf("metricsstream: WithInterval: interval %v is not positive", d))
	}
	return handlerIntervalOption(d)
}

type handlerMaxConnectionsOption int

func (o handlerMaxConnectionsOption) applyHandler(h *handler) { h.maxConnections = int64(o) }

// WithMaxConnections sets how many clients may read the stream at once;
// the next one gets 503 Service Unavailable with Hystrix's message
// "MaxConcurrentConnections reached: n". The default is
// [DefaultMaxStreamConnections], 5. It panics if n < 1.
func WithMaxConnections(n int) HandlerOption {
	if n < 1 {
		panic(fmt.Sprintf("metricsstream: WithMaxConnections: %d connections; want at least 1", n))
	}
	return handlerMaxConnectionsOption(n)
}

type handlerCollapsersOption struct{ s CollapserSource }

func (o handlerCollapsersOption) applyHandler(h *handler) { h.collapsers = o.s }

// WithCollapsers makes the stream write one "HystrixCollapser" object per
// collapser s reports, after those of the registry's collapsers, for
// collapsers whose metrics live elsewhere. It panics if s is nil.
func WithCollapsers(s CollapserSource) HandlerOption {
	if s == nil {
		panic("metricsstream: WithCollapsers with nil source")
	}
	return handlerCollapsersOption{s}
}

type handlerShutdownOption struct{ done <-chan struct{} }

func (o handlerShutdownOption) applyHandler(h *handler) { h.shutdown = o.done }

// WithShutdown ends every stream when done is closed, and answers later
// requests with 503 Service Unavailable and Hystrix's message "Service has
// been shut down.". A stream never ends by itself, and
// [net/http.Server.Shutdown] waits for it, so a server that shuts down
// gracefully closes done first, for instance from
// [net/http.Server.RegisterOnShutdown]. It panics if done is nil.
func WithShutdown(done <-chan struct{}) HandlerOption {
	if done == nil {
		panic("metricsstream: WithShutdown with nil channel")
	}
	return handlerShutdownOption{done}
}

type handlerClockOption struct{ c clock.Clock }

func (o handlerClockOption) applyHandler(h *handler) { h.clock = o.c }

// WithClock makes the stream tick on c instead of its registry's clock:
// for an [EventsHandler] whose source keeps its own time. It panics if c
// is nil.
func WithClock(c clock.Clock) HandlerOption {
	if c == nil {
		panic("metricsstream: WithClock with nil clock")
	}
	return handlerClockOption{c}
}
