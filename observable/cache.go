package observable

import (
	"context"
	"sync/atomic"
)

// Cache returns an Observable that subscribes to o once, when it is first
// subscribed to, and replays everything o emitted, and its terminal event,
// to every subscriber, including those that come after o terminated. It
// is safe to subscribe to from many goroutines at once.
//
// The subscription to o runs on the goroutine of the first subscriber,
// with that subscriber's context values but not its cancellation: as in
// RxJava, Cache never cancels o, even when every subscriber has left, so
// o runs until it terminates and its values are kept while the returned
// Observable is reachable. Use it on finite sources.
func (o Observable[T]) Cache() Observable[T] {
	c := &cache[T]{src: o}
	c.subject.kind = replaySubject
	return Observable[T]{src: c}
}

type cache[T any] struct {
	src     Observable[T]
	started atomic.Bool
	subject Subject[T]
}

func (c *cache[T]) subscribe(s *scope, down Observer[T]) {
	c.subject.subscribe(s, down)
	if c.started.CompareAndSwap(false, true) {
		c.src.Subscribe(context.WithoutCancel(s), &c.subject)
	}
}
