package observable

import (
	"context"
	"sync/atomic"
)

// Merge returns an Observable that subscribes to every source, in order,
// on the subscribing goroutine, and emits their values as they arrive. It
// completes when all of them have completed, and fails with the first
// error, ending its subscriptions to the other sources. Each source's
// context ends with its own stream, not the Merge's. Values from
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
	sub := &mergeSubscription[T]{}
	m := &sub.merger
	m.out.down = down
	m.active.Store(int64(len(ms.os)))
	m.up.init(s)
	parts := sub.buf[:]
	if len(ms.os) > len(parts) {
		parts = make([]mergePart[T], len(ms.os))
	}
	for i, o := range ms.os {
		p := &parts[i]
		p.m = m
		p.up.init(&m.up)
		o.run(&p.up, p)
	}
}

// mergeSubscription is a subscription to a Merge: its merger, and the
// parts of a Merge of two sources in the same allocation.
type mergeSubscription[T any] struct {
	merger[T]
	buf [2]mergePart[T]
}

// mergePart observes one source of a Merge, or an inner Observable of a
// FlatMap, which runs in a scope of its own below the one they share: its
// completion ends it, so that what the source holds open until its
// context ends is let go of then, not when the whole ends. Sources that
// complete pile up in a long FlatMap otherwise.
type mergePart[T any] struct {
	up scope
	m  *merger[T]
}

func (p *mergePart[T]) OnNext(v T)        { p.m.OnNext(v) }
func (p *mergePart[T]) OnError(err error) { p.m.OnError(err) }

func (p *mergePart[T]) OnCompleted() {
	p.up.cancel(context.Canceled)
	p.m.OnCompleted()
}

// merger is the observer of every source of a Merge, and of a FlatMap's
// inner Observables; up is the scope they share, cancelled on the first
// error.
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
		fm.inner.out.down = down
		fm.inner.active.Store(1)
		fm.inner.up.init(s)
		fm.outer.init(&fm.inner.up)
		o.run(&fm.outer, fm)
	})}
}

// flatMapper observes the outer Observable, which runs in a scope of its
// own (outer), ended by its completion, below the one the inner
// Observables share; inner merges the inner Observables, and counts the
// outer among its sources.
type flatMapper[T, R any] struct {
	inner merger[R]
	outer scope
	f     func(T) Observable[R]
}

func (fm *flatMapper[T, R]) OnNext(v T) {
	if !fm.inner.up.live() {
		return
	}
	o := fm.f(v)
	fm.inner.active.Add(1)
	p := &mergePart[R]{m: &fm.inner}
	p.up.init(&fm.inner.up)
	o.run(&p.up, p)
}

func (fm *flatMapper[T, R]) OnError(err error) { fm.inner.OnError(err) }

func (fm *flatMapper[T, R]) OnCompleted() {
	fm.outer.cancel(context.Canceled)
	fm.inner.OnCompleted()
}
