// Package clock is the time source of rxhystrix, for programs that test
// their own commands without sleeping.
//
// A registry reads time from a [Clock]: [Real] unless it is given another
// one. A [Manual] clock moves only when told to: [Manual.Advance] fires,
// synchronously and in the order of their due times, every timer that
// comes due, so that a test of a command's breaker, timeout or rolling
// window runs in microseconds and says exactly when things happen:
//
//	mc := clock.NewManual(time.Now())
//	reg := command.NewRegistry(command.WithClock(mc))
//	defer reg.Close()
//	// ... fail the command until its breaker opens ...
//	mc.Advance(5 * time.Second) // past the sleep window: the next call is the trial
//
// Everything a registry makes (its metrics, breakers, timeouts and pools)
// reads the registry's clock; metricsstream.NewRegistry and a breaker made
// on its own (breaker.WithClock) take one the same way.
//
// The rules of use: give one clock to everything that must agree on the
// time, and remember that a Manual clock never moves by itself: a test
// that waits for a timeout, a sleep window or a health snapshot moves it
// there with Advance, from the test's goroutine, once the command under
// test has armed what it waits for (Pending and BlockUntil tell).
package clock

import (
	"time"

	iclock "github.com/rxhystrix/rxhystrix/internal/clock"
)

// Clock is a source of time and timers: Now and Since, AfterFunc,
// NewTimer, NewTicker and WithTimeout, as package time and package
// context give them for the wall clock.
type Clock = iclock.Clock

// Timer is a timer of a Clock, as *time.Timer: C, Stop, Reset, and
// ResetAt, which re-arms it for a time rather than after a duration.
type Timer = iclock.Timer

// Ticker is a ticker of a Clock, as *time.Ticker: C, Stop and Reset.
type Ticker = iclock.Ticker

// Manual is a Clock that moves only when told to. Advance(d) and Set(t)
// move it, and fire what comes due on the way, in the order of the due
// times (ties in the order they were scheduled), with Now reading each
// one's due time while it fires; Pending reports how many timers and
// tickers are armed, and BlockUntil waits until at least n are, for a test
// that must wait for a goroutine to arm its timer. A Manual clock is safe
// for concurrent use.
type Manual = iclock.Manual

// Real is the wall clock.
var Real Clock = iclock.Real

// NewManual returns a Manual clock reading start.
func NewManual(start time.Time) *Manual { return iclock.NewManual(start) }
