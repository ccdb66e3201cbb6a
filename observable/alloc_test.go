package observable

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The allocation budget of the hottest paths. Allocation counts do not
// depend on the machine, so, unlike timings, they can be tested.
func TestAllocationBudget(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name   string
		budget float64
		f      func()
	}{
		{"Defer+First", 1, func() {
			_, _ = Defer(func() Observable[int] { return Just(1) }).First(ctx)
		}},
		{"Just+Map+Filter+ToSlice", 7, func() {
			_, _ = Map(Just(1, 2, 3, 4, 5, 6, 7, 8), func(v int) int { return v * 3 }).
				Filter(func(v int) bool { return v%2 == 0 }).ToSlice(ctx)
		}},
		{"FromFunc+First", 0, func() { _, _ = FromFunc(answer).First(ctx) }},
		{"Merge+ToSlice", 3, func() { _, _ = Merge(Just(1), Just(2)).ToSlice(ctx) }},
		{"Zip2+ToSlice", 5, func() {
			_, _ = Zip2(Just(1, 2), Just(3, 4), func(a, b int) int { return a + b }).ToSlice(ctx)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.LessOrEqual(t, testing.AllocsPerRun(100, c.f), c.budget)
		})
	}
}

func answer(context.Context) (int, error) { return 42, nil }
