package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const budgetSample = `pkg: github.com/rxhystrix/rxhystrix/bench/peers
BenchmarkBudgets/c=1/rxhystrix-semaphore-toobservable÷rxhystrix-semaphore-2 	1	 230.0 ns/op	 160.0 base-ns/op	 1.44 ×base	 1.40 ×base-q1	 1.47 ×base-q3	 1.5 limit×
BenchmarkBudgets/c=1/rxhystrix-semaphore-hedge÷rxhystrix-semaphore-2 	1	 400.0 ns/op	 160.0 base-ns/op	 2.50 ×base	 1.5 limit×
BenchmarkBudgets/c=1/rxhystrix-semaphore-timeout-queue÷rxhystrix-semaphore-timeout+handoff-2 	1	 900.0 ns/op	 1000 base-ns/op	 0.90 ×base	 1 limit×
BenchmarkBudgets/c=1/rxhystrix-semaphore-zip2÷rxhystrix-semaphore-2 	1	 450.0 ns/op	 150.0 base-ns/op	 3.0004 ×base	 3 limit×
`

func TestBudgetTable(t *testing.T) {
	in, err := Parse(strings.NewReader(budgetSample), 2)
	require.NoError(t, err)
	tables := Tables(in.Benchmarks, Classifier{OursPrefix: "rxhystrix"})
	require.Len(t, tables, 1)
	assert.True(t, tables[0].IsBudget())

	md := written(t, Report{Tables: tables})
	assert.Contains(t, md, "### Budgets/c=1\n\n| budget | ns/op | base ns/op | × base (middle half of the pairs) | limit | met |")
	assert.Contains(t, md, "| rxhystrix-semaphore-toobservable ÷ rxhystrix-semaphore | 230 | 160 | 1.44× (1.40×–1.47×) | 1.50× | yes |")
	assert.Contains(t, md, "| rxhystrix-semaphore-hedge ÷ rxhystrix-semaphore | 400 | 160 | 2.50× | 1.50× | **no** |")
	assert.Contains(t, md, "| rxhystrix-semaphore-timeout-queue ÷ rxhystrix-semaphore-timeout+handoff | 900 | 1000 | 0.90× | 1.00× | yes |")
	assert.Contains(t, md, "| rxhystrix-semaphore-zip2 ÷ rxhystrix-semaphore | 450 | 150 | 3.000× | 3.00× | **no** |",
		"a ratio that rounds to its limit shows the digit that decides")
	assert.NotContains(t, md, "best peer", "a budget table has no peer columns")
}

func TestCircuitsTableIsNoBudget(t *testing.T) {
	for _, table := range Tables(parseSample(t).Benchmarks, Classifier{}) {
		assert.False(t, table.IsBudget(), table.Heading())
	}
}
