package command

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The attempts of one hedged call serve the next (callHedged): calls made
// one after another, passing, failing, hedged, each record only their own
// events, and a run that keeps its context finds it ended after its call,
// never live again in a later one.
func TestHedgedCallsOneAfterAnotherEachRecordTheirOwn(t *testing.T) {
	for _, iso := range bothIsolations {
		t.Run(iso.String(), func(t *testing.T) {
			h := newHarness(t)
			var mode atomic.Int32 // 0 passes, 1 fails, 2: the first attempt hangs until cancelled
			var calls atomic.Int32
			var kept []context.Context
			c := New("Reused", func(ctx context.Context, id int) (string, error) {
				n := calls.Add(1)
				switch mode.Load() {
				case 1:
					return "", errBoom
				case 2:
					if n == 1 {
						<-ctx.Done()
						return "", ctx.Err()
					}
					return "hedge", nil
				}
				kept = append(kept, ctx)
				return userName(id), nil
			}, WithRegistry(h.reg), WithConfig(Config{
				Isolation: iso,
				Timeout:   -1,
				Hedge:     HedgeConfig{MaxHedges: 1, Delay: 50 * time.Millisecond},
			})).WithFallback(fallbackName)

			pass := func() {
				t.Helper()
				calls.Store(0)
				v, err := c.Execute(context.Background(), 1)
				require.NoError(t, err)
				assert.Equal(t, userName(1), v)
				assert.Equal(t, evs("SUCCESS"), h.events())
			}
			pass()
			mode.Store(1)
			v, err := c.Execute(context.Background(), 1)
			require.NoError(t, err)
			assert.Equal(t, "anonymous", v)
			assert.Equal(t, evs("FAILURE", "FALLBACK_SUCCESS"), h.events())
			mode.Store(0)
			pass()

			mode.Store(2)
			calls.Store(0)
			call := goCall(func() (string, error) { return c.Execute(context.Background(), 1) })
			waitFor(t, "the first run", func() bool { return calls.Load() == 1 })
			h.clock.Advance(50 * time.Millisecond)
			res := awaitCall(t, call)
			require.NoError(t, res.err)
			assert.Equal(t, "hedge", res.v)
			assert.ElementsMatch(t, [][]string{evs("SUCCESS", "HEDGED"), evs("CANCELLED")}, [][]string{h.events(), h.events()})
			mode.Store(0)
			pass()
			h.noMoreCompletions()

			require.Len(t, kept, 3)
			for i, ctx := range kept {
				assert.ErrorIs(t, ctx.Err(), context.Canceled, "call %d's context stays ended", i)
			}
			assert.NotSame(t, kept[0], kept[1])
			assert.NotSame(t, kept[1], kept[2])
		})
	}
}
