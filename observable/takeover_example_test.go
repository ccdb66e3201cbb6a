package observable_test

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/rxhystrix/rxhystrix/observable"
)

// ToFuture never blocks: the work of a FromFunc is handed over, to start
// on a goroutine of its own. A Get whose context cannot end, which could
// only wait, runs the work itself if nothing has started it yet
// (FromFunc's Single is Joinable). Either way the work runs once.
func ExampleJoinable() {
	var runs atomic.Int32
	f := observable.FromFunc(func(context.Context) (string, error) {
		runs.Add(1)
		return "profile", nil
	}).ToFuture(context.Background())

	v, err := f.Get(context.Background())
	fmt.Println(v, err, runs.Load())
	// Output: profile <nil> 1
}

// ReplayNowOn subscribes at once, here on a goroutine of its own, and
// hands every subscriber, early or late, the one result.
func ExampleObservable_ReplayNowOn() {
	var runs atomic.Int32
	hot := observable.FromFunc(func(context.Context) (string, error) {
		runs.Add(1)
		return "profile", nil
	}).ReplayNowOn(context.Background(), observable.NewGoroutine)

	first, _ := hot.First(context.Background())
	again, _ := hot.First(context.Background())
	fmt.Println(first, again, runs.Load())
	// Output: profile profile 1
}
