package metricsstream

import (
	"sync"
	"sync/atomic"

	"github.com/rxhystrix/rxhystrix/observable"
)

// tickQueueLimit bounds the values waiting for one subscriber of a tick
// stream; when it is full the oldest value is dropped.
const tickQueueLimit = 16

// queuedObserver delivers values to one observer, one at a time, from
// whichever goroutine finds it idle. Values that arrive while it is busy
// wait in a bounded queue; the oldest is dropped (and counted) when the
// queue is full. When the observer panics, the queue ends: it delivers
// nothing more and calls panicked, once, on the goroutine that recovered
// the panic.
type queuedObserver[T any] struct {
	o        observable.Observer[T]
	drops    *atomic.Int64
	panicked func(*SubscriberPanicError)

	mu       sync.Mutex
	queue    []T
	draining bool
	ended    bool // o panicked
}

func (q *queuedObserver[T]) push(v T) {
	q.mu.Lock()
	if q.ended {
		q.mu.Unlock()
		return
	}
	if len(q.queue) == tickQueueLimit {
		q.queue = q.queue[1:]
		q.drops.Add(1)
	}
	q.queue = append(q.queue, v)
	q.mu.Unlock()
}

// drain delivers the queued values unless another goroutine is already
// doing so.
func (q *queuedObserver[T]) drain() {
	q.mu.Lock()
	if q.draining || q.ended {
		q.mu.Unlock()
		return
	}
	q.draining = true
	for len(q.queue) > 0 {
		v := q.queue[0]
		var zero T
		q.queue[0] = zero
		q.queue = q.queue[1:]
		q.mu.Unlock()
		if p := deliver(q.o, v); p != nil {
			q.mu.Lock()
			q.queue, q.ended = nil, true
			q.mu.Unlock()
			q.panicked(p)
			return
		}
		q.mu.Lock()
	}
	q.queue = nil
	q.draining = false
	q.mu.Unlock()
}
