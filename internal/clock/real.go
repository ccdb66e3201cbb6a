package clock

import (
	"context"
	"math"
	"sync/atomic"
	"time"
	_ "unsafe" // for go:linkname
)

// Real is the clock of package time, read cheaply: Now is the wall time
// when the process started plus the monotonic time elapsed since, which
// costs one read of the monotonic clock where time.Now costs two (wall and
// monotonic). Durations between its readings are exact; its wall time does
// not follow later steps of the system clock (NTP corrections, manual
// changes), as the rolling windows of metrics need a steady clock anyway.
var Real Clock = realClock{}

type realClock struct{}

// monoAtStart and wallAtStart anchor Real's readings; wallNanosAtStart is
// wallAtStart in Unix nanoseconds. monoAtStart is read first, so that Real
// reads no earlier than time.Now: read the other way round, Real would lag
// time.Now by whatever passed between the two readings (a preemption, say).
//
// stepped is how far the system clock has been stepped since, as
// StepSystemClock pretends: 0 outside tests. Real does not follow such a
// step, so its readings are Unix nanoseconds of its own, apart from those
// of the system clock by -stepped.
var (
	monoAtStart      = nanotime()
	wallAtStart      = time.Now()
	wallNanosAtStart = wallAtStart.UnixNano()
	stepped          atomic.Int64
)

//go:linkname nanotime runtime.nanotime
func nanotime() int64

func (realClock) Now() time.Time {
	return wallAtStart.Add(time.Duration(nanotime() - monoAtStart - stepped.Load()))
}

// realNanos is Real's reading in Unix nanoseconds.
func realNanos() int64 {
	return wallNanosAtStart - stepped.Load() + (nanotime() - monoAtStart)
}

// realNanosOf places t, a time of package time, on Real's time line: by
// its monotonic reading when it has one (time.Now's, and so every
// deadline of context.WithTimeout), which says how long after Real's
// start it is whatever the system clock has been set to since; by its
// wall time otherwise. Times too far off for an int64 saturate.
func realNanosOf(t time.Time) int64 {
	base := wallNanosAtStart - stepped.Load()
	d := int64(t.Sub(wallAtStart)) // monotonic when t has a monotonic reading
	n := base + d
	if (base >= 0) == (d >= 0) && (n >= 0) != (base >= 0) { // wrapped round
		if d >= 0 {
			return math.MaxInt64
		}
		return math.MinInt64
	}
	return n
}

// realTimeAt is the time.Time of Real's reading n: it carries the
// monotonic reading of that instant, so that package time measures it
// rightly against its own readings (time.Until of a run's deadline) when
// the system clock has been stepped.
func realTimeAt(n int64) time.Time {
	return wallAtStart.Add(time.Duration(n - (wallNanosAtStart - stepped.Load())))
}

// StepSystemClock makes Real behave, until undo is called, as if the
// system clock had been stepped by d (an NTP step, a resumed virtual
// machine) after the process started: Real keeps its own time line while
// time.Now's wall time, and so every deadline of context.WithTimeout, is
// d apart from it. It is for tests of code that mixes the two. Real's Now
// carries the monotonic reading of the instant it reads less d, which a
// real step would leave alone, and UnixNanoOf takes a time without a
// monotonic reading as the system clock's. It is not safe to call from
// tests that run in parallel with others using Real.
func StepSystemClock(d time.Duration) (undo func()) {
	stepped.Add(int64(d))
	return func() { stepped.Add(-int64(d)) }
}

func (c realClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

func (realClock) AfterFunc(d time.Duration, f func()) Timer {
	return realTimer{time.AfterFunc(d, f)}
}

// afterFuncAt is AfterFunc for an instant: Real moves on by itself, so
// a timer armed for at.Sub(Now) is as exact as one reset to at.
func (realClock) afterFuncAt(at time.Time, f func()) Timer {
	return realTimer{time.AfterFunc(at.Sub(Real.Now()), f)}
}

func (realClock) NewTimer(d time.Duration) Timer { return realTimer{time.NewTimer(d)} }

func (realClock) NewTicker(d time.Duration) Ticker { return realTicker{time.NewTicker(d)} }

func (realClock) WithTimeout(parent context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(parent, d)
}

type realTimer struct{ t *time.Timer }

func (r realTimer) C() <-chan time.Time        { return r.t.C }
func (r realTimer) Stop() bool                 { return r.t.Stop() }
func (r realTimer) Reset(d time.Duration) bool { return r.t.Reset(d) }

// ResetAt resets the timer to t as Real reads it: Real's time moves on its
// own, by nanoseconds between the reading and the reset.
func (r realTimer) ResetAt(t time.Time) bool { return r.t.Reset(t.Sub(Real.Now())) }

type realTicker struct{ t *time.Ticker }

func (r realTicker) C() <-chan time.Time   { return r.t.C }
func (r realTicker) Stop()                 { r.t.Stop() }
func (r realTicker) Reset(d time.Duration) { r.t.Reset(d) }
