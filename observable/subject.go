package observable

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
)

// The kinds of Subject.
const (
	publishSubject = iota
	behaviorSubject
	replaySubject
)

// Subject is an Observer and a hot Observable at once: what it receives
// through OnNext, OnError and OnCompleted it passes to every current
// subscriber of [Subject.Observable]. A subscriber added after the Subject
// terminated receives the terminal event (after the replayed values, for
// a replay subject).
//
// A Subject is safe for concurrent use: producers may call its Observer
// methods from many goroutines at once, and each subscriber still receives
// one notification at a time, every subscriber in the same order. A
// notification is delivered on the goroutine of a producer; a producer
// never waits for another producer's delivery to a subscriber (it queues
// behind it instead), but a slow subscriber does hold up the producer
// delivering to it. Calls after a terminal event are ignored.
//
// The zero Subject is a publish subject ready to use.
type Subject[T any] struct {
	mu         sync.Mutex
	kind       int
	limit      int                     // replay: values kept, 0 for all
	values     []T                     // behavior: the latest; replay: the kept values
	subs       []*subjectSubscriber[T] // copied on write
	terminal   notification[T]
	terminated bool
}

// NewPublishSubject returns a Subject whose subscribers receive what it
// receives after they subscribed.
func NewPublishSubject[T any]() *Subject[T] { return &Subject[T]{} }

// NewBehaviorSubject returns a Subject that holds a current value, v
// until OnNext replaces it: a subscriber receives the current value at
// once, then what the Subject receives next. A subscriber added after the
// Subject terminated receives only the terminal event.
func NewBehaviorSubject[T any](v T) *Subject[T] {
	return &Subject[T]{kind: behaviorSubject, values: []T{v}}
}

// NewReplaySubject returns a Subject that replays to each new subscriber
// the last n values it received (all of them if n is 0), then passes on
// what it receives next.
//
// It panics if n is negative.
func NewReplaySubject[T any](n int) *Subject[T] {
	if n < 0 {
		panic(fmt.Sprintf("observable: NewReplaySubject with negative n (%d)", n))
	}
	return &Subject[T]{kind: replaySubject, limit: n}
}

// OnNext passes v to every subscriber.
func (s *Subject[T]) OnNext(v T) {
	s.mu.Lock()
	if s.terminated {
		s.mu.Unlock()
		return
	}
	switch s.kind {
	case behaviorSubject:
		s.values[0] = v
	case replaySubject:
		if s.limit > 0 && len(s.values) == s.limit {
			var zero T
			s.values[0] = zero
			s.values = s.values[1:]
		}
		s.values = append(s.values, v)
	}
	s.publishLocked(s.subs, notification[T]{kind: kindNext, v: v})
}

// OnError passes err to every subscriber and terminates the Subject.
//
// It panics if err is nil.
func (s *Subject[T]) OnError(err error) {
	if err == nil {
		panic("observable: Subject.OnError with nil err")
	}
	s.terminate(notification[T]{kind: kindError, err: err})
}

// OnCompleted completes every subscriber and terminates the Subject.
func (s *Subject[T]) OnCompleted() {
	s.terminate(notification[T]{kind: kindCompleted})
}

func (s *Subject[T]) terminate(n notification[T]) {
	s.mu.Lock()
	if s.terminated {
		s.mu.Unlock()
		return
	}
	s.terminated, s.terminal = true, n
	subs := s.subs
	s.subs = nil
	s.publishLocked(subs, n)
}

// publishLocked queues n for every subscriber in subs, in the order the
// Subject received it, then, with mu released, delivers.
func (s *Subject[T]) publishLocked(subs []*subjectSubscriber[T], n notification[T]) {
	for _, sub := range subs {
		sub.out.push(n)
	}
	s.mu.Unlock()
	for _, sub := range subs {
		sub.out.drain()
	}
}

// Observable returns the hot Observable of the Subject's notifications.
// Subscribe returns at once; notifications arrive on the producers'
// goroutines (a behavior or replay subject delivers what it replays on the
// subscribing goroutine). A subscription ends when the Subject terminates
// or the subscriber stops.
func (s *Subject[T]) Observable() Observable[T] {
	return Observable[T]{src: s}
}

func (s *Subject[T]) subscribe(sc *scope, down Observer[T]) {
	sub := &subjectSubscriber[T]{subject: s, s: sc, down: down}
	sub.out.down = sub
	s.mu.Lock()
	terminated := s.terminated
	if s.kind == replaySubject || (s.kind == behaviorSubject && !terminated) {
		for _, v := range s.values {
			sub.out.push(notification[T]{kind: kindNext, v: v})
		}
	}
	if terminated {
		sub.out.push(s.terminal)
	} else {
		s.subs = append(slices.Clip(s.subs), sub)
	}
	s.mu.Unlock()
	if !terminated {
		sub.h.target = sub
		if !sc.addHook(&sub.h) {
			s.remove(sub)
			return
		}
		if sub.ended.Load() {
			// The terminal event came before the hook went in.
			sc.removeHook(&sub.h)
		}
	}
	sub.out.drain()
}

// remove forgets a subscriber whose subscription has ended.
func (s *Subject[T]) remove(sub *subjectSubscriber[T]) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := slices.Index(s.subs, sub)
	if i < 0 {
		return
	}
	subs := make([]*subjectSubscriber[T], 0, len(s.subs)-1)
	subs = append(subs, s.subs[:i]...)
	s.subs = append(subs, s.subs[i+1:]...)
}

// subjectSubscriber is one subscription to a Subject: its own queue, so
// that it receives one notification at a time in the Subject's order.
type subjectSubscriber[T any] struct {
	subject *Subject[T]
	s       *scope
	h       hook // on s: leave the Subject when s ends
	out     relay[T]
	down    Observer[T]
	ended   atomic.Bool // the terminal event has been delivered
}

func (sub *subjectSubscriber[T]) scopeEnded(error) { sub.subject.remove(sub) }

func (sub *subjectSubscriber[T]) OnNext(v T) {
	if sub.s.live() {
		sub.down.OnNext(v)
	}
}

func (sub *subjectSubscriber[T]) OnError(err error) {
	if sub.s.live() {
		sub.down.OnError(err)
	}
	sub.unhook()
}

func (sub *subjectSubscriber[T]) OnCompleted() {
	if sub.s.live() {
		sub.down.OnCompleted()
	}
	sub.unhook()
}

// unhook takes the subscription's hook out of its scope once the terminal
// event has been delivered: the Subject has forgotten it already, and a
// scope that outlives it (a FlatMap's, a Concat's) would otherwise keep
// it, and its observers, until that scope ends.
func (sub *subjectSubscriber[T]) unhook() {
	sub.ended.Store(true)
	sub.s.removeHook(&sub.h)
}
