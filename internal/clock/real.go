package clock

import (
	"context"
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
var (
	monoAtStart      = nanotime()
	wallAtStart      = time.Now()
	wallNanosAtStart = wallAtStart.UnixNano()
)

//go:linkname nanotime runtime.nanotime
func nanotime() int64

func (realClock) Now() time.Time {
	return wallAtStart.Add(time.Duration(nanotime() - monoAtStart))
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
