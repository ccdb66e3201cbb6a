package observable

import (
	"context"
	"fmt"
)

// Take returns an Observable that emits the first n values of o and then
// completes, ending its subscription to o (the source sees its context
// done). Take(0) completes at once without subscribing to o.
//
// It panics if n is negative.
func (o Observable[T]) Take(n int) Observable[T] {
	if n < 0 {
		panic(fmt.Sprintf("observable: Take with negative n (%d)", n))
	}
	return Observable[T]{src: sourceFunc[T](func(s *scope, down Observer[T]) {
		if n == 0 {
			down.OnCompleted()
			return
		}
		t := &takeObserver[T]{left: n, down: down}
		t.up.init(s)
		o.run(&t.up, t)
	})}
}

// takeObserver counts down; up is the scope it gives o, which it cancels
// once it has n values.
type takeObserver[T any] struct {
	up   scope
	left int
	down Observer[T]
}

func (t *takeObserver[T]) OnNext(v T) {
	if t.left <= 0 {
		return
	}
	t.left--
	// Whether this value is the n-th is decided now: a source that
	// emits again while v is delivered (reentrantly) brings left to 0
	// itself, and completes then.
	last := t.left == 0
	t.down.OnNext(v)
	if last {
		t.down.OnCompleted()
		t.up.cancel(context.Canceled)
	}
}

func (t *takeObserver[T]) OnError(err error) {
	if t.left > 0 {
		t.left = 0
		t.down.OnError(err)
		t.up.release()
	}
}

func (t *takeObserver[T]) OnCompleted() {
	if t.left > 0 {
		t.left = 0
		t.down.OnCompleted()
		t.up.release()
	}
}

// Skip returns an Observable that drops the first n values of o and emits
// the rest.
//
// It panics if n is negative.
func (o Observable[T]) Skip(n int) Observable[T] {
	if n < 0 {
		panic(fmt.Sprintf("observable: Skip with negative n (%d)", n))
	}
	if n == 0 {
		return o
	}
	return Observable[T]{src: sourceFunc[T](func(s *scope, down Observer[T]) {
		o.run(s, &skipObserver[T]{left: n, down: down})
	})}
}

type skipObserver[T any] struct {
	left int
	down Observer[T]
}

func (k *skipObserver[T]) OnNext(v T) {
	if k.left > 0 {
		k.left--
		return
	}
	k.down.OnNext(v)
}

func (k *skipObserver[T]) OnError(err error) { k.down.OnError(err) }
func (k *skipObserver[T]) OnCompleted()      { k.down.OnCompleted() }
