package metricsstream

import "github.com/rxhystrix/rxhystrix/observable"

// RequestEvents returns the hot stream of the requests that end, as
// Hystrix's HystrixRequestEventsStream: the executions each request
// logged, published once when it ends ([Registry.PublishRequestEvents];
// the command package publishes the request log of a request context when
// its context ends, if it logged an execution of a command of this
// registry). Every subscriber receives each request published while it
// is subscribed, on a goroutine of its own that ends with the
// subscription; publishing never waits for a subscriber: when 512
// requests wait for one, new ones are dropped for it, and counted
// ([Registry.DroppedRequestEvents]). A subscriber that panics is
// unsubscribed and counted ([Registry.PanickedSubscribers]).
// [RequestEventsHandler] serves this stream over HTTP.
func (r *Registry) RequestEvents() observable.Observable[RequestEvents] {
	return r.requests.observable(&r.panics)
}

// PublishRequestEvents offers the executions of a request that has ended
// to the subscribers of [Registry.RequestEvents] and of the
// [RequestEventsHandler] streams, as Hystrix's
// HystrixRequestEventsStream.write. They share e, which must not change
// afterwards. With no subscriber it does nothing.
func (r *Registry) PublishRequestEvents(e RequestEvents) { r.requests.publish(e) }

// RequestEventsWatched reports whether anybody subscribes to
// [Registry.RequestEvents] or reads a [RequestEventsHandler] stream of the
// registry: a publisher may skip gathering what nobody would receive.
func (r *Registry) RequestEventsWatched() bool { return r.requests.channels() != nil }

// DroppedRequestEvents returns how many requests [Registry.RequestEvents]
// and the [RequestEventsHandler] streams did not deliver because a
// subscriber had 512 waiting already, summed over subscribers.
func (r *Registry) DroppedRequestEvents() uint64 { return r.requests.dropped.Load() }

// PanickedSubscribers returns how many subscribers of the registry's own
// stream, [Registry.RequestEvents], panicked in OnNext. Each was
// unsubscribed, and its subscription failed with a
// [*SubscriberPanicError]. The streams of each key count theirs
// ([CommandMetrics.PanickedSubscribers]).
func (r *Registry) PanickedSubscribers() uint64 { return r.panics.Load() }
