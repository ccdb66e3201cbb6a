package rxgo

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	rx "github.com/reactivex/rxgo/v2"

	"github.com/rxhystrix/rxhystrix/observable"
)

// ErrItemType is the error, wrapped with both type names, of an
// Observable made by [FromRx] when an rxgo item's value is not of the
// Observable's type.
var ErrItemType = errors.New("rxgo: item of the wrong type")

// FromRx returns an Observable of an rx.Observable's items. Each
// subscription observes o with rx.WithContext of the subscription's
// context, so rxgo's lazy stages stop when the subscriber stops, and
// starts a goroutine that reads rxgo's channel until it is closed (the
// Observable completes), an error item arrives (the Observable fails with
// it), or the subscription ends. An item whose value is not a T is an
// error that names both types and wraps [ErrItemType]. A nil value is T's
// zero value when T is an interface, pointer, slice, map, channel or
// function type.
//
// It panics if o is nil.
func FromRx[T any](o rx.Observable) observable.Observable[T] {
	if o == nil {
		panic("rxgo: FromRx with nil o")
	}
	return observable.Create(func(ctx context.Context, down observable.Observer[T]) {
		go forward(ctx, o.Observe(rx.WithContext(ctx)), down)
	})
}

// forward hands the items of one rxgo observation to down until the
// observation ends, an item ends the stream, or ctx is done. It is the
// body of a FromRx subscription's reading goroutine.
func forward[T any](ctx context.Context, items <-chan rx.Item, down observable.Observer[T]) {
	for {
		select {
		case item, ok := <-items:
			if !ok {
				down.OnCompleted()
				return
			}
			if item.E != nil {
				down.OnError(item.E)
				return
			}
			v, err := fromItem[T](item.V)
			if err != nil {
				down.OnError(err)
				return
			}
			down.OnNext(v)
		case <-ctx.Done():
			return
		}
	}
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
