package command

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// Run's context at the timeout, under a caller's context that can be
// cancelled but is not: done with context.DeadlineExceeded, and
// context.Cause says so too, as under context.WithTimeout, in every mode.
func TestRunContextCauseAtTheTimeoutUnderACancellableCaller(t *testing.T) {
	forEachModeAndIsolation(t, func(t *testing.T, h *harness, m execMode, iso Isolation) {
		g := newGate()
		defer g.release()
		c := New("GetUser", func(ctx context.Context, id int) (string, error) {
			return "late", g.wait(ctx, true)
		}, WithRegistry(h.reg), WithConfig(Config{Isolation: iso, Timeout: 50 * time.Millisecond}))
		callerCtx, cancel := context.WithCancelCause(context.Background())
		defer cancel(nil)
		call := goCall(func() (string, error) { return m.exec(callerCtx, c, 1) })
		runCtx := g.arrived(t)
		h.clock.Advance(50 * time.Millisecond)
		awaitCall(t, call)
		recv(t, runCtx.Done(), "run's context to end at the timeout")
		assert.ErrorIs(t, runCtx.Err(), context.DeadlineExceeded)
		assert.ErrorIs(t, context.Cause(runCtx), context.DeadlineExceeded)
		h.completion()
	})
}

// Run's context when the caller cancels its context with a cause: done,
// and context.Cause gives the caller's cause.
func TestRunContextCauseWhenTheCallerCancels(t *testing.T) {
	forEachModeAndIsolation(t, func(t *testing.T, h *harness, m execMode, iso Isolation) {
		g := newGate()
		defer g.release()
		c := New("GetUser", func(ctx context.Context, id int) (string, error) {
			return "late", g.wait(ctx, true)
		}, WithRegistry(h.reg), WithConfig(Config{Isolation: iso, Timeout: 50 * time.Millisecond}))
		callerCtx, cancel := context.WithCancelCause(context.Background())
		errGone := errors.New("client went away")
		call := goCall(func() (string, error) { return m.exec(callerCtx, c, 1) })
		runCtx := g.arrived(t)
		cancel(errGone)
		awaitCall(t, call)
		recv(t, runCtx.Done(), "run's context to end with the caller's")
		assert.ErrorIs(t, runCtx.Err(), context.Canceled)
		assert.ErrorIs(t, context.Cause(runCtx), errGone)
		h.completion()
	})
}
