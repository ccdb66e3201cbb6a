package observable

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// The states of a scope. A scope ends in one step, a single
// compare-and-swap from scopeLive to the state that says why, except when
// the ending goroutine has work to do first (deliver a terminal event,
// record an unusual error): it then claims the scope with scopeEnding and
// stores the final state when done.
const (
	scopeLive     int32 = iota
	scopeEnding         // claimed by the goroutine that is ending it
	scopeDone           // ended by its own terminal event: Err is context.Canceled
	scopeCanceled       // ended with context.Canceled
	scopeDeadline       // ended with context.DeadlineExceeded
	scopeFailed         // ended with err
)

// scope is the cancellation scope of one subscription, or of the part of
// one that an operator may cut off (Take, Timeout, Merge...). It is the
// context.Context its source sees, done when the subscription ends: on a
// terminal event, on Unsubscribe, when the operator that owns it cancels
// it, or when its parent ends.
//
// Most scopes are never watched: a synchronous source only asks, between
// values, whether its scope is still live. So a scope whose parent is a
// scope (its up) does not link itself into the parent until somebody
// watches it (asks for Done, hooks a callback, derives a context); until
// then it is live only while its own state and every up scope's are live.
// Once watched, it links into its up scope's hooks, which in turn gets
// watched, so that the end of any scope is pushed down to every watched
// scope below it, with no goroutine. A scope whose parent is another
// cancellable context watches it with context.AfterFunc. The scope also
// implements the AfterFunc method package context looks for, so contexts
// derived from it hook into it without a watcher goroutine.
type scope struct {
	parent  context.Context // never nil; gives Value and Deadline
	up      *scope          // parent, if it is a scope
	state   atomic.Int32
	watched atomic.Bool                // set before anything is hooked into the scope
	w       atomic.Pointer[scopeWatch] // nil until first needed; holds the error of scopeFailed

	// A function to call when the scope ends, besides its hooks, that
	// costs no watch (NotifyEnd): nil, the function's address, or
	// &notified once the function has been called.
	notify atomic.Pointer[func()]
}

// notified is what a scope's notify slot points to once its function has
// been called.
var notified func()

// scopeWatch is what a scope needs once it is watched, allocated then, so
// that the many scopes nobody watches stay small. An operator whose scope
// is always watched (Timeout), or that is the first to watch one
// (Finally), brings one in its own allocation and hands it to the scope.
type scopeWatch struct {
	mu         sync.Mutex
	hooks      hookList       // run when the scope ends
	link       hook           // the scope's entry in its up scope's hooks
	linked     bool           // link is, or is being, added to the up scope's hooks
	done       chan struct{}  // made when first asked for
	waiting    bool           // somebody waits in waitEnd on ended
	ended      sync.WaitGroup // done once the scope has ended, if waiting
	settled    chan struct{}  // closed once the hooks have run; made when first asked for
	running    bool           // the hooks were taken and are running
	stopParent func() bool    // stops the context.AfterFunc watching parent
	deadline   time.Time      // if not zero, the scope's own deadline
	// err is why the scope ended, written before its state becomes
	// scopeFailed: kept here, not in the scope, since nearly every scope
	// ends with context.Canceled, so that a scope is 48 bytes, not 64
	// (bench/peers rxhystrix-semaphore-observe 304 → 288 B/op), and a
	// hedge's first attempt's 64, not 80 (rxhystrix-semaphore-hedge).
	err error
}

// An ender is told that a scope it hooked into has ended.
type ender interface{ scopeEnded(err error) }

// hook is an entry in a scope's intrusive list of things to tell when it
// ends. It is embedded in whatever needs telling, so hooking allocates
// nothing.
type hook struct {
	prev, next *hook
	linked     bool
	target     ender
}

// hookList is a doubly linked list of hooks, in the order they were added.
type hookList struct{ head, tail *hook }

