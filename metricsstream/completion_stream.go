package metricsstream

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rxhystrix/rxhystrix/internal/observer"
	"github.com/rxhystrix/rxhystrix/observable"
)

// completionBuffer is how many completions wait for one slow subscriber
// before new ones are dropped (and counted).
const completionBuffer = 512

// completionStream fans completions out to subscribers. Publishing is a
// load of the subscriber list and, per subscriber, a send that never
// blocks; with no subscriber it is a single atomic load. Each subscription
// owns a goroutine that delivers its buffered completions.
type completionStream struct {
	mu      sync.Mutex
	subs    atomic.Pointer[[]chan Completion] // nil while nobody subscribes
	dropped atomic.Uint64                     // completions not delivered, summed over subscribers
}

// publish offers c, which ended at end (Unix nanoseconds), to every
// subscriber, dropping it (and counting the drop) for those whose buffer
// is full.
func (s *completionStream) publish(c *Completion, end int64) {
	subs := s.subs.Load()
	if subs == nil {
		return
	}
	if c.End.IsZero() {
		c.End = time.Unix(0, end)
	}
	for _, ch := range *subs {
		select {
		case ch <- *c:
		default:
			s.dropped.Add(1)
		}
	}
}

// observable returns the hot stream of completions: a subscription receives
// the completions published while it lives, on a goroutine it owns that
// ends with it. A subscriber that panics is counted in panics and
// unsubscribed, and its subscription fails with a *SubscriberPanicError.
func (s *completionStream) observable(panics *atomic.Uint64) observable.Observable[Completion] {
	return observable.Create(func(ctx context.Context, o observable.Observer[Completion]) {
		ch := make(chan Completion, completionBuffer)
		s.add(ch)
		go s.forward(ctx, ch, o, panics)
	})
}

// forward delivers the completions of ch to o until ctx is done or o
// panics.
func (s *completionStream) forward(ctx context.Context, ch chan Completion, o observable.Observer[Completion], panics *atomic.Uint64) {
	defer s.remove(ch)
	for {
		select {
		case <-ctx.Done():
			return
		case c := <-ch:
			if p := deliver(o, c); p != nil {
				s.remove(ch)
				panics.Add(1)
				observer.Fail(o, p)
				return
			}
		}
	}
}

func (s *completionStream) add(ch chan Completion) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var subs []chan Completion
	if p := s.subs.Load(); p != nil {
		subs = slices.Clone(*p)
	}
	subs = append(subs, ch)
	s.subs.Store(&subs)
}

func (s *completionStream) remove(ch chan Completion) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.subs.Load()
	if p == nil {
		return
	}
	subs := slices.DeleteFunc(slices.Clone(*p), func(c chan Completion) bool { return c == ch })
	if len(subs) == 0 {
		s.subs.Store(nil)
		return
	}
	s.subs.Store(&subs)
}

// subscribers returns how many subscriptions are live.
func (s *completionStream) subscribers() int {
	if p := s.subs.Load(); p != nil {
		return len(*p)
	}
	return 0
}
