// Package startgrace holds how long work that a Future of package
// observable hands over waits for a waiter to take it over before a
// goroutine is given to it, so that the tests of the packages built on
// observable can hold those starts, as observable's own tests do, and
// show who starts what rather than race the starter.
package startgrace

import (
	"sync/atomic"
	"time"
)

// Default is the grace: far longer than a Get that follows its Queue takes
// to come, and far shorter than anything worth a goroutine takes to run.
const Default = 10 * time.Microsecond

var grace atomic.Int64

func init() { grace.Store(int64(Default)) }

// Get returns the grace now in force. The starter reads it as it waits, so
// a change applies to work already waiting.
func Get() time.Duration { return time.Duration(grace.Load()) }

// Set makes d the grace and returns the function that puts Default back,
// for a test's Cleanup. Handed-over work then waits until a waiter takes
// it over or starts it, or d has passed.
func Set(d time.Duration) (restore func()) {
	grace.Store(int64(d))
	return func() { grace.Store(int64(Default)) }
}

// Hold is Set with an hour: nothing handed over starts unless a waiter
// takes it over or starts it, until restore.
func Hold() (restore func()) { return Set(time.Hour) }
