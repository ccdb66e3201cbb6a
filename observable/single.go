package observable

import (
	"context"
	"sync"
	"sync/atomic"
)

// Single is the source of an Observable of exactly one result: one value
// then completion, or an error. An Observable made by [FromSingle] is an
// Observable like any other, and the operators that wait for one result
// recognise it and take the result straight from the Single, with none of
// a subscription's machinery (RxJava's and Reactor's scalar fusion):
//
//   - [Observable.First], [Observable.Last] and [Observable.ToSlice] call
//     Call on the calling goroutine;
//   - [Observable.ToFuture], [Observable.ToFutureOn] and
//     [Observable.ReplayNow] hand their Future or their subject to
//     SubscribeSingle, on the caller's goroutine when the Single is
//     asynchronous and ToFuture would otherwise start one;
//   - [Zip2] of two Singles is a Single, and [Observable.SubscribeOn] of a
//     Single is an asynchronous Single.
//
// Every other operator subscribes as it would to any source: the Single's
// SubscribeSingle delivers to the subscriber's observer. A Single whose
// values must be released when nobody receives them is a [Discarder].
type Single[T any] interface {
	// Call computes the result on the calling goroutine and returns it.
	// ctx is done once the caller no longer wants the result; Call then
	// returns ctx's error, at the latest when the work it does on the
	// calling goroutine returns.
	Call(ctx context.Context) (T, error)
	// SubscribeSingle computes the result for one subscription, whose
	// context is ctx, and hands it to r exactly once, from any goroutine:
	// the result, or ctx's error if ctx ended before it. It may return
	// before r is told (see Async) or after.
	SubscribeSingle(ctx context.Context, r SingleObserver[T])
	// Async reports whether SubscribeSingle returns without waiting for
	// the result, which other goroutines compute, so that a caller who
	// must not block need not start a goroutine of its own for it.
	Async() bool
}

// Joinable is implemented by a [Single] whose Call (its Join, if it is a
// [Joiner]), made by a goroutine that would otherwise only wait for the
// result, gives the result as soon as SubscribeSingle would give it on
// another goroutine. A waiter with nothing else to do may then run the
// work of such a Single itself, rather than wait for a goroutine started
// for it ([Future.Get]). The Singles of [FromFunc], [Just] and [Error],
// and [Zip2] of joinable Singles, are joinable.
type Joinable interface {
	// Joinable reports whether Call, or Join, may stand in for
	// SubscribeSingle now.
	Joinable() bool
}

// joinable reports whether s is a Joinable that says so.
func joinable[T any](s Single[T]) bool {
	j, ok := s.(Joinable)
	return ok && j.Joinable()
}

// Joiner is implemented by a [Joinable] Single that a waiter must call
// through Join to have the result when a subscriber would: one whose Call
// answers when the work on the calling goroutine returns, where a
// subscriber is answered earlier, by a timer say, while the work goes on.
// Join may hand part of the work to another goroutine to answer in time.
// A waiter that takes a Single over ([Future.Get], First of
// [Observable.ReplayNowOn]) calls Join; First and Last call Call. A
// command under semaphore isolation with a timeout is one: its Call runs
// the user's code on the caller's goroutine, which it holds until that
// returns, as Hystrix's execute does, and its Join answers at the
// timeout, as a subscription does.
type Joiner[T any] interface {
	// Join is Call for a goroutine that only waits for the result.
	Join(ctx context.Context) (T, error)
}

// joinCall calls s for a goroutine that only waits for its result: Join
// if s is a Joiner, Call if not.
func joinCall[T any](s Single[T], ctx context.Context) (T, error) {
	if j, ok := s.(Joiner[T]); ok {
		return j.Join(ctx)
	}
	return s.Call(ctx)
}

// SingleObserver receives the result of a [Single]: a value with a nil
// error, or an error.
type SingleObserver[T any] interface {
	OnResult(v T, err error)
}

// FromSingle returns the cold Observable of s: each subscription asks s
// for a result, and emits its value and completes, or fails with its
// error.
//
// It panics if s is nil.
func FromSingle[T any](s Single[T]) Observable[T] {
	if s == nil {
		panic("observable: FromSingle with nil s")
	}
	return Observable[T]{one: s}
}

// FromFunc returns the cold Observable that calls f at each subscription,
// on the subscribing goroutine, with the subscription's context, and emits
// its value and completes, or fails with its error. It is a [Single]: First
// of it is a call of f.
//
// It panics if f is nil.
func FromFunc[T any](f func(ctx context.Context) (T, error)) Observable[T] {
	if f == nil {
		panic("observable: FromFunc with nil f")
	}
	return FromSingle[T](funcSingle[T](f))
}

// AsSingle returns the Single o was made from ([FromSingle], [FromFunc],
// [Just] of one value, [Error], [Zip2] of Singles...), so that a consumer of its
// own can take the result as First does.
func (o Observable[T]) AsSingle() (Single[T], bool) { return o.one, o.one != nil }

// singleOf is AsSingle.
func singleOf[T any](o Observable[T]) (Single[T], bool) { return o.AsSingle() }

