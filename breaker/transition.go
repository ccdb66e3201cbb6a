package breaker

import (
	"context"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rxhystrix/rxhystrix/internal/observer"
	"github.com/rxhystrix/rxhystrix/metricsstream"
	"github.com/rxhystrix/rxhystrix/observable"
)

// Transition is one change of a breaker's state.
type Transition struct {
	Name     string // the breaker's name (WithName), "" if unnamed
	From, To State
	// Time is when the change took effect on the breaker's clock. A
	// HALF_OPEN breaker whose trial ran out of HalfOpenTrialTimeout
	// re-opens at the moment the bound ran out, even if the breaker
	// noticed later. The times of one breaker's transitions never
	// decrease.
	Time time.Time
	// Health is the latest health snapshot the breaker had received: for
	// a trip, the snapshot that tripped it. After a close the health
	// stream starts again from zero counts.
	Health metricsstream.HealthCounts
	// ConsecutiveFailures is, for a trip by Config.ConsecutiveFailures,
	// the run of executions that did not succeed; zero for the other
	// changes, a trip by the health snapshot among them.
	ConsecutiveFailures int
	// SleepWindow is, for a change to OPEN, how long from Time the
	// breaker refuses every request: Config.SleepWindow, or longer after
	// failed trials when Config.MaxSleepWindow is set. It is zero for
	// the other changes.
	SleepWindow time.Duration
}

// String returns "FROM -> TO", prefixed with the name if there is one.
func (t Transition) String() string {
	s := t.From.String() + " -> " + t.To.String()
	if t.Name != "" {
		s = t.Name + ": " + s
	}
	return s
}

// transitionHub fans transitions out to subscribers. Publishing never
// blocks: each subscriber has a bounded buffer drained by its own
// goroutine, and a transition that finds a buffer full is dropped and
// counted.
type transitionHub struct {
	mu       sync.Mutex
	subs     map[*hubSubscriber]struct{}
	closed   bool
	dropped  atomic.Uint64
	panicked atomic.Uint64 // subscribers unsubscribed because they panicked
}

type hubSubscriber struct {
	ch   chan Transition
	done chan struct{} // closed when the hub closes
}

// add registers a subscriber with a buffer of n; it reports false if the
// hub is closed.
func (h *transitionHub) add(n int) (*hubSubscriber, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, false
	}
	if h.subs == nil {
		h.subs = make(map[*hubSubscriber]struct{})
	}
	s := &hubSubscriber{ch: make(chan Transition, n), done: make(chan struct{})}
	h.subs[s] = struct{}{}
	return s, true
}

func (h *transitionHub) remove(s *hubSubscriber) {
	h.mu.Lock()
	delete(h.subs, s)
	h.mu.Unlock()
}

// publish hands t to every subscriber without blocking.
func (h *transitionHub) publish(t Transition) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return
	}
	for s := range h.subs {
		select {
		case s.ch <- t:
		default:
			h.dropped.Add(1)
		}
	}
}

// close tells every subscriber to deliver what it holds and complete; later
// subscribers complete at once.
func (h *transitionHub) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return
	}
	h.closed = true
	for s := range h.subs {
		close(s.done)
	}
}

// observable returns the hot Observable of the hub's transitions.
func (h *transitionHub) observable(buffer int) observable.Observable[Transition] {
	return observable.Create(func(ctx context.Context, o observable.Observer[Transition]) {
		s, ok := h.add(buffer)
		if !ok {
			o.OnCompleted()
			return
		}
		go h.forward(ctx, s, o)
	})
}

// forward delivers a subscriber's transitions to its observer until the
// subscription ends or the hub closes. If the observer panics, forward
// recovers (it runs on the goroutine the subscription started, where the
// panic would end the process), unsubscribes it, counts it and ends its
// subscription with a *metricsstream.SubscriberPanicError.
func (h *transitionHub) forward(ctx context.Context, s *hubSubscriber, o observable.Observer[Transition]) {
	defer func() {
		h.remove(s)
		if v := recover(); v != nil {
			h.panicked.Add(1)
			observer.Fail(o, &metricsstream.SubscriberPanicError{Value: v, Stack: debug.Stack()})
		}
	}()
	for {
		select {
		case t := <-s.ch:
			o.OnNext(t)
		case <-ctx.Done():
			return
		case <-s.done:
			for {
				select {
				case t := <-s.ch:
					o.OnNext(t)
				default:
					o.OnCompleted()
					return
				}
			}
		}
	}
}
