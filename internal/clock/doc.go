// Package clock is the single source of time for rxhystrix.
//
// Production code takes a [Clock] and uses [Real]; tests use a [Manual]
// clock whose [Manual.Advance] fires due timers and tickers synchronously,
// in time order, so that rolling windows, sleep windows and timeouts are
// tested without sleeping.
package clock
