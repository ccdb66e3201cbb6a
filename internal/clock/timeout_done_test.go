package clock

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A context.WithTimeout is done once its parent's cancel returns: its
// Done channel is closed by then, not only its Err set. So must a Manual
// WithTimeout context's be (Manual.WithTimeout: "as context.WithTimeout
// does on the real clock"), and a context derived from it after that
// must be done at once too.
func TestManualWithTimeoutDoneOnceItsParentIsCancelled(t *testing.T) {
	m := NewManual(start)
	for i := range 200 {
		parent, cancelParent := context.WithCancel(context.Background())
		ctx, cancel := m.WithTimeout(parent, time.Hour)
		cancelParent()
		select {
		case <-ctx.Done():
		default:
			cancel()
			t.Fatalf("round %d: the parent was cancelled, but Done is open", i)
		}
		derived, cancelDerived := context.WithCancel(ctx)
		err := derived.Err()
		cancelDerived()
		cancel()
		require.ErrorIs(t, err, context.Canceled, "round %d: a context derived after the end is not done", i)
	}
}

// A context asked for its Err may be asked under a lock that a function
// registered with its AfterFunc takes (a command's subscription asks its
// caller's context under the lock its leave takes; package command's own
// contexts run those functions on a goroutine of their own when they
// find their end while asked). A Manual WithTimeout context whose parent
// has been cancelled must not run them on the goroutine that asks its Err
// or Done, which would deadlock on that lock.
func TestManualWithTimeoutErrRunsNoAfterFuncOfTheAsker(t *testing.T) {
	m := NewManual(start)
	for i := range 200 {
		parent, cancelParent := context.WithCancel(context.Background())
		ctx, cancel := m.WithTimeout(parent, time.Hour)
		ran := make(chan bool, 1)
		ctx.(interface{ AfterFunc(func()) func() bool }).AfterFunc(func() {
			buf := make([]byte, 64<<10)
			ran <- strings.Contains(string(buf[:runtime.Stack(buf, false)]), "TestManualWithTimeoutErrRunsNoAfterFuncOfTheAsker(") // the test's own frame, not this function's
		})
		cancelParent()
		err := ctx.Err() // the asker holds the lock the function takes
		inAsker := <-ran
		cancel()
		require.ErrorIs(t, err, context.Canceled)
		require.False(t, inAsker, "round %d: Err ran an AfterFunc function on the asker's goroutine", i)
	}
}

// oneProcessor runs the test on one processor, so that the goroutine
// package context starts to tell a watcher of a cancelled context (a
// context.AfterFunc function) runs only once the test's goroutine waits:
// what the test checks is what holds before it has run.
func oneProcessor(t *testing.T) {
	t.Helper()
	prev := runtime.GOMAXPROCS(1)
	t.Cleanup(func() { runtime.GOMAXPROCS(prev) })
}

// A context.WithTimeout under a context.WithTimeout under a cancelled
// context is done once that context's cancel returns: package context
// cancels the whole line of descendants synchronously. So must a Manual
// WithTimeout context under another be, when its grandparent is
// cancelled (Err's doc: "as with context.WithTimeout, c's Err is not nil
// once its parent's cancel has returned").
func TestManualWithTimeoutErrOnceItsGrandparentIsCancelled(t *testing.T) {
	oneProcessor(t)
	m := NewManual(start)
	for i := range 200 {
		grand, cancelGrand := context.WithCancel(context.Background())
		parent, cancelParent := m.WithTimeout(grand, time.Hour)
		ctx, cancel := m.WithTimeout(parent, time.Hour)
		cancelGrand()
		err := ctx.Err()
		done := false
		select {
		case <-ctx.Done():
			done = true
		default:
		}
		cancel()
		cancelParent()
		require.ErrorIs(t, err, context.Canceled, "round %d: the grandparent was cancelled, but Err is nil", i)
		require.True(t, done, "round %d: the grandparent was cancelled, but Done is open", i)
	}
}

// A context.WithTimeout whose parent has been cancelled stays Canceled:
// its deadline, reached after, changes nothing. A Manual WithTimeout
// context whose parent was cancelled before an Advance reached its
// deadline must not end with DeadlineExceeded (and a Cause of Canceled)
// because nobody asked its Err in between.
func TestManualWithTimeoutParentCancelledBeforeTheDeadline(t *testing.T) {
	oneProcessor(t)
	for i := range 200 {
		m := NewManual(start)
		parent, cancelParent := context.WithCancel(context.Background())
		ctx, cancel := m.WithTimeout(parent, time.Second)
		cancelParent()
		m.Advance(time.Second)
		err, cause := ctx.Err(), context.Cause(ctx)
		cancel()
		require.ErrorIs(t, err, context.Canceled, "round %d: the parent was cancelled before the deadline", i)
		require.ErrorIs(t, cause, context.Canceled, "round %d", i)
	}
}
