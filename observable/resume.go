package observable

import "context"

// OnErrorResumeNext returns an Observable that mirrors o until o fails,
// then calls f with the error and continues with the Observable f
// returns (a fallback). Values o emitted before failing have already been
// passed on. o's context ends with o's stream. The fallback is
// subscribed on the goroutine that delivered the error; its own error, if
// any, is the result's error.
//
// It panics if f is nil.
func (o Observable[T]) OnErrorResumeNext(f func(error) Observable[T]) Observable[T] {
	if f == nil {
		panic("observable: OnErrorResumeNext with nil f")
	}
	return Observable[T]{src: sourceFunc[T](func(s *scope, down Observer[T]) {
		r := &resumeObserver[T]{s: s, f: f, down: down}
		// o runs in a scope of its own below s, which o's end ends:
		// before the fallback runs in s, so that what o holds open
		// until its context ends is let go of then.
		r.up.init(s)
		o.run(&r.up, r)
	})}
}

type resumeObserver[T any] struct {
	up   scope
	s    *scope
	f    func(error) Observable[T]
	down Observer[T]
}

func (r *resumeObserver[T]) OnNext(v T) { r.down.OnNext(v) }

func (r *resumeObserver[T]) OnCompleted() {
	r.up.cancel(context.Canceled)
	r.down.OnCompleted()
}

func (r *resumeObserver[T]) OnError(err error) {
	r.up.cancel(context.Canceled)
	r.f(err).run(r.s, r.down)
}
