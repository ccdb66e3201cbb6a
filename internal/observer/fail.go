// Package observer holds what the streams of rxhystrix's packages do to
// the observers they deliver to.
package observer

import "github.com/rxhystrix/rxhystrix/observable"

// Fail ends the subscription of o, whose OnNext (or OnCompleted) panicked,
// with err through OnError. A panic in OnError is ignored: the
// subscription ends all the same, and the stream's goroutine, where a
// panic would take the process down, goes on.
func Fail[T any](o observable.Observer[T], err error) {
	defer func() { _ = recover() }()
	o.OnError(err)
}