func (l *hookList) push(h *hook) {
	h.prev, h.next, h.linked = l.tail, nil, true
	if l.tail != nil {
		l.tail.next = h
	} else {
		l.head = h
	}
	l.tail = h
}

func (l *hookList) remove(h *hook) {
	if h.prev != nil {
		h.prev.next = h.next
	} else {
		l.head = h.next
	}
	if h.next != nil {
		h.next.prev = h.prev
	} else {
		l.tail = h.prev
	}
	h.prev, h.next, h.linked = nil, nil, false
}

// funcEnder adapts a function to ender (for the context package's
// AfterFunc).
type funcEnder func()

func (f funcEnder) scopeEnded(error) { f() }

// closedChan is the done channel of every scope that ended before its Done
// was asked for.
var closedChan = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

// newScope returns a live scope whose parent is parent.
func newScope(parent context.Context) *scope {
	s := new(scope)
	s.init(parent)
	return s
}

// init makes s a scope of parent; a nil parent means context.Background.
func (s *scope) init(parent context.Context) {
	if parent == nil {
		parent = context.Background()
	}
	s.parent = parent
	if p, ok := scopeOf(parent); ok {
		s.up = p
		return
	}
	if parent.Done() == nil {
		return
	}
	if err := parent.Err(); err != nil {
		s.cancel(err)
		return
	}
	stop := context.AfterFunc(parent, s.cancelFromParent)
	w := s.watchState()
	s.watched.Store(true)
	w.mu.Lock()
	if s.ended() {
		w.mu.Unlock()
		stop()
		return
	}
	w.stopParent = stop
	w.mu.Unlock()
}

// scopeOf returns ctx as a scope of this package, if it is one: a scope,
// or the scope of a hedge's first attempt.
func scopeOf(ctx context.Context) (*scope, bool) {
	switch s := ctx.(type) {
	case *scope:
		return s, true
	case *attemptScope:
		return &s.scope, true
	}
	return nil, false
}

// watchState returns the scope's watch state, making it on first use.
func (s *scope) watchState() *scopeWatch {
	if w := s.w.Load(); w != nil {
		return w
	}
	s.w.CompareAndSwap(nil, new(scopeWatch))
	return s.w.Load()
}

func (s *scope) cancelFromParent() { s.cancel(s.parent.Err()) }

// scopeEnded ends s when its up scope ends.
func (s *scope) scopeEnded(err error) { s.cancel(err) }

// ended reports whether the scope itself has ended.
func (s *scope) ended() bool { return s.state.Load() >= scopeDone }

// leftErr returns the error of a scope whose subscriber has left, or
// nil: the error of the scope or an up scope, or else that of the
// context the outermost scope was made under, whose end reaches the
// scopes only through the goroutine of context.AfterFunc, later.
func (s *scope) leftErr() error {
	if err := s.Err(); err != nil {
		return err
	}
	x := s
	for x.up != nil {
		x = x.up
	}
	return x.parent.Err()
}

// live reports whether neither the scope nor any up scope has begun to
// end.
func (s *scope) live() bool {
	for x := s; x != nil; x = x.up {
		if x.state.Load() != scopeLive {
			return false
		}
	}
	return true
}

// cancel ends the scope with err; later calls do nothing.
func (s *scope) cancel(err error) {
	if s.state.Load() != scopeLive {
		return
	}
	switch err {
	case context.Canceled:
		s.endAs(scopeCanceled)
	case context.DeadlineExceeded:
		s.endAs(scopeDeadline)
	default:
		if s.begin() {
			s.finish(err)
		}
	}
}

// release ends s, if anybody watches it, once the work it covers is over
// (its sources completed): so it leaves its up scope's hooks. A scope
// nobody watches needs nothing: it is not live once its up scope has
// ended.
func (s *scope) release() {
	if s.watched.Load() {
		s.cancel(context.Canceled)
	}
}

