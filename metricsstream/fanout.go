package metricsstream

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/rxhystrix/rxhystrix/internal/observer"
	"github.com/rxhystrix/rxhystrix/observable"
)

// fanoutBuffer is how many values wait for one slow subscriber of a
// fanout before new ones are dropped (and counted).
const fanoutBuffer = 512

// fanout hands the values published to it to every subscriber: the
// completions of a command key, the request events of a registry.
// Publishing is a load of the subscriber list and, per subscriber, a send
// that never blocks; with no subscriber it is a single atomic load.
type fanout[T any] struct {
	mu      sync.Mutex
	subs    atomic.Pointer[[]chan T] // nil while nobody subscribes
	dropped atomic.Uint64            // values not delivered, summed over subscribers
}

// channels returns the channels of the subscribers, nil when there are
// none, for a publisher that prepares a value only when somebody takes it.
func (s *fanout[T]) channels() []chan T {
	if p := s.subs.Load(); p != nil {
		return *p
	}
	return nil
}

// send offers v to each of chans, dropping it (and counting the drop) for
// those whose buffer is full.
func (s *fanout[T]) send(chans []chan T, v T) {
	for _, ch := range chans {
		select {
		case ch <- v:
		default:
			s.dropped.Add(1)
		}
	}
}

// publish offers v to every subscriber.
func (s *fanout[T]) publish(v T) { s.send(s.channels(), v) }

// observable returns the hot stream of the values published: a
// subscription receives the values published while it lives, on a
// goroutine it owns that ends with it. A subscriber that panics is counted
// in panics and unsubscribed, and its subscription fails with a
// *SubscriberPanicError.
func (s *fanout[T]) observable(panics *atomic.Uint64) observable.Observable[T] {
	return observable.Create(func(ctx context.Context, o observable.Observer[T]) {
		ch := s.subscribe()
		go s.forward(ctx, ch, o, panics)
	})
}

// forward delivers the values of ch to o until ctx is done or o panics.
func (s *fanout[T]) forward(ctx context.Context, ch chan T, o observable.Observer[T], panics *atomic.Uint64) {
	defer s.unsubscribe(ch)
	for {
		select {
		case <-ctx.Done():
			return
		case v := <-ch:
			if p := deliver(o, v); p != nil {
				s.unsubscribe(ch)
				panics.Add(1)
				observer.Fail(o, p)
				return
			}
		}
	}
}

// subscribe adds a subscriber and returns the channel its values come on.
func (s *fanout[T]) subscribe() chan T {
	ch := make(chan T, fanoutBuffer)
	s.mu.Lock()
	defer s.mu.Unlock()
	var subs []chan T
	if p := s.subs.Load(); p != nil {
		subs = slices.Clone(*p)
	}
	subs = append(subs, ch)
	s.subs.Store(&subs)
	return ch
}

// unsubscribe removes the subscriber of ch; it may be called again.
func (s *fanout[T]) unsubscribe(ch chan T) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.subs.Load()
	if p == nil {
		return
	}
	subs := slices.DeleteFunc(slices.Clone(*p), func(c chan T) bool { return c == ch })
	if len(subs) == 0 {
		s.subs.Store(nil)
		return
	}
	s.subs.Store(&subs)
}

// subscribers returns how many subscriptions are live.
func (s *fanout[T]) subscribers() int { return len(s.channels()) }
