// Package ctxend is how a context of package observable tells one
// function its end without allocating, for the packages of this module
// that wait under such a context on a channel of their own.
//
// context.AfterFunc, or the AfterFunc method it looks for, allocates what
// it registers and the function that stops it; a Done channel is made for
// the asking, and waiting on it beside a channel of one's own is a select.
// A pool caller in command waits once per execution, and under a Future's
// context that is one to three allocations and a select more than
// Execute's wait (bench/peers rxhystrix-pool-queue), so the context
// keeps one word for one function instead.
package ctxend

// A Notifier is a context that can call one function when it ends. It
// holds at most one at a time: a caller whose NotifyEnd reports false
// waits on the context's Done channel instead.
type Notifier interface {
	// NotifyEnd arranges for *f to be called once the context has ended,
	// on the goroutine that ends it; *f must not change until then or
	// until StopNotify. It reports false, and does nothing, when it
	// cannot: it holds a function already, the context has ended, or it
	// learns of its end only through a parent it does not watch.
	NotifyEnd(f *func()) bool
	// StopNotify undoes a NotifyEnd(f) that reported true. It reports
	// whether it stopped the call; false means *f has been called, or is
	// being called.
	StopNotify(f *func()) bool
}
