package metricsstream

import "net/http"

// RequestEventsHandler returns the request events stream of a [Registry],
// Hystrix 1.5's /hystrix/requests.stream (HystrixRequestEventsSseServlet):
// as soon as a request has ended, one event "data: " + the JSON array of
// its executions ([RequestEvents.MarshalJSON]) + "\n\n", then a ping;
// and a ping every interval (500ms unless [WithInterval] or the request's
// ?delay= says otherwise) while no request ends, so that a client that
// has gone is noticed.
//
//	mux.Handle("/hystrix/requests.stream", metricsstream.RequestEventsHandler())
//
// The requests are those published to the registry
// ([Registry.PublishRequestEvents]): the command package publishes the
// request log of a request context (command.WithRequestContext) when its
// context ends, once it has logged an execution of a command of the
// registry while a stream or subscriber was watching. A stream shows the
// requests that end while it is open; when 512 of them wait for a client
// that reads too slowly, later ones are dropped for it and counted
// ([Registry.DroppedRequestEvents]).
//
// Transport, connection limit, ?delay=, shutdown and the options are as
// for [Handler]; the first ping is written as soon as a client connects.
// [WithCollapsers] changes nothing here.
func RequestEventsHandler(opts ...HandlerOption) http.Handler {
	h := newHandler("RequestEventsHandler", (*frame).appendRequests, DefaultStreamInterval, opts)
	h.requests = true
	return h
}

// appendRequests appends one event per request that has ended since the
// last frame: those the stream took while waiting, then those its
// subscription holds now (not more, so that a busy registry cannot keep
// a frame from ending).
func (f *frame) appendRequests(_ *handler, b []byte) []byte {
	for range len(f.requests) {
		f.arrived = append(f.arrived, <-f.requests)
	}
	for _, e := range f.arrived {
		if len(e) == 0 {
			continue
		}
		b = append(b, "data: "...)
		b = e.appendJSON(b)
		b = append(b, "\n\n"...)
	}
	return b
}
