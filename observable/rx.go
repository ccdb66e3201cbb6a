package observable

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"

	"github.com/reactivex/rxgo/v2"
)

// ToRx returns a lazy rxgo.Observable of o's notifications: values as
// rxgo.Of(v), an error as rxgo.Error(err). opts are given to rxgo.Defer.
//
// Each rxgo observation (Observe, ForEach, First().Get(), ...) subscribes
// to o anew, with the context rxgo gives its producer (the one passed with
// rxgo.WithContext, else context.Background), and runs one goroutine, the
// producer, which ends when o terminates or that context is done; it
// unsubscribes from o before returning. o's callbacks never touch rxgo's
// channel: they append to a private, unbounded queue that the producer
// drains, so a synchronous o is run to completion (its values held in
// memory) before its first value reaches rxgo: give an endless synchronous
// source a goroutine of its own with [Observable.SubscribeOn].
//
// As everywhere in rxgo, a consumer that stops reading must cancel the
// context it passed with rxgo.WithContext, or the producer waits forever
// to hand over its next item.
func ToRx[T any](o Observable[T], opts ...rxgo.Option) rxgo.Observable {
	return rxgo.Defer([]rxgo.Producer{func(ctx context.Context, next chan<- rxgo.Item) {
		q := &rxQueue[T]{signal: make(chan struct{}, 1)}
		sub := o.Subscribe(ctx, q)
		defer sub.Unsubscribe()
		for {
			items, terminal, err := q.take()
			for _, v := range items {
				if !rxgo.Of(v).SendContext(ctx, next) {
					return
				}
			}
			if terminal {
				if err != nil {
					rxgo.Error(err).SendContext(ctx, next)
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

// ErrItemType is the error, wrapped with both type names, of an
// Observable made by [FromRx] when an rxgo item's value is not of the
// Observable's type.
var ErrItemType = errors.New("observable: rxgo item of the wrong type")

// FromRx returns an Observable of an rxgo.Observable's items. Each
// subscription observes o with rxgo.WithContext of the subscription's
// context, so rxgo's lazy stages stop when the subscriber stops, and
// starts a goroutine that reads rxgo's channel until it is closed (the
// Observable completes), an error item arrives (the Observable fails with
// it), or the subscription ends. An item whose value is not a T is an
// error that names both types and wraps [ErrItemType]. A nil value is T's zero value when T is an
// interface, pointer, slice, map, channel or function type.
//
// It panics if o is nil.
func FromRx[T any](o rxgo.Observable) Observable[T] {
	if o == nil {
		panic("observable: FromRx with nil o")
	}
	return Observable[T]{src: sourceFunc[T](func(s *scope, down Observer[T]) {
		ch := o.Observe(rxgo.WithContext(s))
		go readChannel(s, ch, func(item rxgo.Item) bool {
			if item.E != nil {
				down.OnError(item.E)
				return false
			}
			v, err := fromItem[T](item.V)
			if err != nil {
				down.OnError(err)
				return false
			}
			down.OnNext(v)
			return true
		}, down.OnCompleted)
	})}
}

// fromItem converts an rxgo item's value to T.
func fromItem[T any](x any) (T, error) {
	if v, ok := x.(T); ok {
		return v, nil
	}
	var zero T
	t := reflect.TypeFor[T]()
	if x == nil {
		switch t.Kind() {
		case reflect.Interface, reflect.Pointer, reflect.Slice, reflect.Map, reflect.Chan, reflect.Func:
			return zero, nil
		}
		return zero, fmt.Errorf("%w: nil, want %v", ErrItemType, t)
	}
	return zero, fmt.Errorf("%w: %T, want %v", ErrItemType, x, t)
}
