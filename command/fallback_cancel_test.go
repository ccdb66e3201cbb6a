package command

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/rxhystrix/rxhystrix/observable"
)

// The caller's context ending while the fallback runs ends every way of
// executing alike: CANCELLED after the failure, the context's error to the
// caller (as TestEarlyUnsubscribeDuringFallback has it for a
// subscription), never FALLBACK_FAILURE with the context's error as the
// fallback's.
func TestCallerLeavingDuringFallbackIsCancelledInEveryMode(t *testing.T) {
	forEachModeAndIsolation(t, func(t *testing.T, h *harness, m execMode, iso Isolation) {
		g := newGate()
		defer g.release()
		c := New("GetUser", failRun, WithRegistry(h.reg), WithConfig(Config{Isolation: iso})).WithFallback(func(ctx context.Context, id int, err error) (string, error) {
			return "late fallback", g.wait(ctx, true)
		})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		call := goCall(func() (string, error) { return m.exec(ctx, c, 1) })
		g.arrived(t)
		cancel()
		res := awaitCall(t, call)
		assert.ErrorIs(t, res.err, context.Canceled)
		var ce *Error
		assert.NotErrorAs(t, res.err, &ce, "the caller left: its context's error, not a fallback failure")
		assert.Equal(t, evs("FAILURE", "CANCELLED"), h.events())
		h.assertReleased("GetUser")
		g.release()
		h.noMoreCompletions()
	})
}

// First of an ObservableCommand whose caller leaves while the Observable
// fallback runs: CANCELLED and the caller's error, as through a
// subscription.
func TestObservableFirstCallerLeavingDuringFallbackIsCancelled(t *testing.T) {
	for _, iso := range bothIsolations {
		t.Run(iso.String(), func(t *testing.T) {
			h := newHarness(t)
			g := newGate()
			defer g.release()
			c := NewObservable("Stream", func(context.Context, int) observable.Observable[string] {
				return observable.Error[string](errBoom)
			}, WithRegistry(h.reg), WithConfig(Config{Isolation: iso, Timeout: -1})).WithFallback(func(ctx context.Context, _ int, _ error) (string, error) {
				return "late fallback", g.wait(ctx, true)
			})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			call := goCall(func() (string, error) { return c.ToObservable(ctx, 1).First(ctx) })
			g.arrived(t)
			cancel()
			res := awaitCall(t, call)
			assert.ErrorIs(t, res.err, context.Canceled)
			var ce *Error
			assert.NotErrorAs(t, res.err, &ce)
			assert.Equal(t, evs("FAILURE", "CANCELLED"), h.events())
			h.assertReleased("Stream")
			h.noMoreCompletions()
		})
	}
}
