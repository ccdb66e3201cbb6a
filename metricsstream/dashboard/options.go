package dashboard

import (
	"fmt"
	"net/http"
	"net/url"
)

// An Option changes what [Handler] serves. Options are values built by
// [WithStreamURL], [WithStream] and [WithRequestsURL]; a nil Option makes
// Handler panic.
type Option interface {
	apply(*options)
}

// options is what the Options of one Handler call add up to.
type options struct {
	streamURL   string       // the page's default stream; never empty
	requestsURL string       // the page's default request events stream; empty for none
	stream      http.Handler // served at "stream" next to the page; nil serves nothing there
}

type streamURLOption string

func (o streamURLOption) apply(opts *options) { opts.streamURL = string(o) }

// WithStreamURL sets the stream the page reads when its address has no
// ?stream= parameter. A relative URL is resolved against the page's own
// address, as a link would be: the default, [DefaultStreamURL], is "stream",
// so a page served at /hystrix/ reads /hystrix/stream. An absolute URL may
// name another host, such as a Turbine server; see the package documentation
// for what a stream on another origin must allow.
//
// WithStreamURL panics when u is empty or does not parse as a URL, with a
// message that names it.
func WithStreamURL(u string) Option {
	if u == "" {
		panic("dashboard: WithStreamURL: empty stream URL")
	}
	if _, err := url.Parse(u); err != nil {
		panic(fmt.Sprintf("dashboard: WithStreamURL: stream URL %q: %v", u, err))
	}
	return streamURLOption(u)
}

type streamOption struct{ h http.Handler }

func (o streamOption) apply(opts *options) { opts.stream = o.h }

// WithStream makes the dashboard serve h at "stream" next to the page, the
// default stream URL, so that one mount serves both:
//
//	mux.Handle("/hystrix/", dashboard.Handler(dashboard.WithStream(streamHandler)))
//
// serves the page at /hystrix/ and h at /hystrix/stream. Every method reaches
// h, unchanged. Without WithStream, the dashboard serves nothing at "stream"
// and the stream is mounted on its own, for example
// mux.Handle("/hystrix/stream", streamHandler) next to the dashboard.
//
// WithStream panics when h is nil.
func WithStream(h http.Handler) Option {
	if h == nil {
		panic("dashboard: WithStream: nil stream handler")
	}
	return streamOption{h}
}

type requestsURLOption string

func (o requestsURLOption) apply(opts *options) { opts.requestsURL = string(o) }

// WithRequestsURL sets the request events stream (Hystrix 1.5's
// requests.stream, served by metricsstream.RequestEventsHandler) whose
// requests the page lists when its address has neither ?requests= nor
// ?stream=; the empty string lists none. A relative URL is resolved
// against the page's address: the default, [DefaultRequestsURL], makes a
// page served at /hystrix/ read /hystrix/requests.stream.
//
// WithRequestsURL panics when u does not parse as a URL, with a message
// that names it.
func WithRequestsURL(u string) Option {
	if _, err := url.Parse(u); err != nil {
		panic(fmt.Sprintf("dashboard: WithRequestsURL: requests stream URL %q: %v", u, err))
	}
	return requestsURLOption(u)
}
