package metricsstream

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rxhystrix/rxhystrix/internal/clock"
	"github.com/rxhystrix/rxhystrix/internal/observer"
	"github.com/rxhystrix/rxhystrix/observable"
)

// tickStream is a hot, timer-driven stream of a value. It runs only while
// it has subscribers: the first one arms a timer for the next tick, the
// last one to leave stops it, so a key nobody watches costs no timer; a
// stream made with restWhen also stops it while its value cannot change
// (see tick_rest.go). Each tick, on the goroutine the clock fires it on,
// computes the value once and hands it to every subscriber. A new
// subscriber receives the current value at once, on its own goroutine,
// inside Subscribe.
type tickStream[T any] struct {
	clock clock.Clock
	next  func(now time.Time) time.Time // when the tick after now is due
	value func(now time.Time) T
	drops *atomic.Int64 // values dropped for busy subscribers
	// panics counts the subscribers that panicked, which the stream
	// unsubscribed.
	panics *atomic.Uint64

	// quiet, nil for a stream that never rests, reports whether the value
	// at now is the value of every later tick until something new is
	// recorded. resting is the flag the recorders look at.
	quiet   func(now time.Time) bool
	resting *atomic.Bool

	mu     sync.Mutex
	subs   []*queuedObserver[T] // replaced, never changed in place
	timer  clock.Timer          // nil while nobody subscribes or the stream rests
	target *tickTarget[T]       // what timer fires into, one per start; nil with it
	ticks  uint64               // ticks begun, under mu

	// pushMu orders the values of the ticks: a tick that computed its
	// value after a later tick had queued its own drops it instead of
	// queueing it behind the newer one.
	pushMu sync.Mutex
	pushed uint64 // the tick whose value was queued last, under pushMu
}

// tickTarget is what a stream's timer holds of the stream, cut when the
// timer stops; each start of the timer makes a new one, so that a tick of
// a timer since stopped (and perhaps started again) tells itself apart. A
// stopped timer can stay in the runtime's timer heap, with its function,
// until the runtime next cleans that heap, which a heap full of pending
// timers puts off; holding the stream there would keep the stream's key,
// and its metrics, reachable as long.
type tickTarget[T any] struct{ s atomic.Pointer[tickStream[T]] }

// fire ticks the stream if its timer was not stopped since.
func (t *tickTarget[T]) fire() {
	if s := t.s.Load(); s != nil {
		s.tick(t)
	}
}

func newTickStream[T any](c clock.Clock, next func(time.Time) time.Time, value func(time.Time) T, drops *atomic.Int64, panics *atomic.Uint64) *tickStream[T] {
	return &tickStream[T]{clock: c, next: next, value: value, drops: drops, panics: panics}
}

// restWhen makes s rest while quiet says its value holds (see
// tick_rest.go), with resting as the flag its recorders look at.
func (s *tickStream[T]) restWhen(quiet func(now time.Time) bool, resting *atomic.Bool) *tickStream[T] {
	s.quiet, s.resting = quiet, resting
	return s
}

// observable returns the stream as an Observable. Each subscription
// receives the current value, then one value per tick until it ends; it
// never completes by itself, and fails with a *SubscriberPanicError if
// its observer panics.
func (s *tickStream[T]) observable() observable.Observable[T] {
	return observable.Create(func(ctx context.Context, o observable.Observer[T]) {
		q := &queuedObserver[T]{o: o, drops: s.drops}
		q.panicked = func(p *SubscriberPanicError) {
			s.remove(q)
			s.panics.Add(1)
			observer.Fail(o, p)
		}
		now := s.clock.Now()
		q.push(s.value(now))
		s.add(q, now)
		onDone(ctx, func() { s.remove(q) })
		q.drain()
	})
}

// onDone arranges for f to run once ctx is done. A subscription's context
// has an AfterFunc method that runs f synchronously when the subscription
// ends, so that after Unsubscribe returns the stream has forgotten the
// subscriber (and stopped its timer if it was the last); for another
// context, f runs on a goroutine of its own soon after.
func onDone(ctx context.Context, f func()) {
	if af, ok := ctx.(interface{ AfterFunc(func()) func() bool }); ok {
		af.AfterFunc(f)
		return
	}
	context.AfterFunc(ctx, f)
}

// add adds q, which was given the value of now. A stream without a timer
// decides at that same now whether to rest: had it decided at a later
// reading of the clock, a window that emptied in between would leave q
// with the older value and the stream resting on it. Arming the timer
// for the tick after now fires at once if the clock has passed it.
func (s *tickStream[T]) add(q *queuedObserver[T], now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.subs = append(slices.Clip(s.subs), q)
	if s.timer == nil && !s.restLocked(now) {
		s.startLocked(now)
	}
}

// startLocked arms a new timer for the tick after now.
func (s *tickStream[T]) startLocked(now time.Time) {
	if s.resting != nil {
		s.resting.Store(false)
	}
	s.target = &tickTarget[T]{}
	s.target.s.Store(s)
	s.timer = s.clock.AfterFunc(s.next(now).Sub(s.clock.Now()), s.target.fire)
}

// stopLocked stops the timer and cuts what it holds of the stream.
func (s *tickStream[T]) stopLocked() {
	s.timer.Stop()
	s.target.s.Store(nil)
	s.timer, s.target = nil, nil
}

func (s *tickStream[T]) remove(q *queuedObserver[T]) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := slices.Index(s.subs, q)
	if i < 0 {
		return
	}
	s.subs = slices.Delete(slices.Clone(s.subs), i, i+1)
	if len(s.subs) > 0 {
		return
	}
	if s.timer != nil {
		s.stopLocked()
	}
	if s.resting != nil {
		s.resting.Store(false) // nobody to wake it for
	}
}

// tick re-arms the timer, or stops it if the stream may rest, then
// delivers the value of now to every subscriber: first queued to all, then
// drained, so that a subscriber still busy with an earlier value (possible
// on the real clock, whose ticks run on their own goroutines) neither
// blocks the others nor loses the order. A tick overtaken by a later one
// while it computed its value drops that value (counted in drops): the
// later one's is newer.
func (s *tickStream[T]) tick(t *tickTarget[T]) {
	s.mu.Lock()
	if s.target != t {
		s.mu.Unlock()
		return
	}
	now := s.clock.Now()
	if s.restLocked(now) {
		s.stopLocked()
	} else {
		s.timer.Reset(s.next(now).Sub(now))
	}
	subs := s.subs
	s.ticks++
	seq := s.ticks
	s.mu.Unlock()

	v := s.value(now)
	s.pushMu.Lock()
	if seq < s.pushed {
		// A later tick overtook this one (each tick of the real clock
		// runs on a goroutine of its own): its value is newer.
		s.pushMu.Unlock()
		if s.drops != nil {
			s.drops.Add(int64(len(subs)))
		}
		return
	}
	s.pushed = seq
	for _, q := range subs {
		q.push(v)
	}
	s.pushMu.Unlock()
	for _, q := range subs {
		q.drain()
	}
}

// realign moves the pending tick to the stream's current schedule, after
// the schedule changed (a reset of the health window).
func (s *tickStream[T]) realign() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.timer != nil {
		now := s.clock.Now()
		s.timer.Reset(s.next(now).Sub(now))
	}
}

// subscribers returns how many subscriptions are live.
func (s *tickStream[T]) subscribers() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.subs)
}
