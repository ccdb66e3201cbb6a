package command

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// The budget grants Percent of the key's executions in flight, and never
// fewer than MinConcurrency; zero fields take the defaults, 20 % and 3.
func TestRetryBudgetGrantsAPercentOfTheExecutionsInFlight(t *testing.T) {
	for _, tc := range []struct {
		name     string
		budget   RetryBudget
		inFlight int
		want     int
	}{
		{"the floor, nothing in flight", RetryBudget{Percent: 50, MinConcurrency: 2}, 0, 2},
		{"the floor, above half of three", RetryBudget{Percent: 50, MinConcurrency: 2}, 3, 2},
		{"half of ten", RetryBudget{Percent: 50, MinConcurrency: 2}, 10, 5},
		{"the defaults: 3", RetryBudget{}, 10, 3},
		{"the defaults: 20 % of 30", RetryBudget{}, 30, 6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			c := New("Budget", succeedRun, WithRegistry(h.reg), WithConfig(Config{
				Retry: RetryConfig{MaxAttempts: 2, Budget: tc.budget},
			}))
			for range tc.inFlight {
				c.k.metrics.MarkStartAt(h.reg.now())
			}
			granted := 0
			for granted < 100 && c.k.budgetPermits() {
				granted++
			}
			assert.Equal(t, tc.want, granted)
		})
	}
}
