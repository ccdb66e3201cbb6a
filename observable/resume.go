package observable

// OnErrorResumeNext returns an Observable that mirrors o until o fails,
// then calls f with the error and continues with the Observable f
// returns (a fallback). Values o emitted before failing have already been
// passed on. The fallback is subscribed on the goroutine that delivered
// the error; its own error, if any, is the result's error.
//
// It panics if f is nil.
func (o Observable[T]) OnErrorResumeNext(f func(error) Observable[T]) Observable[T] {
	if f == nil {
		panic("observable: OnErrorResumeNext with nil f")
	}
	return Observable[T]{src: sourceFunc[T](func(s *scope, down Observer[T]) {
		o.run(s, &resumeObserver[T]{s: s, f: f, down: down})
	})}
}

type resumeObserver[T any] struct {
	s    *scope
	f    func(error) Observable[T]
	down Observer[T]
}

func (r *resumeObserver[T]) OnNext(v T)   { r.down.OnNext(v) }
func (r *resumeObserver[T]) OnCompleted() { r.down.OnCompleted() }

func (r *resumeObserver[T]) OnError(err error) {
	r.f(err).run(r.s, r.down)
}
