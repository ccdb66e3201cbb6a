package command

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// Run's context under a caller's context that can be cancelled, in every
// mode: at the timeout it is done with context.DeadlineExceeded, and
// context.Cause says so too, as under context.WithTimeout; when the
// caller cancels with a cause, it is done with context.Canceled, and
// context.Cause gives the caller's cause.
func TestRunContextUnderACancellableCaller(t *testing.T) {
	errGone := errors.New("client went away")
	for _, tc := range []struct {
		name      string
		end       func(h *harness, cancel context.CancelCauseFunc)
		err, want error
	}{
		{"timeout", func(h *harness, _ context.CancelCauseFunc) { h.clock.Advance(50 * time.Millisecond) },
			context.DeadlineExceeded, context.DeadlineExceeded},
		{"caller cancels", func(_ *harness, cancel context.CancelCauseFunc) { cancel(errGone) },
			context.Canceled, errGone},
	} {
		t.Run(tc.name, func(t *testing.T) {
			forEachModeAndIsolation(t, func(t *testing.T, h *harness, m execMode, iso Isolation) {
				g := newGate()
				defer g.release()
				c := New("GetUser", g.runLate, WithRegistry(h.reg), WithConfig(Config{Isolation: iso, Timeout: 50 * time.Millisecond}))
				callerCtx, cancel := context.WithCancelCause(context.Background())
				defer cancel(nil)
				call := goCall(func() (string, error) { return m.exec(callerCtx, c, 1) })
				runCtx := g.arrived(t)
				tc.end(h, cancel)
				awaitCall(t, call)
				recv(t, runCtx.Done(), "run's context to end")
				assert.ErrorIs(t, runCtx.Err(), tc.err)
				assert.ErrorIs(t, context.Cause(runCtx), tc.want)
				h.completion()
			})
		})
	}
}
