package rxgo

import (
	"context"
	"sync"

	rx "github.com/reactivex/rxgo/v2"

	"github.com/rxhystrix/rxhystrix/observable"
)

// ToRx returns a lazy rx.Observable of o's notifications: values as
// rx.Of(v), an error as rx.Error(err). opts are given to rx.Defer.
//
// Each rxgo observation (Observe, ForEach, First().Get(), ...) subscribes
// to o anew, with the context rxgo gives its producer (the one passed with
// rx.WithContext, else context.Background), and runs one goroutine, the
// producer, which ends when o terminates or that context is done; it
// unsubscribes from o before it returns. A synchronous o runs on the
// producer.
//
// o is observed with backpressure: each of its OnNext calls returns once
// rxgo has taken the value, or once the context is done, so no value is
// buffered and a slow rxgo consumer slows the source down. A value rxgo
// did not take before the context was done goes to the Discard of o's
// Single (see [observable.Observable.AsSingle]), if that is an
// [observable.Discarder]. An endless synchronous o delivers its first
// value at once and runs no further ahead of the consumer than rxgo's
// channels hold. A hot o's producer is held up as a slow subscriber of it
// holds it up: the goroutine calling an [observable.Subject]'s OnNext,
// say, waits for rxgo.
//
// As everywhere in rxgo, a consumer that stops reading before the end
// (First, Take, a loop that breaks) must cancel the context it passed
// with rx.WithContext, or the producer waits for ever to hand over its
// next value. Once that context is done, the subscription to o ends (o
// sees its context done) and the producer returns.
func ToRx[T any](o observable.Observable[T], opts ...rx.Option) rx.Observable {
	return rx.Defer([]rx.Producer{func(ctx context.Context, next chan<- rx.Item) {
		produce(ctx, o, next)
	}}, opts...)
}

// produce is the body of one rxgo observation's producer: it subscribes
// to o and waits until the subscription has ended or ctx is done.
//
// rxgo closes next when produce returns, and a send on a closed channel
// panics, so no OnNext of an asynchronous o may still be sending by then:
// the handoff's sends happen under its lock, and close, under the same
// lock, makes every later one drop its value. close cannot wait long for
// a send in progress, since ctx is done by then or o has terminated.
func produce[T any](ctx context.Context, o observable.Observable[T], next chan<- rx.Item) {
	h := &handoff[T]{ctx: ctx, next: next}
	if s, ok := o.AsSingle(); ok {
		h.discard, _ = s.(observable.Discarder[T])
	}
	sub := o.Subscribe(ctx, h)
	select {
	case <-sub.Done():
	case <-ctx.Done():
		sub.Unsubscribe()
	}
	h.close()
}

// handoff is the Observer that hands an Observable's notifications to an
// rxgo producer's channel, each when rxgo takes it.
//
// The Observable never calls it concurrently, so mu only orders the
// notifications against close. A send that fails has found ctx done; the
// subscription, whose context derives from ctx, is ending with it.
type handoff[T any] struct {
	ctx  context.Context
	next chan<- rx.Item
	// discard is o's Single's, if it is a Discarder: it is handed a value
	// that rxgo did not take.
	discard observable.Discarder[T]

	mu     sync.Mutex
	closed bool // the producer has returned, or is about to
}

func (h *handoff[T]) OnNext(v T) {
	if !h.send(rx.Of(v)) && h.discard != nil {
		h.discard.Discard(v)
	}
}

func (h *handoff[T]) OnError(err error) { h.send(rx.Error(err)) }

// OnCompleted has nothing to send: the producer returns when the
// subscription has ended, and rxgo then closes its channel.
func (h *handoff[T]) OnCompleted() {}

// send hands item to rxgo, waiting until rxgo takes it or ctx is done,
// and reports whether rxgo took it.
func (h *handoff[T]) send(item rx.Item) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return !h.closed && item.SendContext(h.ctx, h.next)
}

// close makes every later send drop its item.
func (h *handoff[T]) close() {
	h.mu.Lock()
	h.closed = true
	h.mu.Unlock()
}
