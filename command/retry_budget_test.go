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

// The budget's share is Percent of the executions in flight, exactly for
// a whole number of them: 29 % of 100 is 29 places, 35 % of 180 is 63.
// Percent/100 first rounds 0.29 and 0.35 down in binary, and the product
// fell just short of the whole number, one place fewer than configured.
func TestRetryBudgetPercentIsExactForWholeShares(t *testing.T) {
	for _, tc := range []struct {
		percent  float64
		inFlight int
		want     int
	}{
		{29, 100, 29},
		{35, 180, 63},
		{58, 50, 29},
	} {
		h := newHarness(t)
		c := New("BudgetShare", succeedRun, WithRegistry(h.reg), WithConfig(Config{
			Retry: RetryConfig{MaxAttempts: 2, Budget: RetryBudget{Percent: tc.percent, MinConcurrency: 1}},
		}))
		for range tc.inFlight {
			c.k.metrics.MarkStartAt(h.reg.now())
		}
		granted := 0
		for granted < 1000 && c.k.budgetPermits() {
			granted++
		}
		assert.Equal(t, tc.want, granted, "%v %% of %d", tc.percent, tc.inFlight)
	}
}
