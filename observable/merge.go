package observable

import (
	"context"
	"sync/atomic"
)

// Merge returns an Observable that subscribes to every source, in order,
// on the subscribing goroutine, and emits their values as they arrive. It
// completes when all of them have completed, and fails with the first
// error, ending its subscriptions to the other sources. Values from
// asynchronous sources are delivered one at a time, on the goroutine of
// whichever source emits (Merge starts no goroutine). Merge of no sources
// completes at once.
func Merge[T any](os ...Observable[T]) Observable[T] {
	switch len(os) {
	case 0:
		return Empty[T]()
	case 1:
		return os[0]
	}
	ms := new(mergeSource[T])
	ms.os = copyInto(ms.buf[:], os)
	return Observable[T]{src: ms}
}

type mergeSource[T any] struct {
	os  []Observable[T]
	buf [2]Observable[T]
}

func (ms *mergeSource[T]) subscribe(s *scope, down Observer[T]) {
	m := &merger[T]{}
	m.out.down = down
	m.active.Store(int64(len(ms.os)))
	m.up.init(s)
	for _, o := range ms.os {
		o.run(&m.up, m)
	}
}

// merger is the observer of every source of a Merge; up is the scope they
// share, cancelled on the first error.
type merger[T any] struct {
	up     scope
	out    relay[T]
	active atomic.Int64 // sources not yet completed
}

func (m *merger[T]) OnNext(v T) { m.out.OnNext(v) }

func (m *merger[T]) OnError(err error) {
	m.out.OnError(err)
	m.up.cancel(context.Canceled)
}

func (m *merger[T]) OnCompleted() {
	if m.active.Add(-1) == 0 {
		m.out.OnCompleted()
		m.up.release()
	}
}

// FlatMap returns an Observable that calls f with each value of o and
// merges the Observables f returns: it emits their values as they arrive,
// completes when o and every inner Observable have completed, and fails
// with the first error from any of them, ending the others. Concurrency
// is not bounded: each inner Observable is subscribed as soon as its
// value arrives, on the goroutine that delivered it. Values from
// asynchronous inner Observables are delivered one at a time.
//
// It panics if f is nil.
func FlatMap[T, R any](o Observable[T], f func(T) Observable[R]) Observable[R] {
	if f == nil {
		panic("observable: FlatMap with nil f")
	}
	return Observable[R]{src: sourceFunc[R](func(s *scope, down Observer[R]) {
		fm := &flatMapper[T, R]{f: f}
		fm.out.down = down
		fm.active.Store(1)
		fm.up.init(s)
		o.run(&fm.up, fm)
	})}
}

// flatMapper observes the outer Observable; as a *flatMapInner it observes
// every inner one. up is the scope they all share.
type flatMapper[T, R any] struct {
	up     scope
	f      func(T) Observable[R]
	out    relay[R]
	active atomic.Int64 // the outer plus the inner Observables not yet completed
}

func (fm *flatMapper[T, R]) OnNext(v T) {
	if !fm.up.live() {
		return
	}
	inner := fm.f(v)
	fm.active.Add(1)
	inner.run(&fm.up, (*flatMapInner[T, R])(fm))
}

func (fm *flatMapper[T, R]) OnError(err error) {
	fm.out.OnError(err)
	fm.up.cancel(context.Canceled)
}

func (fm *flatMapper[T, R]) OnCompleted() {
	if fm.active.Add(-1) == 0 {
		fm.out.OnCompleted()
		fm.up.release()
	}
}

// flatMapInner is a flatMapper seen as the observer of an inner Observable.
type flatMapInner[T, R any] flatMapper[T, R]

func (fi *flatMapInner[T, R]) OnNext(v R)        { fi.out.OnNext(v) }
func (fi *flatMapInner[T, R]) OnError(err error) { (*flatMapper[T, R])(fi).OnError(err) }
func (fi *flatMapInner[T, R]) OnCompleted()      { (*flatMapper[T, R])(fi).OnCompleted() }
