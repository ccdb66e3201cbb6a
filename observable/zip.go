package observable

import (
	"context"
	"sync"
)

// Zip2 returns an Observable that pairs the values of a and b in order and
// emits f(a_i, b_i) for each pair. It completes as soon as one source has
// completed and every value it emitted has been paired, ending the
// subscription to the other, and fails with the first error of either.
// Values waiting for their partner are buffered without bound. a is
// subscribed before b, on the subscribing goroutine; f is called on the
// goroutine of whichever source completed the pair.
//
// It panics if f is nil.
func Zip2[A, B, R any](a Observable[A], b Observable[B], f func(A, B) R) Observable[R] {
	if f == nil {
		panic("observable: Zip2 with nil f")
	}
	return Observable[R]{src: &zipSource[A, B, R]{a: a, b: b, f: f}}
}

type zipSource[A, B, R any] struct {
	a Observable[A]
	b Observable[B]
	f func(A, B) R
}

func (zs *zipSource[A, B, R]) subscribe(s *scope, down Observer[R]) {
	z := &zipper[A, B, R]{f: zs.f, down: down}
	z.qa.init()
	z.qb.init()
	z.up.init(s)
	zs.a.run(&z.up, (*zipA[A, B, R])(z))
	zs.b.run(&z.up, (*zipB[A, B, R])(z))
}

// zipper holds both queues. Every notification updates them under mu and
// then calls drain; whichever goroutine finds nobody emitting delivers.
type zipper[A, B, R any] struct {
	up   scope
	f    func(A, B) R
	down Observer[R]

	mu           sync.Mutex
	qa           queue[A]
	qb           queue[B]
	doneA, doneB bool
	failure      error
	emitting     bool
	terminated   bool
}

func (z *zipper[A, B, R]) fail(err error) {
	z.mu.Lock()
	if z.failure == nil {
		z.failure = err
	}
	z.drainLocked()
}

// drainLocked delivers what can be delivered, unless another goroutine is
// already doing so; it is called with mu held and returns with it
// released.
func (z *zipper[A, B, R]) drainLocked() {
	if z.emitting || z.terminated {
		z.mu.Unlock()
		return
	}
	z.emitting = true
	for {
		switch {
		case z.failure != nil:
			z.terminated = true
			err := z.failure
			z.mu.Unlock()
			z.down.OnError(err)
			z.up.cancel(context.Canceled)
			return
		case z.qa.len() > 0 && z.qb.len() > 0:
			va, vb := z.qa.pop(), z.qb.pop()
			z.mu.Unlock()
			z.down.OnNext(z.f(va, vb))
			z.mu.Lock()
		case (z.doneA && z.qa.len() == 0) || (z.doneB && z.qb.len() == 0):
			z.terminated = true
			z.mu.Unlock()
			z.down.OnCompleted()
			z.up.cancel(context.Canceled)
			return
		default:
			z.emitting = false
			z.mu.Unlock()
			return
		}
	}
}

// zipA is a zipper seen as the observer of a.
type zipA[A, B, R any] zipper[A, B, R]

func (z *zipA[A, B, R]) OnNext(v A) {
	z.mu.Lock()
	z.qa.push(v)
	(*zipper[A, B, R])(z).drainLocked()
}

func (z *zipA[A, B, R]) OnError(err error) { (*zipper[A, B, R])(z).fail(err) }

func (z *zipA[A, B, R]) OnCompleted() {
	z.mu.Lock()
	z.doneA = true
	(*zipper[A, B, R])(z).drainLocked()
}

// zipB is a zipper seen as the observer of b.
type zipB[A, B, R any] zipper[A, B, R]

func (z *zipB[A, B, R]) OnNext(v B) {
	z.mu.Lock()
	z.qb.push(v)
	(*zipper[A, B, R])(z).drainLocked()
}

func (z *zipB[A, B, R]) OnError(err error) { (*zipper[A, B, R])(z).fail(err) }

func (z *zipB[A, B, R]) OnCompleted() {
	z.mu.Lock()
	z.doneB = true
	(*zipper[A, B, R])(z).drainLocked()
}

// queue is a FIFO whose first few values live in the queue itself.
type queue[T any] struct {
	buf  [2]T
	vs   []T
	head int
}

func (q *queue[T]) init()    { q.vs = q.buf[:0] }
func (q *queue[T]) len() int { return len(q.vs) - q.head }
func (q *queue[T]) push(v T) { q.vs = append(q.vs, v) }

func (q *queue[T]) pop() T {
	v := q.vs[q.head]
	var zero T
	q.vs[q.head] = zero
	q.head++
	if q.head == len(q.vs) {
		q.vs, q.head = q.vs[:0], 0
	}
	return v
}