// endAs ends a live scope in one step with the final state st (one that
// needs no err); it reports whether it did.
func (s *scope) endAs(st int32) bool {
	if s.state.Load() != scopeLive || !s.state.CompareAndSwap(scopeLive, st) {
		return false
	}
	s.afterEnd()
	return true
}

// begin claims the right to end the scope; only one caller gets it, and
// must call finish. The load first spares a locked instruction when the
// scope has ended.
func (s *scope) begin() bool {
	return s.state.Load() == scopeLive && s.state.CompareAndSwap(scopeLive, scopeEnding)
}

// finish ends a scope whose begin succeeded, with err.
func (s *scope) finish(err error) {
	switch err {
	case nil:
		s.state.Store(scopeDone)
	case context.Canceled:
		s.state.Store(scopeCanceled)
	case context.DeadlineExceeded:
		s.state.Store(scopeDeadline)
	default:
		s.watchState().err = err
		s.state.Store(scopeFailed)
	}
	s.afterEnd()
}

// afterEnd does what follows the end of a scope, on the goroutine that
// ended it: it closes the done channel, unlinks from its up scope and tells
// its hooks, in the order they were added.
//
// A scope nobody watches needs none of that and takes no lock: a watcher
// sets watched before it looks at the state (under the lock), and the
// state is set before afterEnd looks at watched, so at least one of them
// sees the other.
func (s *scope) afterEnd() {
	if f := s.notify.Load(); f != nil && f != &notified && s.notify.CompareAndSwap(f, &notified) {
		(*f)()
	}
	if !s.watched.Load() {
		return
	}
	err := s.Err()
	w := s.w.Load()
	w.mu.Lock()
	hooks := w.hooks
	for h := hooks.head; h != nil; h = h.next {
		h.linked = false
	}
	w.hooks = hookList{}
	w.running = true
	if w.done != nil {
		close(w.done)
	}
	waiting := w.waiting
	stop, linked := w.stopParent, w.linked
	w.stopParent = nil
	w.mu.Unlock()
	defer w.settle()

	if waiting {
		w.ended.Done()
	}
	if stop != nil {
		stop()
	}
	if linked {
		s.up.removeHook(&w.link)
	}
	// The detached list is ours: nobody links or unlinks a hook whose
	// linked flag is false.
	for h := hooks.head; h != nil; {
		next := h.next
		h.prev, h.next = nil, nil
		h.target.scopeEnded(err)
		h = next
	}
}

// settle marks the hooks of an ended scope as run.
func (w *scopeWatch) settle() {
	w.mu.Lock()
	w.running = false
	if w.settled != nil {
		close(w.settled)
	}
	w.mu.Unlock()
}

// settledDone returns a channel closed once the scope has ended and what
// its end tells (the scopes below it, DoOnUnsubscribe and Finally
// functions, AfterFunc registrations) has been told, on whichever
// goroutine ended it. Once the scope has ended, nothing can be hooked in,
// so what is left is what the ending goroutine has not told yet.
func (s *scope) settledDone() <-chan struct{} {
	w := s.watch()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.settled == nil {
		if s.ended() && !w.running && w.hooks.head == nil {
			return closedChan
		}
		w.settled = make(chan struct{})
	}
	return w.settled
}

// watch makes sure the end of any up scope reaches s, and returns s's
// watch state: the first call links s into its up scope's hooks (watching
// that one in turn), or ends s at once if the up scope has already ended.
func (s *scope) watch() *scopeWatch {
	w := s.watchState()
	if s.watched.Load() || !s.watched.CompareAndSwap(false, true) || s.up == nil {
		return w
	}
	w.link.target = s
	w.mu.Lock()
	w.linked = true
	w.mu.Unlock()
	if !s.up.addHook(&w.link) {
		s.cancel(s.up.Err())
		return w
	}
	if s.ended() {
		// s ended while linking, perhaps before afterEnd could see the
		// link: take it out again.
		s.up.removeHook(&w.link)
	}
	return w
}

