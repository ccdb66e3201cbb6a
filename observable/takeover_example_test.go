package observable_test

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/rxhystrix/rxhystrix/observable"
)

// ToFuture never blocks: the work of a FromFunc is handed to a goroutine
// of its own. A Get whose context cannot end, which could only wait, runs
// the work itself if that goroutine has not begun it (FromFunc's Single
// is Joinable). Either way the work runs once.
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
