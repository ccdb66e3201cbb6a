package observable

import "sync/atomic"

// DoOnNext returns an Observable that calls f with each value of o before
// passing it on.
//
// It panics if f is nil.
func (o Observable[T]) DoOnNext(f func(T)) Observable[T] {
	if f == nil {
		panic("observable: DoOnNext with nil f")
	}
	return o.tap(tapFuncs[T]{next: f})
}

// DoOnError returns an Observable that calls f with o's error before
// passing it on.
//
// It panics if f is nil.
func (o Observable[T]) DoOnError(f func(error)) Observable[T] {
	if f == nil {
		panic("observable: DoOnError with nil f")
	}
	return o.tap(tapFuncs[T]{err: f})
}

// DoOnCompleted returns an Observable that calls f when o completes,
// before passing the completion on.
//
// It panics if f is nil.
func (o Observable[T]) DoOnCompleted(f func()) Observable[T] {
	if f == nil {
		panic("observable: DoOnCompleted with nil f")
	}
	return o.tap(tapFuncs[T]{done: f})
}

// DoOnTerminate returns an Observable that calls f when o completes or
// fails, before passing the terminal event on. It is not called when the
// subscription is cancelled first; see [Observable.DoOnUnsubscribe] and
// [Observable.Finally].
//
// It panics if f is nil.
func (o Observable[T]) DoOnTerminate(f func()) Observable[T] {
	if f == nil {
		panic("observable: DoOnTerminate with nil f")
	}
	return o.tap(tapFuncs[T]{err: func(error) { f() }, done: f})
}

// tapFuncs are the optional functions of a pass-through tap.
type tapFuncs[T any] struct {
	next func(T)
	err  func(error)
	done func()
}

func (o Observable[T]) tap(fs tapFuncs[T]) Observable[T] {
	return Observable[T]{src: sourceFunc[T](func(s *scope, down Observer[T]) {
		o.run(s, &tapObserver[T]{fs: fs, down: down})
	})}
}

type tapObserver[T any] struct {
	fs   tapFuncs[T]
	down Observer[T]
}

func (t *tapObserver[T]) OnNext(v T) {
	if t.fs.next != nil {
		t.fs.next(v)
	}
	t.down.OnNext(v)
}

func (t *tapObserver[T]) OnError(err error) {
	if t.fs.err != nil {
		t.fs.err(err)
	}
	t.down.OnError(err)
}

func (t *tapObserver[T]) OnCompleted() {
	if t.fs.done != nil {
		t.fs.done()
	}
	t.down.OnCompleted()
}

// DoOnSubscribe returns an Observable that calls f at each subscription,
// before subscribing to o.
//
// It panics if f is nil.
func (o Observable[T]) DoOnSubscribe(f func()) Observable[T] {
	if f == nil {
		panic("observable: DoOnSubscribe with nil f")
	}
	return Observable[T]{src: sourceFunc[T](func(s *scope, down Observer[T]) {
		f()
		o.run(s, down)
	})}
}

// DoOnUnsubscribe returns an Observable that calls f when a subscription
// is cancelled before o's terminal event has passed this point: by
// Unsubscribe, by the end of the subscriber's context, or by an operator
// downstream that needs nothing more (Take, First, Timeout, the failure
// of a sibling in Merge or Zip2). f runs once, on the goroutine that
// cancelled.
//
// Unlike RxJava 1, where an unsubscription follows every terminal event
// (so Hystrix checks "has the command terminated?" in its unsubscribe
// handler), f does not run after a terminal event; use
// [Observable.Finally] for cleanup that must run in every case.
//
// It panics if f is nil.
func (o Observable[T]) DoOnUnsubscribe(f func()) Observable[T] {
	if f == nil {
		panic("observable: DoOnUnsubscribe with nil f")
	}
	return Observable[T]{src: sourceFunc[T](func(s *scope, down Observer[T]) {
		u := &endObserver[T]{s: s, onCancel: f, down: down}
		u.watch()
		o.run(s, u)
	})}
}

// Finally returns an Observable that calls f exactly once per
// subscription, after o's terminal event has been passed on or when the
// subscription is cancelled before that, whichever comes first. It is
// the place for cleanup that must happen however a subscription ends
// (releasing a permit, say).
//
// It panics if f is nil.
func (o Observable[T]) Finally(f func()) Observable[T] {
	if f == nil {
		panic("observable: Finally with nil f")
	}
	return Observable[T]{src: sourceFunc[T](func(s *scope, down Observer[T]) {
		u := &endObserver[T]{s: s, onCancel: f, onTerminate: f, down: down}
		u.watch()
		o.run(s, u)
	})}
}

// The states of an endObserver.
const (
	endLive       int32 = iota
	endTerminated       // a terminal event passed
	endCancelled        // the scope ended first
)

// endObserver tells a terminal event from a cancellation: onTerminate
// runs after a terminal event has been passed on, onCancel when the scope
// ends before one arrives. It brings the watch state its scope needs, in
// the same allocation, in case the scope has none yet.
type endObserver[T any] struct {
	s           *scope
	h           hook
	spare       scopeWatch
	state       atomic.Int32
	onCancel    func()
	onTerminate func()
	down        Observer[T]
}

// watch hooks the observer into its scope; if the scope has already
// ended, the subscription counts as cancelled at once.
func (u *endObserver[T]) watch() {
	u.h.target = u
	u.s.w.CompareAndSwap(nil, &u.spare)
	if !u.s.addHook(&u.h) {
		u.scopeEnded(u.s.Err())
	}
}

func (u *endObserver[T]) scopeEnded(error) {
	if u.state.Load() == endLive && u.state.CompareAndSwap(endLive, endCancelled) {
		u.onCancel()
	}
}

func (u *endObserver[T]) OnNext(v T) { u.down.OnNext(v) }

func (u *endObserver[T]) OnError(err error) {
	if u.terminate() {
		defer u.after()
		u.down.OnError(err)
	}
}

func (u *endObserver[T]) OnCompleted() {
	if u.terminate() {
		defer u.after()
		u.down.OnCompleted()
	}
}

// terminate claims the terminal event; it reports false if the
// subscription was cancelled first.
func (u *endObserver[T]) terminate() bool {
	if u.state.Load() != endLive || !u.state.CompareAndSwap(endLive, endTerminated) {
		return false
	}
	u.s.removeHook(&u.h)
	return true
}

func (u *endObserver[T]) after() {
	if u.onTerminate != nil {
		u.onTerminate()
	}
}