// addHook arranges for h.target to be told when s ends. It reports false,
// and does nothing, if s has already ended.
func (s *scope) addHook(h *hook) bool {
	w := s.watch()
	w.mu.Lock()
	defer w.mu.Unlock()
	if s.ended() {
		return false
	}
	w.hooks.push(h)
	return true
}

// removeHook undoes addHook. It reports whether h was still waiting.
func (s *scope) removeHook(h *hook) bool {
	w := s.w.Load()
	if w == nil { // nothing was ever hooked in
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if !h.linked {
		return false
	}
	w.hooks.remove(h)
	return true
}

// Deadline returns the earlier of the scope's own deadline (set by
// Timeout) and its parent's.
func (s *scope) Deadline() (time.Time, bool) {
	d, ok := s.parent.Deadline()
	var own time.Time
	if w := s.w.Load(); w != nil {
		w.mu.Lock()
		own = w.deadline
		w.mu.Unlock()
	}
	if own.IsZero() || (ok && d.Before(own)) {
		return d, ok
	}
	return own, true
}

// Value returns the parent's value for key.
func (s *scope) Value(key any) any { return s.parent.Value(key) }

// Done returns a channel closed when the scope has ended.
func (s *scope) Done() <-chan struct{} {
	w := s.watch()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done == nil {
		if s.ended() {
			return closedChan
		}
		w.done = make(chan struct{})
	}
	return w.done
}

// waitEnd blocks until the scope has ended, as a receive from its Done
// channel would, without making the channel: a Get or First that only
// waits needs none (bench/peers rxhystrix-pool-queue).
func (s *scope) waitEnd() {
	w := s.watch()
	w.mu.Lock()
	if s.ended() {
		w.mu.Unlock()
		return
	}
	if !w.waiting {
		w.waiting = true
		w.ended.Add(1)
	}
	w.mu.Unlock()
	w.ended.Wait()
}

// Err returns nil until the scope or an up scope has ended, then the
// reason it ended: context.Canceled when the subscription ended normally
// or was unsubscribed, context.DeadlineExceeded when a Timeout cut it off,
// or the parent context's error.
func (s *scope) Err() error {
	for x := s; x != nil; x = x.up {
		switch x.state.Load() {
		case scopeDone, scopeCanceled:
			return context.Canceled
		case scopeDeadline:
			return context.DeadlineExceeded
		case scopeFailed:
			return x.w.Load().err
		}
	}
	return nil
}

// NotifyEnd arranges for *f to be called, on the goroutine that ends the
// scope, once it has ended, without watching the scope (the slot it uses
// is one word of the scope's): it implements ctxend.Notifier for
// rxhystrix's packages, whose pool callers wait on a channel of their own
// (bench/peers rxhystrix-pool-queue). It reports false, doing nothing,
// for a scope below another (whose end reaches it only once watched),
// one that holds a function already, or one that has ended.
func (s *scope) NotifyEnd(f *func()) bool {
	if s.up != nil || !s.notify.CompareAndSwap(nil, f) {
		return false
	}
	// The slot is filled before afterEnd reads it: either afterEnd sees
	// the function, or this sees the end, and takes the function back
	// unless afterEnd took it.
	if s.ended() && s.notify.CompareAndSwap(f, nil) {
		return false
	}
	return true
}

// StopNotify undoes a NotifyEnd(f) that reported true, and reports whether
// *f will not be called; false means it has been, or is being, called.
func (s *scope) StopNotify(f *func()) bool { return s.notify.CompareAndSwap(f, nil) }

// AfterFunc arranges for f to run when the scope ends. It is the hook
// package context uses to propagate cancellation to derived contexts
// without a goroutine.
func (s *scope) AfterFunc(f func()) (stop func() bool) {
	h := &hook{target: funcEnder(f)}
	if !s.addHook(h) {
		go f()
		return func() bool { return false }
	}
	return func() bool { return s.removeHook(h) }
}
