package command

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// notAgain is a downstream's failure that says not to try again, as a
// server's pushback does (observable.Pushback).
type notAgain struct{}

func (notAgain) Error() string                     { return "overloaded: do not try again" }
func (notAgain) RetryAfter() (time.Duration, bool) { return -1, true }

// A hedge that fails with a pushback not to try again starts no more
// hedges, though OnError would start one and MaxHedges allows it; the
// first execution still answers, and the hedge's fallback does not.
func TestHedgePushbackStopsTheHedges(t *testing.T) {
	forEachModeAndIsolation(t, func(t *testing.T, _ *harness, m execMode, iso Isolation) {
		h, spy := newSpiedHarness(t)
		g := newGate()
		defer g.release()
		var calls atomic.Int32
		c := New("Pushback", func(ctx context.Context, id int) (string, error) {
			if calls.Add(1) == 1 {
				return "first", g.wait(ctx, true)
			}
			return "", notAgain{}
		}, WithRegistry(h.reg), WithConfig(Config{
			Isolation: iso,
			Timeout:   -1,
			Hedge:     HedgeConfig{MaxHedges: 3, Delay: 50 * time.Millisecond, OnError: true},
		})).WithFallback(fallbackName)
		call := goCall(func() (string, error) { return m.exec(context.Background(), c, 1) })
		g.arrived(t)
		assert.Equal(t, 50*time.Millisecond, recv(t, spy.armed, "the hedge's timer"))
		h.clock.Advance(50 * time.Millisecond)
		assert.Equal(t, evs("FAILURE", "HEDGED"), h.events(), "the hedge failed, and its fallback left the call to the first")
		h.clock.Advance(time.Hour)
		assert.Equal(t, int32(2), calls.Load(), "no hedge after the pushback")

		g.release()
		res := awaitCall(t, call)
		require.NoError(t, res.err)
		assert.Equal(t, "first", res.v)
		assert.Equal(t, evs("SUCCESS"), h.events())
		h.noMoreCompletions()
	})
}