// singleToObserver delivers a Single's result to an Observer. A Single
// may answer once the subscription's scope s has ended (with ctx's
// error, as its contract says): then no terminal event goes down, as none
// goes down from a Create source after its end, for nothing failed or
// completed that anybody waits for (DoOnTerminate, DoOnError and
// OnErrorResumeNext would take it for the source's); a late value still
// goes down alone, for the subscriber to hand to a Discarder.
type singleToObserver[T any] struct {
	s *scope
	o Observer[T]
}

func (d singleToObserver[T]) OnResult(v T, err error) {
	if err != nil {
		if d.s.live() {
			d.o.OnError(err)
		}
		return
	}
	live := d.s.live()
	d.o.OnNext(v)
	if live {
		d.o.OnCompleted()
	}
}

// funcSingle is the Single of FromFunc.
type funcSingle[T any] func(ctx context.Context) (T, error)

func (f funcSingle[T]) Call(ctx context.Context) (T, error) {
	if err := ctx.Err(); err != nil {
		var zero T
		return zero, err
	}
	return f(ctx)
}

func (f funcSingle[T]) SubscribeSingle(ctx context.Context, r SingleObserver[T]) {
	r.OnResult(f.Call(ctx))
}

func (funcSingle[T]) Async() bool { return false }

func (funcSingle[T]) Joinable() bool { return true }

func (f funcSingle[T]) subscribe(s *scope, o Observer[T]) {
	v, err := f(s)
	if err != nil {
		o.OnError(err)
		return
	}
	o.OnNext(v)
	o.OnCompleted()
}

// scheduledSingle is SubscribeOn of a Single: its SubscribeSingle runs
// s's on sch.
type scheduledSingle[T any] struct {
	s   Single[T]
	sch Scheduler
}

// Call waits for the result computed on sch: the Single's work runs where
// SubscribeOn says, whoever asks.
func (q scheduledSingle[T]) Call(ctx context.Context) (T, error) { return callBySubscribing[T](ctx, q) }

func (q scheduledSingle[T]) SubscribeSingle(ctx context.Context, r SingleObserver[T]) {
	if q.sch == Immediate || q.sch == NewGoroutine || ctx.Done() == nil {
		// Schedulers that run every task they take.
		if err := q.sch.Schedule(ctx, func() { q.s.SubscribeSingle(ctx, r) }); err != nil {
			var zero T
			r.OnResult(zero, err)
		}
		return
	}
	// Any other may drop a task whose ctx is done before it starts (see
	// Scheduler): the end of ctx then tells r, as SubscribeSingle must,
	// unless the task has started.
	t := &scheduledTask[T]{s: q.s, ctx: ctx, r: r}
	if err := q.sch.Schedule(ctx, t.run); err != nil {
		if t.claimed.CompareAndSwap(false, true) {
			var zero T
			r.OnResult(zero, err)
		}
		return
	}
	if t.claimed.Load() {
		return
	}
	stop := context.AfterFunc(ctx, t.left)
	t.mu.Lock()
	t.stop = stop
	t.mu.Unlock()
	if t.claimed.Load() {
		stop()
	}
}

// scheduledTask is a subscription to a Single handed to a Scheduler that
// may drop it: whichever comes first, the task or the end of ctx, tells
// r.
type scheduledTask[T any] struct {
	s       Single[T]
	ctx     context.Context
	r       SingleObserver[T]
	claimed atomic.Bool
	mu      sync.Mutex
	stop    func() bool // the watch of ctx, once armed
}

func (t *scheduledTask[T]) run() {
	if !t.claimed.CompareAndSwap(false, true) {
		return
	}
	t.mu.Lock()
	stop := t.stop
	t.mu.Unlock()
	if stop != nil {
		stop()
	}
	t.s.SubscribeSingle(t.ctx, t.r)
}

func (t *scheduledTask[T]) left() {
	if t.claimed.CompareAndSwap(false, true) {
		var zero T
		t.r.OnResult(zero, t.ctx.Err())
	}
}

func (q scheduledSingle[T]) Async() bool { return q.sch != Immediate }

// discardingScheduledSingle is a scheduledSingle of a Single that is a
// Discarder: it is one too, so that the value that nobody receives goes
// back to the Single, as it would without SubscribeOn.
type discardingScheduledSingle[T any] struct {
	scheduledSingle[T]
	d Discarder[T]
}

func (q discardingScheduledSingle[T]) Call(ctx context.Context) (T, error) {
	return callBySubscribing[T](ctx, q)
}

func (q discardingScheduledSingle[T]) Discard(v T) { q.d.Discard(v) }

// callBySubscribing is Call for a Single that computes on other
// goroutines: it subscribes and waits.
func callBySubscribing[T any](ctx context.Context, s Single[T]) (T, error) {
	c := &collector[T]{first: true}
	c.discard, _ = s.(Discarder[T])
	c.init(ctx)
	if !c.live() {
		return c.result()
	}
	s.SubscribeSingle(&c.scope, c)
	return c.wait()
}
