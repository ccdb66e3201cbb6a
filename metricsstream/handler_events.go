package metricsstream

import (
	"net/http"
	"time"
)

// An EventSource is the events of a stream that [EventsHandler] serves:
// events it makes itself, such as the sum of other streams.
type EventSource interface {
	// AppendEvents appends to dst the events of one frame as of now, each
	// "data: " + a JSON object + "\n\n", and returns the extended slice.
	// It is called from the goroutine of each stream, so concurrently when
	// several clients read.
	AppendEvents(dst []byte, now time.Time) []byte
}

// EventsHandler returns a stream of the events that source appends, on
// the transport of [Handler]: Hystrix's headers, a frame as soon as a
// client connects and one every interval ([WithInterval], or the
// request's ?delay=), a ping after each, the connection limit
// ([WithMaxConnections]) and [WithShutdown]. It ticks on the clock of
// [WithClock], else on that of [WithRegistry]'s registry (of
// [DefaultRegistry] without it: the real clock). [WithCollapsers] has no
// effect: the source makes every event. It panics if source or an option
// is nil.
func EventsHandler(source EventSource, opts ...HandlerOption) http.Handler {
	if source == nil {
		panic("metricsstream: EventsHandler with nil source")
	}
	return newHandler("EventsHandler", func(_ *frame, h *handler, b []byte) []byte {
		return source.AppendEvents(b, h.clock.Now())
	}, DefaultStreamInterval, opts)
}
