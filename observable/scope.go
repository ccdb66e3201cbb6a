package observable

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// The states of a scope.
const (
	scopeLive   int32 = iota // delivering
	scopeEnding              // one goroutine won the right to end it
	scopeEnded               // ended; err is set and readable
)

// scope is the cancellation scope of one subscription. It is a
// context.Context that is done when the subscription ends: on a terminal
// event, on Unsubscribe, or when the parent context is done. It implements
// the AfterFunc method that package context looks for, so contexts derived
// from it (context.WithTimeout in a command, say) hook into it without a
// watcher goroutine. What only watchers need (a lock, the done channel,
// callbacks) is allocated when somebody first watches: a synchronous
// subscription that nobody watches costs one small allocation and two
// atomic operations.
type scope struct {
	parent context.Context
	state  atomic.Int32
	err    error // written while ending, read once ended
	watch  atomic.Pointer[scopeWatch]
}

// scopeWatch holds what the watchers of a scope need.
type scopeWatch struct {
	mu         sync.Mutex
	done       chan struct{}
	callbacks  []*scopeCallback
	stopParent func() bool
}

type scopeCallback struct{ f func() }

// closedChan is the done channel of every scope that ended before its Done
// was asked for.
var closedChan = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

func (s *scope) init(parent context.Context) {
	if parent == nil {
		parent = context.Background()
	}
	s.parent = parent
	if parent.Done() == nil {
		return
	}
	if err := parent.Err(); err != nil {
		s.cancel(err)
		return
	}
	w := s.watcher()
	w.mu.Lock()
	w.stopParent = context.AfterFunc(parent, s.cancelFromParent)
	w.mu.Unlock()
}

// watcher returns the scope's watch, making it on first use.
func (s *scope) watcher() *scopeWatch {
	if w := s.watch.Load(); w != nil {
		return w
	}
	s.watch.CompareAndSwap(nil, new(scopeWatch))
	return s.watch.Load()
}

func (s *scope) cancelFromParent() { s.cancel(s.parent.Err()) }

// begin claims the right to end the scope; only one caller gets it.
func (s *scope) begin() bool { return s.state.CompareAndSwap(scopeLive, scopeEnding) }

// live reports whether the scope has not begun to end.
func (s *scope) live() bool { return s.state.Load() == scopeLive }

// cancel ends the scope with err; later calls do nothing.
func (s *scope) cancel(err error) {
	if s.begin() {
		s.finish(err)
	}
}

// finish ends a scope whose begin succeeded.
func (s *scope) finish(err error) {
	s.err = err
	s.state.Store(scopeEnded)
	w := s.watch.Load()
	if w == nil {
		return
	}
	w.mu.Lock()
	if w.done != nil {
		close(w.done)
	} else {
		w.done = closedChan
	}
	callbacks, stop := w.callbacks, w.stopParent
	w.callbacks, w.stopParent = nil, nil
	w.mu.Unlock()
	if stop != nil {
		stop()
	}
	for _, c := range callbacks {
		c.f()
	}
}

// Deadline returns the parent's deadline.
func (s *scope) Deadline() (time.Time, bool) { return s.parent.Deadline() }

// Value returns the parent's value for key.
func (s *scope) Value(key any) any { return s.parent.Value(key) }

// Done returns a channel closed when the scope has ended.
func (s *scope) Done() <-chan struct{} {
	w := s.watcher()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done == nil {
		if s.state.Load() == scopeEnded {
			w.done = closedChan
		} else {
			w.done = make(chan struct{})
		}
	}
	return w.done
}

// Err returns nil until the scope has ended, then the reason it ended.
func (s *scope) Err() error {
	if s.state.Load() != scopeEnded {
		return nil
	}
	return s.err
}

// AfterFunc arranges for f to run when the scope ends. It is the hook
// package context uses to propagate cancellation to derived contexts.
func (s *scope) AfterFunc(f func()) (stop func() bool) {
	c := &scopeCallback{f: f}
	w := s.watcher()
	w.mu.Lock()
	if s.state.Load() == scopeEnded {
		w.mu.Unlock()
		go f()
		return func() bool { return false }
	}
	w.callbacks = append(w.callbacks, c)
	w.mu.Unlock()
	return func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		for i, x := range w.callbacks {
			if x == c {
				w.callbacks = append(w.callbacks[:i], w.callbacks[i+1:]...)
				return true
			}
		}
		return false
	}
}

// newScope returns a live child scope of parent.
func newScope(parent context.Context) *scope {
	s := new(scope)
	s.init(parent)
	return s
}
