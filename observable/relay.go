package observable

import (
	"sync"
	"sync/atomic"
)

// The kinds of a notification.
const (
	kindNext = iota
	kindError
	kindCompleted
)

// notification is one call to an Observer, held in a queue.
type notification[T any] struct {
	kind int
	v    T
	err  error
}

func (n notification[T]) deliver(o Observer[T]) {
	switch n.kind {
	case kindNext:
		o.OnNext(n.v)
	case kindError:
		o.OnError(n.err)
	default:
		o.OnCompleted()
	}
}

// relay delivers notifications that may arrive from several goroutines to
// one observer, one at a time and in the order they were accepted
// ("queue-drain"): whichever goroutine finds the observer idle delivers,
// and goes on to deliver what the others queue meanwhile, so no goroutine
// ever waits for another's delivery, and a reentrant call (the observer
// emitting into its own source) is queued instead of deadlocking. It
// accepts nothing after the first terminal notification.
//
// wip counts the notifications accepted but not yet accounted for by the
// delivering goroutine; only the goroutine that takes it from 0 delivers.
// When nobody else is emitting, a notification costs two atomic operations
// and no lock.
//
// The zero relay, with down set, is ready to use.
type relay[T any] struct {
	down   Observer[T]
	wip    atomic.Int64
	closed atomic.Bool // a terminal notification was accepted

	mu    sync.Mutex
	queue []notification[T]
	spare []notification[T] // owned by the delivering goroutine
}

func (r *relay[T]) OnNext(v T) {
	if r.closed.Load() {
		return
	}
	if r.wip.CompareAndSwap(0, 1) {
		r.down.OnNext(v)
		if missed := r.wip.Add(-1); missed != 0 {
			r.loop(missed)
		}
		return
	}
	r.push(notification[T]{kind: kindNext, v: v})
	r.drain()
}

func (r *relay[T]) OnError(err error) {
	r.emitTerminal(notification[T]{kind: kindError, err: err})
}

func (r *relay[T]) OnCompleted() {
	r.emitTerminal(notification[T]{kind: kindCompleted})
}

func (r *relay[T]) emitTerminal(n notification[T]) {
	if r.closed.Load() || !r.closed.CompareAndSwap(false, true) {
		return
	}
	if r.wip.CompareAndSwap(0, 1) {
		n.deliver(r.down) // wip stays set: nothing is delivered after this
		return
	}
	r.enqueue(n)
	r.drain()
}

// push queues n, unless a terminal notification came before it; drain
// delivers it later.
func (r *relay[T]) push(n notification[T]) {
	if n.kind != kindNext {
		if !r.closed.CompareAndSwap(false, true) {
			return
		}
	} else if r.closed.Load() {
		return
	}
	r.enqueue(n)
}

func (r *relay[T]) enqueue(n notification[T]) {
	r.mu.Lock()
	r.queue = append(r.queue, n)
	r.mu.Unlock()
}

// drain delivers what is queued unless another goroutine is delivering,
// in which case that goroutine will.
func (r *relay[T]) drain() {
	if r.wip.Add(1) == 1 {
		r.loop(1)
	}
}

// loop delivers queued notifications while there are some the wip count
// says are still owed; the caller owns the delivery and owes missed. Two
// buffers take turns: producers append to queue while this goroutine
// delivers from the other, which it then keeps as spare. After a terminal
// notification wip is never brought back to zero, so nothing is delivered
// again.
func (r *relay[T]) loop(missed int64) {
	for {
		r.mu.Lock()
		q := r.queue
		r.queue = r.spare[:0]
		r.mu.Unlock()
		for _, n := range q {
			n.deliver(r.down)
			if n.kind != kindNext {
				return
			}
		}
		clear(q)
		r.spare = q
		if missed = r.wip.Add(-missed); missed == 0 {
			return
		}
	}
}
