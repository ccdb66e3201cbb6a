package observable

import (
	"context"
	"sync"
	"sync/atomic"
)

// replayOne is ReplayNowOn of a Single: a hot Single that holds the one
// result and hands it to every subscriber, with none of a replay subject's
// machinery (bench/peers rxhystrix-*-observe). Its scope is the context of
// the subscription to s, cancelled when every subscriber has left before
// the result.
func replayOne[T any](ctx context.Context, s Single[T], sch Scheduler) Observable[T] {
	r := &replaySingle[T]{src: s}
	r.init(ctx)
	switch {
	case !r.live():
		var zero T
		r.OnResult(zero, r.Err())
	default:
		subscribeOn(s, sch, &r.scope, r, &r.u) // a First may take it over
	}
	return FromSingle[T](r)
}

// replaySingle is what replayOne returns.
type replaySingle[T any] struct {
	scope               // of the subscription to the source
	done  chan struct{} // closed at the result; made when a Call first waits for it
	src   Single[T]     // the source, whose Discard takes a value nobody waits for

	mu        sync.Mutex
	v         T
	err       error
	pending   int  // subscribers waiting
	has       bool // v and err are the result
	cancelled bool // the last subscriber left before the result
	waiting   []*replayWaiter[T]

	u unstarted[T] // the work a Call may take over
}

// replayWaiter is a subscriber waiting for the result, hooked into its
// subscription's end.
type replayWaiter[T any] struct {
	r    *replaySingle[T]
	to   SingleObserver[T]
	ctx  context.Context
	hook hook
	sc   *scope // ctx, when it is one of this package's: the hook is in it
	stop func() bool
	// watched settles who takes the watch out when the result comes while
	// watch sets it up: watch and unhook each swap it from 0, and the one
	// that comes second, finding the other's mark, does it.
	watched atomic.Int32
}

// The marks of a replayWaiter's watched.
const (
	waiterWatching int32 = 1 + iota // watch has set sc or stop
	waiterTold                      // the result has been told, before that
)

// OnResult is the source's result: every waiting subscriber is told it.
// A value that comes once every subscriber has left is handed to the
// source's Discard, if it is a [Discarder], and the subscribers that come
// later get context.Canceled, as ReplayNow says: the source was
// cancelled, and answered as the cancellation reached it.
func (r *replaySingle[T]) OnResult(v T, err error) {
	r.mu.Lock()
	if r.has {
		r.mu.Unlock()
		return
	}
	var late T
	dropped := r.cancelled && err == nil
	if dropped {
		late, v, err = v, late, context.Canceled
	}
	r.v, r.err, r.has = v, err, true
	if r.done != nil {
		close(r.done)
	}
	waiting := r.waiting
	r.waiting = nil
	r.mu.Unlock()
	for _, w := range waiting {
		w.unhook()
		w.to.OnResult(v, err)
	}
	r.endAs(scopeDone)
	if dropped {
		discardFrom(r.src, late)
	}
}

func (r *replaySingle[T]) Async() bool { return true }

// Call waits for the result, or for ctx to end; a caller who leaves first
// counts as a subscriber that left. A Call whose ctx cannot end runs the
// work of SubscribeOn(NewGoroutine) of a synchronous Single itself, if its
// goroutine has not started it, as [Future.Get] does.
func (r *replaySingle[T]) Call(ctx context.Context) (T, error) {
	r.mu.Lock()
	if r.has {
		r.mu.Unlock()
		return r.v, r.err
	}
	r.pending++
	r.mu.Unlock()
	// Counted first: a subscriber that leaves while this Call runs the
	// work must not find it the last one waiting.
	if cannotEnd(ctx) && r.u.takeOver() {
		// The result is in: OnResult, under r.mu, has had it on this
		// goroutine, or had it already.
		return r.v, r.err
	}
	r.u.expedite()
	select {
	case <-r.doneChan():
		return r.v, r.err
	case <-ctx.Done():
		r.left()
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.has {
			return r.v, r.err
		}
		var zero T
		return zero, ctx.Err()
	}
}

// doneChan returns the channel closed at the result, made on first use:
// a First that takes the work over, as the first of an Observe's usually
// does, has the result when it would wait (bench/peers
// rxhystrix-semaphore-observe).
func (r *replaySingle[T]) doneChan() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.has:
		return closedChan
	case r.done == nil:
		r.done = make(chan struct{})
	}
	return r.done
}

// SubscribeSingle hands the result to to once it is there, or ctx's error
// if ctx ends first.
func (r *replaySingle[T]) SubscribeSingle(ctx context.Context, to SingleObserver[T]) {
	r.mu.Lock()
	if r.has {
		r.mu.Unlock()
		to.OnResult(r.v, r.err)
		return
	}
	r.pending++
	w := &replayWaiter[T]{r: r, to: to, ctx: ctx}
	r.waiting = append(r.waiting, w)
	r.mu.Unlock()
	w.watch()
}

// watch arranges for the end of the waiter's context to make it leave: on
// the goroutine that ends it, for a context of this package. The result
// may be told to the waiter meanwhile, on another goroutine: then watch
// takes its watch out again, since unhook, which ran first, could not.
func (w *replayWaiter[T]) watch() {
	if ctx, ok := scopeOf(w.ctx); ok {
		w.hook.target = w
		if !ctx.addHook(&w.hook) {
			w.leave()
			return
		}
		w.sc = ctx
	} else if w.ctx.Done() != nil {
		w.stop = context.AfterFunc(w.ctx, w.leave)
	}
	if !w.watched.CompareAndSwap(0, waiterWatching) {
		w.unwatch()
	}
}

func (w *replayWaiter[T]) scopeEnded(error) { w.leave() }

// unhook stops watching the waiter's context, once the result has been
// told to it, or leaves that to a watch still setting it up.
func (w *replayWaiter[T]) unhook() {
	if w.watched.CompareAndSwap(0, waiterTold) {
		return
	}
	w.unwatch()
}

// unwatch undoes what watch set up.
func (w *replayWaiter[T]) unwatch() {
	if w.sc != nil {
		w.sc.removeHook(&w.hook)
	} else if w.stop != nil {
		w.stop()
	}
}

// leave is the waiter's context ending before the result: unless the
// result is being told to it, it is told ctx's error and stops waiting.
func (w *replayWaiter[T]) leave() {
	r := w.r
	r.mu.Lock()
	i := -1
	for j, x := range r.waiting {
		if x == w {
			i = j
			break
		}
	}
	if i < 0 {
		r.mu.Unlock()
		return // told the result already, or being told it
	}
	r.waiting = append(r.waiting[:i], r.waiting[i+1:]...)
	r.mu.Unlock()
	r.left()
	var zero T
	w.to.OnResult(zero, w.ctx.Err())
}

// left is a subscriber leaving before the result: the last one to leave
// cancels the subscription to the source, which then delivers its
// cancellation as the result that later subscribers get.
func (r *replaySingle[T]) left() {
	r.mu.Lock()
	r.pending--
	cancel := r.pending == 0 && !r.has && !r.cancelled
	if cancel {
		r.cancelled = true
	}
	r.mu.Unlock()
	if cancel {
		r.cancel(context.Canceled)
		r.u.expedite() // work not started yet begins, and finds its context ended
	}
}
