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
// unsubscribes from o before returning. o's callbacks never touch rxgo's
// channel: they append to a private, unbounded queue that the producer
// drains, so a synchronous o is run to completion (its values held in
// memory) before its first value reaches rxgo: give an endless synchronous
// source a goroutine of its own with [observable.Observable.SubscribeOn].
//
// As everywhere in rxgo, a consumer that stops reading must cancel the
// context it passed with rx.WithContext, or the producer waits forever
// to hand over its next item.
func ToRx[T any](o observable.Observable[T], opts ...rx.Option) rx.Observable {
	return rx.Defer([]rx.Producer{func(ctx context.Context, next chan<- rx.Item) {
		q := &rxQueue[T]{signal: make(chan struct{}, 1)}
		sub := o.Subscribe(ctx, q)
		defer sub.Unsubscribe()
		for {
			items, terminal, err := q.take()
			for _, v := range items {
				if !rx.Of(v).SendContext(ctx, next) {
					return
				}
			}
			if terminal {
				if err != nil {
					rx.Error(err).SendContext(ctx, next)
				}
				return
			}
			select {
			case <-q.signal:
			case <-ctx.Done():
				return
			}
		}
	}}, opts...)
}

// rxQueue is the private buffer between an Observable and the rxgo
// producer goroutine that drains it.
type rxQueue[T any] struct {
	signal chan struct{} // has a token when there is something to take

	mu       sync.Mutex
	items    []T
	terminal bool
	err      error
}

func (q *rxQueue[T]) OnNext(v T) {
	q.mu.Lock()
	q.items = append(q.items, v)
	q.mu.Unlock()
	q.notify()
}

func (q *rxQueue[T]) OnError(err error) {
	q.mu.Lock()
	q.terminal, q.err = true, err
	q.mu.Unlock()
	q.notify()
}

func (q *rxQueue[T]) OnCompleted() {
	q.mu.Lock()
	q.terminal = true
	q.mu.Unlock()
	q.notify()
}

func (q *rxQueue[T]) notify() {
	select {
	case q.signal <- struct{}{}:
	default:
	}
}

// take removes and returns what is queued.
func (q *rxQueue[T]) take() (items []T, terminal bool, err error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	items, q.items = q.items, nil
	return items, q.terminal, q.err
}
