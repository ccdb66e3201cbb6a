package observable

// Map returns an Observable that emits f(v) for each value v of o.
//
// It panics if f is nil.
func Map[T, R any](o Observable[T], f func(T) R) Observable[R] {
	if f == nil {
		panic("observable: Map with nil f")
	}
	return Observable[R]{src: sourceFunc[R](func(s *scope, down Observer[R]) {
		o.run(s, &mapObserver[T, R]{f: f, down: down})
	})}
}

type mapObserver[T, R any] struct {
	f    func(T) R
	down Observer[R]
}

func (m *mapObserver[T, R]) OnNext(v T)        { m.down.OnNext(m.f(v)) }
func (m *mapObserver[T, R]) OnError(err error) { m.down.OnError(err) }
func (m *mapObserver[T, R]) OnCompleted()      { m.down.OnCompleted() }

// Filter returns an Observable that emits the values of o for which keep
// returns true.
//
// It panics if keep is nil.
func (o Observable[T]) Filter(keep func(T) bool) Observable[T] {
	if keep == nil {
		panic("observable: Filter with nil keep")
	}
	return Observable[T]{src: sourceFunc[T](func(s *scope, down Observer[T]) {
		o.run(s, &filterObserver[T]{keep: keep, down: down})
	})}
}

type filterObserver[T any] struct {
	keep func(T) bool
	down Observer[T]
}

func (f *filterObserver[T]) OnNext(v T) {
	if f.keep(v) {
		f.down.OnNext(v)
	}
}

func (f *filterObserver[T]) OnError(err error) { f.down.OnError(err) }
func (f *filterObserver[T]) OnCompleted()      { f.down.OnCompleted() }

// Scan returns an Observable that emits seed, then, for each value v of o,
// the accumulation acc = f(acc, v), starting from acc = seed. As in
// RxJava (and so in Hystrix's cumulative counters), seed is emitted first,
// at subscription. Each subscription starts again from seed; a seed that
// holds references (a slice, a map) is shared by the subscriptions, so f
// should not modify it.
//
// It panics if f is nil.
func Scan[T, A any](o Observable[T], seed A, f func(A, T) A) Observable[A] {
	if f == nil {
		panic("observable: Scan with nil f")
	}
	return Observable[A]{src: sourceFunc[A](func(s *scope, down Observer[A]) {
		down.OnNext(seed)
		o.run(s, &scanObserver[T, A]{acc: seed, f: f, down: down})
	})}
}

type scanObserver[T, A any] struct {
	acc  A
	f    func(A, T) A
	down Observer[A]
}

func (a *scanObserver[T, A]) OnNext(v T) {
	a.acc = a.f(a.acc, v)
	a.down.OnNext(a.acc)
}

func (a *scanObserver[T, A]) OnError(err error) { a.down.OnError(err) }
func (a *scanObserver[T, A]) OnCompleted()      { a.down.OnCompleted() }
