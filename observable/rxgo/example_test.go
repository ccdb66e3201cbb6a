package rxgo_test

import (
	"context"
	"errors"
	"fmt"

	rx "github.com/reactivex/rxgo/v2"

	"github.com/rxhystrix/rxhystrix/observable"
	"github.com/rxhystrix/rxhystrix/observable/rxgo"
)

func Example() {
	// Compose with rxgo's operators, then read the result back.
	evens := rxgo.ToRx(observable.Just(1, 2, 3, 4)).
		Filter(func(v any) bool { return v.(int)%2 == 0 })
	vs, err := rxgo.FromRx[int](evens).ToSlice(context.Background())
	fmt.Println(vs, err)
	// Output: [2 4] <nil>
}

func ExampleToRx() {
	evens := rxgo.ToRx(observable.Just(1, 2, 3, 4)).
		Filter(func(v any) bool { return v.(int)%2 == 0 }).
		Map(func(_ context.Context, v any) (any, error) { return v.(int) * 10, nil })
	for item := range evens.Observe() {
		fmt.Println(item.V, item.E)
	}
	// Output:
	// 20 <nil>
	// 40 <nil>
}

func ExampleFromRx() {
	_, err := rxgo.FromRx[int](rx.Just("not a number")()).First(context.Background())
	fmt.Println(errors.Is(err, rxgo.ErrItemType))
	fmt.Println(err)
	// Output:
	// true
	// rxgo: item of the wrong type: string, want int
}
