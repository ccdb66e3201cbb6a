package observable

import (
	"context"
)

// Future is the pending result of an Observable: its last value, or its
// error. Futures are made by [Observable.ToFuture] and
// [Observable.ToFutureOn]; the zero Future is not usable. Its methods are
// safe for concurrent use.
type Future[T any] struct {
	c   collector[T]
	u   unstarted[T] // the work a Get may take over
	src Single[T]    // the Single whose result it is, if any: its Discard takes a result the Future refused
}

// futureSink is a Future as its Single's observer: a value that comes once
// the Future has ended (cancelled, or its context done) goes to the
// Single's Discard, if it is a [Discarder].
type futureSink[T any] Future[T]

func (s *futureSink[T]) OnResult(v T, err error) {
	f := (*Future[T])(s)
	if !f.c.take(v, err) && err == nil {
		discardFrom(f.src, v)
	}
}

// ToFuture subscribes on a new goroutine and returns at once a Future of
// o's result; it never blocks the caller. It is
// [Observable.ToFutureOn] with [NewGoroutine].
//
// The subscription to a [Joinable] Single is handed over without a go
// statement: a [Future.Get] that could only wait takes it over (and
// starts the work handed over after it meanwhile), one whose context can
// end, [Future.Done] and [Future.Cancel] start it at once, and otherwise
// a goroutine shared by every Future starts it on a goroutine of its own
// within about ten microseconds, or about a millisecond while all other
// work handed over is being taken over.
func (o Observable[T]) ToFuture(ctx context.Context) *Future[T] {
	return o.ToFutureOn(ctx, NewGoroutine)
}

// ToFutureOn subscribes on sch and returns a Future of o's result: the
// last value o emits, ErrEmpty if it completes without one, or its error.
// The subscription ends when o terminates, when ctx is done (the Future's
// error is then ctx's error) or on [Future.Cancel]. If sch refuses the
// task, the Future fails with sch's error. With [Immediate], ToFutureOn
// returns only once a synchronous o has finished; with [NewGoroutine], a
// Joinable Single is handed over as [Observable.ToFuture] says.
//
// It panics if sch is nil.
func (o Observable[T]) ToFutureOn(ctx context.Context, sch Scheduler) *Future[T] {
	if sch == nil {
		panic("observable: ToFutureOn with nil sch")
	}
	f := &Future[T]{}
	f.c.init(ctx)
	if !f.c.live() {
		return f
	}
	if s, ok := singleOf(o); ok {
		f.src = s
		subscribeOn(s, sch, &f.c.scope, (*futureSink[T])(f), &f.u)
		return f
	}
	f.c.discard = discarderOf(o)
	f.c.discardHeldOnEnd()
	if err := sch.Schedule(&f.c.scope, f.run(o)); err != nil {
		f.c.OnError(err)
	}
	return f
}

func (f *Future[T]) run(o Observable[T]) func() {
	return func() { o.run(&f.c.scope, &f.c) }
}

// Get waits until the result is ready or ctx is done, whichever comes
// first, and returns the result, or ctx's error. The end of ctx does not
// cancel the work: a later Get can still return the result. A nil ctx
// means context.Background.
//
// A Get whose ctx cannot end (context.Background, say) that finds the work
// of a [Joinable] [Single] not yet started by the goroutine ToFuture
// handed it to runs it itself, with Call (Join for a [Joiner]), and
// returns when it returns: a Cancel meanwhile ends the work's context,
// and the Future fails with context.Canceled.
func (f *Future[T]) Get(ctx context.Context) (T, error) {
	switch {
	case f.c.ended():
		return f.c.result()
	case cannotEnd(ctx):
		if f.u.takeOver() {
			return f.c.result()
		}
		return f.c.wait()
	}
	f.u.expedite()
	select {
	case <-f.c.Done():
		return f.c.result()
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}

// Done returns a channel closed once the result is ready.
func (f *Future[T]) Done() <-chan struct{} {
	f.u.expedite()
	return f.c.Done()
}

// Cancel unsubscribes: the source sees its context done, and unless the
// result was already ready, the Future fails with context.Canceled.
func (f *Future[T]) Cancel() {
	f.c.cancel(context.Canceled)
	f.u.expedite() // work not started yet begins, and finds its context ended
}
