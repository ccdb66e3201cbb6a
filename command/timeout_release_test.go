package command

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/breaker"
	"github.com/rxhystrix/rxhystrix/internal/timerlist"
	"github.com/rxhystrix/rxhystrix/observable"
)

// An execution that ends before its timeout takes its deadline out of the
// registry's timer lists, and a hedged call its wait for the next hedge:
// a deadline left there would hold the whole execution until it came
// due, a second per call with the default timeout, in every mode and
// isolation and whatever the outcome.
func TestEndedExecutionsLeaveNoDeadlineBehind(t *testing.T) {
	outcomes := []struct {
		name string
		cfg  Config
		run  func(context.Context, int) (string, error)
	}{
		{"a success", Config{}, succeedRun},
		{"a failure and its fallback", Config{}, failRun},
		{"a short-circuit", Config{Breaker: breaker.Config{ForceOpen: true}}, succeedRun},
		{"a hedged success", Config{Hedge: HedgeConfig{Delay: time.Second}}, succeedRun},
	}
	for _, oc := range outcomes {
		t.Run(oc.name, func(t *testing.T) {
			forEachModeAndIsolation(t, func(t *testing.T, h *harness, m execMode, iso Isolation) {
				cfg := oc.cfg
				cfg.Isolation = iso
				c := New("Deadlines", oc.run, WithRegistry(h.reg), WithConfig(cfg)).WithFallback(fallbackName)
				_, err := m.exec(context.Background(), c, 1)
				require.NoError(t, err)
				h.completion()
				assert.Zero(t, h.reg.timeouts.Waiting(), "a timeout left in the registry's lists")
				assert.Zero(t, timerlist.For(h.clock).Waiting(), "a hedge's wait left in the clock's lists")
			})
		})
	}

	// An ObservableCommand's first value stops its timeout; its end must
	// not leave it either.
	t.Run("an observable command", func(t *testing.T) {
		h := newHarness(t)
		c := NewObservable("Stream", func(ctx context.Context, n int) observable.Observable[int] {
			return observable.Just(1, 2, 3)
		}, WithRegistry(h.reg), WithConfig(Config{Timeout: time.Second}))
		got, err := c.ToObservable(context.Background(), 3).ToSlice(context.Background())
		require.NoError(t, err)
		assert.Equal(t, []int{1, 2, 3}, got)
		h.completion()
		assert.Zero(t, h.reg.timeouts.Waiting())
	})
}
