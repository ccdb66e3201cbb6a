package rxgo_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"testing"
	"time"

	rx "github.com/reactivex/rxgo/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/observable"
	"github.com/rxhystrix/rxhystrix/observable/rxgo"
)

// celsius implements fmt.Stringer, so that an rxgo stream can hold values
// of an interface type that some items satisfy and others do not.
type celsius int

func (c celsius) String() string { return strconv.Itoa(int(c)) + "°C" }

// errItem is the error of an rxgo error item.
type errItem struct{ n int }

func (e errItem) Error() string { return fmt.Sprintf("item error %d", e.n) }

// fuzzItem turns one byte of fuzz input into an rxgo item: a value of one
// of several types, a nil value, or an error.
func fuzzItem(b byte) rx.Item {
	n := int(b / 10)
	switch b % 10 {
	case 0:
		return rx.Of(n)
	case 1:
		return rx.Of(int64(n))
	case 2:
		return rx.Of(strconv.Itoa(n))
	case 3:
		return rx.Of(nil)
	case 4:
		return rx.Error(errItem{n})
	case 5:
		return rx.Of(celsius(n))
	case 6:
		return rx.Of(&n)
	case 7:
		return rx.Of([]int{n})
	case 8:
		return rx.Of(float64(n))
	default:
		return rx.Of(struct{ N int }{n})
	}
}

// rxItems is a cold rxgo Observable of the items of data, one per byte. Its
// producer stops when the consumer's context ends.
func rxItems(data []byte) rx.Observable {
	return rx.Defer([]rx.Producer{func(ctx context.Context, next chan<- rx.Item) {
		for _, b := range data {
			if !fuzzItem(b).SendContext(ctx, next) {
				return
			}
		}
	}})
}

// expectFromRx is what FromRx[T] of data must produce: the values before
// the first item that is an error or does not convert to T, and then that
// item's error, or the wrong type's name, or completion.
func expectFromRx[T any](data []byte) (values []T, itemErr error, wrongType string) {
	t := reflect.TypeFor[T]()
	for _, b := range data {
		item := fuzzItem(b)
		if item.E != nil {
			return values, item.E, ""
		}
		switch v, ok := item.V.(T); {
		case ok:
			values = append(values, v)
		case item.V == nil && isNilable(t.Kind()):
			var zero T
			values = append(values, zero)
		case item.V == nil:
			return values, nil, "nil"
		default:
			return values, nil, fmt.Sprintf("%T", item.V)
		}
	}
	return values, nil, ""
}

func isNilable(k reflect.Kind) bool {
	switch k {
	case reflect.Interface, reflect.Pointer, reflect.Slice, reflect.Map, reflect.Chan, reflect.Func:
		return true
	}
	return false
}

// FuzzFromRx feeds FromRx rxgo streams of mixed item types, read as each of
// several types: it never panics, emits exactly the items of its type in
// order, and ends at the first error item with that error or at the first
// item of another type with an error wrapping ErrItemType that names both
// types. Reading only the first value stops the rxgo stream (the package's
// goleak check finds any producer left behind).
func FuzzFromRx(f *testing.F) {
	f.Add([]byte{}, uint8(0))
	f.Add([]byte{0, 10, 20}, uint8(0))
	f.Add([]byte{0, 1}, uint8(0))
	f.Add([]byte{0, 3}, uint8(0))
	f.Add([]byte{0, 3, 2, 4}, uint8(1))
	f.Add([]byte{5, 15, 3, 0}, uint8(2))
	f.Add([]byte{6, 3, 16, 7}, uint8(3))
	f.Add([]byte{7, 3, 17, 6}, uint8(4))
	f.Add([]byte{4, 0}, uint8(5))
	f.Add([]byte{9, 19, 0}, uint8(0))
	f.Add([]byte{8, 0, 1, 2, 3, 4, 5, 6, 7, 9}, uint8(1))

	f.Fuzz(func(t *testing.T, data []byte, target uint8) {
		switch target % 6 {
		case 0:
			checkFromRx[int](t, data)
		case 1:
			checkFromRx[any](t, data)
		case 2:
			checkFromRx[fmt.Stringer](t, data)
		case 3:
			checkFromRx[*int](t, data)
		case 4:
			checkFromRx[[]int](t, data)
		default:
			checkFromRx[error](t, data)
		}
	})
}

func checkFromRx[T any](t *testing.T, data []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	values, itemErr, wrongType := expectFromRx[T](data)
	o := rxgo.FromRx[T](rxItems(data))

	got, err := o.ToSlice(ctx)
	require.NoError(t, ctx.Err(), "FromRx[%v] of %v did not terminate", reflect.TypeFor[T](), data)
	switch {
	case itemErr != nil:
		assert.ErrorIs(t, err, itemErr, "the error item ends the stream with its error")
		assert.NotErrorIs(t, err, rxgo.ErrItemType)
	case wrongType != "":
		require.ErrorIs(t, err, rxgo.ErrItemType, "an item of type %s", wrongType)
		assert.Contains(t, err.Error(), wrongType, "the error names the item's type")
		assert.Contains(t, err.Error(), reflect.TypeFor[T]().String(), "the error names the wanted type")
	default:
		assert.NoError(t, err)
	}
	if len(values) == 0 {
		assert.Empty(t, got)
	} else {
		assert.Equal(t, values, got, "every item of type %v, in order", reflect.TypeFor[T]())
	}

	first, err := o.First(ctx)
	switch {
	case len(values) > 0:
		require.NoError(t, err)
		assert.Equal(t, values[0], first)
	case itemErr != nil:
		assert.ErrorIs(t, err, itemErr)
	case wrongType != "":
		assert.ErrorIs(t, err, rxgo.ErrItemType)
	default:
		assert.True(t, errors.Is(err, observable.ErrEmpty), "First of an empty stream: %v", err)
	}
}
