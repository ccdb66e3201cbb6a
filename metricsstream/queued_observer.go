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
// queue is full.
type queuedObserver[T any] struct {
	o     observable.Observer[T]
	drops *atomic.Int64

	mu       sync.Mutex
	queue    []T
	draining bool
}

func (q *queuedObserver[T]) push(v T) {
	q.mu.Lock()
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
	if q.draining {
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
		q.o.OnNext(v)
		q.mu.Lock()
	}
	q.queue = nil
	q.draining = false
	q.mu.Unlock()
}
