package metricsstream

import (
	"fmt"
	"runtime/debug"

	"github.com/rxhystrix/rxhystrix/observable"
)

// SubscriberPanicError is the error that ends the subscription of an
// observer that panicked in OnNext, in a stream of this package or of
// package breaker. The streams deliver on goroutines of their own (a
// timer's, a subscription's), where a panic would take the process down;
// they recover it instead, unsubscribe the observer, which receives no
// more values, end its subscription with this error through OnError (its
// Done closes), and count it ([CommandMetrics.PanickedSubscribers], and
// Breaker.PanickedSubscribers in package breaker). The other subscribers,
// and the commands, go on.
type SubscriberPanicError struct {
	// Value is what was passed to panic.
	Value any
	// Stack is the stack of the panicking goroutine.
	Stack []byte
}

// Error returns the panic value.
func (p *SubscriberPanicError) Error() string {
	return fmt.Sprintf("metricsstream: subscriber panicked: %v", p.Value)
}

// Unwrap returns the panic value if it is an error.
func (p *SubscriberPanicError) Unwrap() error {
	if err, ok := p.Value.(error); ok {
		return err
	}
	return nil
}

// deliver calls o.OnNext(v) and returns the panic it recovers, if any.
func deliver[T any](o observable.Observer[T], v T) (p *SubscriberPanicError) {
	defer func() {
		if r := recover(); r != nil {
			p = &SubscriberPanicError{Value: r, Stack: debug.Stack()}
		}
	}()
	o.OnNext(v)
	return nil
}
