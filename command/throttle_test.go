package command

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/breaker"
	"github.com/rxhystrix/rxhystrix/metricsstream"
)

// evenDraws returns a breaker.WithRand function that walks 0, 1/n, ...,
// (n−1)/n and starts again: n draws refuse exactly ⌈p·n⌉ executions of
// a breaker throttling with probability p.
func evenDraws(n int) func() float64 {
	var i atomic.Int64
	return func() float64 { return float64((i.Add(1)-1)%int64(n)) / float64(n) }
}

// throttleBelowHalf throttles below a 50% success rate and trips only
// when every execution fails.
var throttleBelowHalf = breaker.Config{
	RequestVolumeThreshold:    10,
	ErrorThresholdPercentage:  100,
	ThrottleSuccessPercentage: 50,
}

// A command whose breaker throttles refuses a share of its executions,
// in every way of executing it: each refusal is SHORT_CIRCUITED and
// answered by the fallback, while the breaker stays closed and the
// command's status tells the share.
func TestCommandThrottlesBelowItsSuccessRate(t *testing.T) {
	for _, iso := range bothIsolations {
		for _, m := range execModes {
			t.Run(iso.String()+"/"+m.name, func(t *testing.T) {
				h := newHarness(t, WithBreakerOptions(breaker.WithRand(evenDraws(100))))
				c := New("GetUser", func(ctx context.Context, id int) (string, error) {
					if id < 0 {
						return "", errBoom
					}
					return "user", nil
				}, WithRegistry(h.reg), WithConfig(Config{Isolation: iso, Breaker: throttleBelowHalf, Timeout: -1})).
					WithFallback(func(ctx context.Context, id int, err error) (string, error) { return "fallback", nil })
				ctx := context.Background()
				for i := range 10 { // 3 of 10 succeed: p = (10 − 3/0.5)/11
					id := 1
					if i >= 3 {
						id = -1
					}
					_, _ = m.exec(ctx, c, id)
					h.completion()
				}
				h.clock.Advance(snapshotInterval(h.reg, "GetUser"))
				p := 4.0 / 11
				require.InDelta(t, p, h.reg.Breaker("GetUser").ThrottleProbability(), 1e-9)

				refused := 0
				for range 100 {
					v, err := m.exec(ctx, c, 1)
					require.NoError(t, err)
					events := h.events()
					if v == "fallback" {
						refused++
						assert.Equal(t, []string{"SHORT_CIRCUITED", "FALLBACK_SUCCESS"}, events)
					} else {
						assert.Equal(t, "user", v)
						assert.Equal(t, []string{"SUCCESS"}, events)
					}
				}
				assert.Equal(t, 37, refused, "⌈p·100⌉ of 100 evenly spread draws")

				st := h.state("GetUser").CommandStatus()
				assert.Equal(t, metricsstream.CircuitClosed, st.CircuitBreakerState)
				assert.False(t, st.CircuitBreakerOpen)
				assert.InDelta(t, p, st.CircuitBreakerThrottle, 1e-9)
				assert.True(t, st.Properties.Throttles())
				assert.Equal(t, 50, st.Properties.ThrottleSuccessPercentage)
				assert.Equal(t, breaker.DefaultMaxThrottlePercentage, st.Properties.MaxThrottlePercentage)
				assert.Equal(t, breaker.DefaultThrottleAggression, st.Properties.ThrottleAggression)
			})
		}
	}
}

func TestWithBreakerOptionsRefusesNil(t *testing.T) {
	assert.PanicsWithValue(t, "command: WithBreakerOptions with a nil option", func() {
		WithBreakerOptions(breaker.WithRand(evenDraws(2)), nil)
	})
}
