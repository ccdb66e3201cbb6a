package metricsstream

import "time"

// A tick stream made with restWhen rests: it stops its timer at a tick
// whose value will hold until something new is recorded (for health: the
// window is empty, and so is the bucket in progress), and the next
// recording that could change the value wakes it. Every subscriber has
// that value already, from that tick or at its subscription, so resting
// leaves out only ticks that would repeat it; a key that nobody uses costs
// no timer, however many subscribers (its circuit breaker) it has.
//
// A woken stream ticks at the next boundary of its schedule, the time it
// would have ticked had it never rested: the phase of the ticks is the
// stream's schedule (for health, the boundaries of the health buckets),
// which resting does not move.
//
// Nothing is missed between the last look at the buckets and the flag:
// the stream sets resting before it looks at the buckets a last time, and
// a recorder adds to the buckets before it looks at resting. Atomics are
// sequentially consistent, so either that look sees the add, and the
// stream goes on ticking, or the recorder sees resting and wakes the
// stream. The recorder that clears the flag calls wake; the others pay a
// load of it.

// restLocked reports whether the stream may rest at now, announcing that
// it does: its value holds and nothing was recorded since (see above).
func (s *tickStream[T]) restLocked(now time.Time) bool {
	if s.quiet == nil || !s.quiet(now) {
		return false
	}
	s.resting.Store(true)
	if s.quiet(now) {
		return true
	}
	s.resting.Store(false)
	return false
}

// wake starts the timer of a resting stream again, for the next tick of
// its schedule. The recorder that found the stream resting, and cleared
// the flag, calls it.
func (s *tickStream[T]) wake() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.subs) > 0 && s.timer == nil {
		s.startLocked(s.clock.Now())
	}
}
