package command

import (
	"context"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/rxhystrix/rxhystrix/metricsstream"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// startCounter counts the executions that began.
type startCounter struct {
	NoOpHook
	n atomic.Int64
}

func (s *startCounter) Start(string) { s.n.Add(1) }

// Callers whose contexts end at random points of their executions, in
// every mode and both isolations: every execution that began ends exactly
// once, with one Completion and every permit back.
func TestCancellationStormEndsEveryExecutionOnce(t *testing.T) {
	forEachModeAndIsolation(t, func(t *testing.T, h *harness, m execMode, iso Isolation) {
		starts := &startCounter{}
		h.reg.AddKeyHook("storm", starts)
		var completions atomic.Int64
		h.reg.onCompletion = func(c *metricsstream.Completion) { completions.Add(1) }
		c := New("storm", func(ctx context.Context, n int) (string, error) {
			if n%3 == 0 {
				<-ctx.Done()
				return "", ctx.Err()
			}
			return userName(n), nil
		}, WithRegistry(h.reg), WithConfig(Config{Isolation: iso, Timeout: -1, MaxConcurrentRequests: 1 << 20})).WithFallback(fallbackName)
		if iso == PoolIsolation {
			require.NoError(t, h.reg.ConfigurePool("storm", PoolConfig{CoreSize: 64, MaxQueueSize: 64, QueueSizeRejectionThreshold: 64}))
		}
		const callers, calls = 8, 150
		var wg sync.WaitGroup
		for range callers {
			wg.Go(func() {
				for i := range calls {
					ctx, cancel := context.WithCancel(context.Background())
					go func() {
						for range rand.IntN(4) {
							runtime.Gosched()
						}
						cancel()
					}()
					_, _ = m.exec(ctx, c, i)
					cancel()
				}
			})
		}
		wg.Wait()
		// An execution handed over by Queue or Observe may begin after its
		// caller has left.
		waitFor(t, "a Completion for every execution that began", func() bool {
			return !handedOverWorkPending() && completions.Load() == starts.n.Load()
		})
		assert.Equal(t, starts.n.Load(), completions.Load())
		h.assertReleased("storm")
		waitFor(t, "the pool's workers to end", func() bool { return !poolWorkerRunning() })
	})
}
