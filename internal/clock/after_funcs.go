package clock

import "sync"

// AfterFuncs is what a context made by hand needs for an AfterFunc method:
// package context looks for that method to hook the contexts derived from
// it in, and context.AfterFunc to register its function, without a
// goroutine watching Done. The zero value is ready to use.
type AfterFuncs struct {
	mu    sync.Mutex
	ended bool
	funcs map[*afterFunc]struct{}
}

type afterFunc struct{ f func() }

// Add is the context's AfterFunc method: f runs when End is called, or at
// once in its own goroutine if End was called already. stop unregisters f
// and reports whether that kept it from running.
func (a *AfterFuncs) Add(f func()) (stop func() bool) {
	w := &afterFunc{f: f}
	a.mu.Lock()
	if a.ended {
		a.mu.Unlock()
		go f()
		return func() bool { return false }
	}
	if a.funcs == nil {
		a.funcs = make(map[*afterFunc]struct{})
	}
	a.funcs[w] = struct{}{}
	a.mu.Unlock()
	return func() bool {
		a.mu.Lock()
		defer a.mu.Unlock()
		_, ok := a.funcs[w]
		delete(a.funcs, w)
		return ok
	}
}

// End runs the registered functions on the calling goroutine, the context
// having ended; later calls do nothing.
func (a *AfterFuncs) End() {
	a.mu.Lock()
	if a.ended {
		a.mu.Unlock()
		return
	}
	a.ended = true
	funcs := a.funcs
	a.funcs = nil
	a.mu.Unlock()
	for w := range funcs {
		w.f()
	}
}
