package clock

import (
	"context"
	"math"
	"time"
)

// Clock tells the time and schedules work. Implementations are safe for
// concurrent use.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// Since returns the time elapsed since t.
	Since(t time.Time) time.Duration
	// AfterFunc calls f in its own goroutine (Real) or on the goroutine
	// that advances the clock (Manual) once d has elapsed.
	AfterFunc(d time.Duration, f func()) Timer
	// NewTimer returns a Timer that sends the time on its channel once d
	// has elapsed.
	NewTimer(d time.Duration) Timer
	// NewTicker returns a Ticker that sends the time on its channel every
	// d. It panics if d <= 0.
	NewTicker(d time.Duration) Ticker
	// WithTimeout is context.WithTimeout measured on this clock: the
	// returned context's Err is context.DeadlineExceeded once d has
	// elapsed.
	WithTimeout(parent context.Context, d time.Duration) (context.Context, context.CancelFunc)
}

// Timer is a single event, as time.Timer.
type Timer interface {
	// C is the channel on which the time is delivered; nil for a timer
	// made by AfterFunc.
	C() <-chan time.Time
	// Stop prevents the timer from firing. It reports whether the call
	// stopped the timer.
	Stop() bool
	// Reset changes the timer to expire after d. It reports whether the
	// timer had been active.
	Reset(d time.Duration) bool
	// ResetAt changes the timer to expire when its clock reads t (at once
	// if it reads t already). Unlike Reset(t.Sub(c.Now())), it cannot be
	// late by a move of the clock between the reading and the reset. It
	// reports whether the timer had been active.
	ResetAt(t time.Time) bool
}

// Ticker delivers ticks at intervals, as time.Ticker.
type Ticker interface {
	// C is the channel on which the ticks are delivered.
	C() <-chan time.Time
	// Stop turns off the ticker.
	Stop()
	// Reset stops the ticker and resets its period to d.
	Reset(d time.Duration)
}

// UnixNano returns c.Now().UnixNano(): c's time in nanoseconds since the
// Unix epoch. For Real it is read without making a time.Time, whose wall
// and monotonic halves cost more to build and subtract than the reading
// itself: a caller that only measures and compares times (a command timing
// its executions, the metrics finding their buckets) keeps them as these
// integers. Real's readings are monotonic, so the difference of two is
// exactly the time elapsed between them.
func UnixNano(c Clock) int64 {
	if _, ok := c.(realClock); ok {
		return realNanos()
	}
	return c.Now().UnixNano()
}

// UnixNanoOf returns t in Unix nanoseconds as UnixNano(c) would read that
// instant: for a time from outside c, such as a caller's context's
// deadline, compared with c's readings. For Real, whose time line does not
// follow steps of the system clock, a time with a monotonic reading (any
// from time.Now) is placed by that reading; for other clocks, and times
// without one, it is t.UnixNano().
func UnixNanoOf(c Clock, t time.Time) int64 {
	if _, ok := c.(realClock); ok {
		return realNanosOf(t)
	}
	return t.UnixNano()
}

// TimeAt returns c's reading n (Unix nanoseconds, as UnixNano reads) as a
// time.Time for code outside c, such as a context's Deadline: for Real
// with the monotonic reading of that instant, so that time.Until and
// comparisons with time.Now's readings measure it rightly whatever the
// system clock has been set to since the process started; for other
// clocks time.Unix(0, n).
func TimeAt(c Clock, n int64) time.Time {
	if _, ok := c.(realClock); ok {
		return realTimeAt(n)
	}
	return time.Unix(0, n)
}

// UnixNanoAfter returns start plus d (d >= 0), both in Unix nanoseconds as
// UnixNano reads them, or the latest time an int64 holds when the sum is
// past it: a wait too long to reach (math.MaxInt64 for "never", or
// centuries) is a due time that never comes, not one that wrapped round
// into the past and is due at once.
func UnixNanoAfter(start int64, d time.Duration) int64 {
	if start > 0 && int64(d) > math.MaxInt64-start {
		return math.MaxInt64
	}
	return start + int64(d)
}

// ResetAt sets timer, of clock c, to fire when c reads at, and reports
// whether c reads at already. A manual clock fires a timer set to a time
// it has reached only when it next moves, so a caller told true acts on
// the deadline itself. Timers set to a deadline read from a clock before
// they are armed go through here: set relative to a later reading, they
// would fire late.
func ResetAt(c Clock, timer Timer, at time.Time) (reached bool) {
	timer.ResetAt(at)
	return !c.Now().Before(at)
}

// AfterFuncAt is c.AfterFunc for a deadline read from c before: it calls
// f once c reads at, and reports, as ResetAt does, whether c reads at
// already, in which case the caller acts on the deadline itself.
//
// The timer is armed once: a timer armed for a duration and then reset
// to at could fire in between (a deadline passed already, or a clock
// moved by another goroutine) and call f again once reset.
func AfterFuncAt(c Clock, at time.Time, f func()) (timer Timer, reached bool) {
	switch c := c.(type) {
	case *Manual:
		timer = c.afterFuncAt(at, f)
	case realClock:
		timer = c.afterFuncAt(at, f)
	default: // a clock of the caller's, which may count or wrap AfterFunc
		timer = c.AfterFunc(at.Sub(c.Now()), f)
		if !timer.ResetAt(at) { // it fired meanwhile, so f has been called
			timer.Stop()
		}
	}
	return timer, !c.Now().Before(at)
}
