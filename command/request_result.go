package command

import (
	"context"
	"sync"
)

// pendingResult is a value and an error that arrive once, for callers that
// wait on a channel (Execute) and for subscribers that are called back
// (ToObservable), so that nobody needs a goroutine to wait.
type pendingResult[T any] struct {
	done chan struct{}

	mu        sync.Mutex
	resolved  bool
	value     T
	err       error
	callbacks []func()
}

func newPendingResult[T any]() *pendingResult[T] {
	return &pendingResult[T]{done: make(chan struct{})}
}

// resolve sets the result, closes done and runs the callbacks, on the
// calling goroutine. Only the first call counts; it reports whether it
// was this one.
func (p *pendingResult[T]) resolve(v T, err error) bool {
	p.mu.Lock()
	if p.resolved {
		p.mu.Unlock()
		return false
	}
	p.resolved, p.value, p.err = true, v, err
	callbacks := p.callbacks
	p.callbacks = nil
	p.mu.Unlock()
	close(p.done)
	for _, f := range callbacks {
		f()
	}
	return true
}

// whenResolved calls f once the result is set: at once, on the calling
// goroutine, if it is set already.
func (p *pendingResult[T]) whenResolved(f func()) {
	p.mu.Lock()
	if !p.resolved {
		p.callbacks = append(p.callbacks, f)
		p.mu.Unlock()
		return
	}
	p.mu.Unlock()
	f()
}

// result returns the result; only call it once done is closed.
func (p *pendingResult[T]) result() (T, error) { return p.value, p.err }

// isResolved reports whether the result is set.
func (p *pendingResult[T]) isResolved() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// departure notices that a subscriber leaves: the end of its subscription
// or of the context its Observable was made with, whichever comes first,
// unless it stays for its result first. Exactly one of leave and stay wins.
type departure struct {
	mu    sync.Mutex
	done  bool
	stops []func() bool
	leave func()
}

// watchDeparture calls leave, once, when sub or caller ends before stay is
// called. An Observable's subscription context calls leave on the
// goroutine that ends it (Unsubscribe, Future.Cancel), so that a request
// has left by the time they return.
func watchDeparture(sub, caller context.Context, leave func()) *departure {
	d := &departure{leave: leave}
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, ctx := range [2]context.Context{sub, caller} {
		if ctx != nil && ctx.Done() != nil {
			d.stops = append(d.stops, afterFunc(ctx, d.depart))
		}
	}
	return d
}

// afterFunc is context.AfterFunc, but calls f on the goroutine that ends
// ctx when ctx offers that, as an Observable's subscription context does.
func afterFunc(ctx context.Context, f func()) func() bool {
	if a, ok := ctx.(interface{ AfterFunc(func()) func() bool }); ok {
		return a.AfterFunc(f)
	}
	return context.AfterFunc(ctx, f)
}

func (d *departure) depart() {
	if d.claim() {
		d.leave()
	}
}

// stay reports whether the subscriber is still there, and if so keeps it:
// leave will not be called.
func (d *departure) stay() bool { return d.claim() }

// claim decides between leave and stay, and stops watching.
func (d *departure) claim() bool {
	d.mu.Lock()
	if d.done {
		d.mu.Unlock()
		return false
	}
	d.done = true
	stops := d.stops
	d.stops = nil
	d.mu.Unlock()
	for _, stop := range stops {
		stop()
	}
	return true
}
