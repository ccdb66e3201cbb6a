package peers

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"
)

// A budget is one line of rxhystrix's performance budget: row, passing,
// costs at most limit times base.
//
// BenchmarkCircuits times each row on its own, one after the other, and a
// shared machine's speed drifts between them (on the 2-core machine of
// BENCHMARKS.md, by a third within a minute as the hypervisor takes
// time); a ratio of two of its rows then says as much about that drift as
// about the rows. BenchmarkBudgets times the two rows of a budget in
// turns of about ten milliseconds, the order of each pair of turns
// alternating, and reports the median of the pairs' ratios: both rows
// see the same machine, turn by turn.
type budget struct {
	row, base string
	limit     float64
	// handOff makes the base's call on a goroutine of its own, waited
	// for: the base is then that call plus one goroutine hand-off.
	handOff bool
}

// budgets are the budgets of BENCHMARKS.md, in the order of its notes.
var budgets = []budget{
	// One engine: every way of executing a command, against Execute.
	{row: "rxhystrix-semaphore", base: "cep21-minimal", limit: 1},
	{row: "rxhystrix-semaphore-toobservable", base: "rxhystrix-semaphore", limit: 1.5},
	{row: "rxhystrix-semaphore-queue", base: "rxhystrix-semaphore", limit: 3},
	{row: "rxhystrix-semaphore-observe", base: "rxhystrix-semaphore", limit: 3},
	{row: "rxhystrix-semaphore-zip2", base: "rxhystrix-semaphore", limit: 3},
	{row: "rxhystrix-semaphore-observable-command", base: "rxhystrix-semaphore", limit: 2.5},
	{row: "rxhystrix-pool-toobservable", base: "rxhystrix-pool", limit: 1.5},
	{row: "rxhystrix-pool-queue", base: "rxhystrix-pool", limit: 1.5},
	{row: "rxhystrix-pool-observe", base: "rxhystrix-pool", limit: 1.5},
	{row: "rxhystrix-pool-zip2", base: "rxhystrix-pool", limit: 1.5},
	{row: "rxhystrix-pool-observable-command", base: "rxhystrix-pool", limit: 1.5},
	{row: "rxhystrix-semaphore-timeout-queue", base: "rxhystrix-semaphore-timeout", limit: 1, handOff: true},
	{row: "rxhystrix-semaphore-timeout-observe", base: "rxhystrix-semaphore-timeout", limit: 1, handOff: true},
	// Retry, hedging and rate limiting on a passing call.
	{row: "rxhystrix-semaphore-retry", base: "rxhystrix-semaphore", limit: 1.2},
	{row: "rxhystrix-semaphore-hedge", base: "rxhystrix-semaphore", limit: 1.5},
	{row: "rxhystrix-semaphore-ratelimit", base: "rxhystrix-semaphore", limit: 1.3},
	{row: "rxhystrix-pool-retry", base: "rxhystrix-pool", limit: 1.2},
	{row: "rxhystrix-pool-hedge", base: "rxhystrix-pool", limit: 1.5},
	{row: "rxhystrix-pool-ratelimit", base: "rxhystrix-pool", limit: 1.3},
	{row: "rxhystrix-semaphore-retry", base: "failsafe-retry", limit: 0.5},
	{row: "rxhystrix-semaphore-hedge", base: "failsafe-hedge", limit: 0.5},
	{row: "rxhystrix-semaphore-ratelimit", base: "failsafe-ratelimit", limit: 0.5},
	// Adaptive limits, against the same isolation's fixed limit.
	{row: "rxhystrix-semaphore-vegas", base: "rxhystrix-semaphore", limit: 1.2},
	{row: "rxhystrix-semaphore-gradient2", base: "rxhystrix-semaphore", limit: 1.2},
	{row: "rxhystrix-semaphore-aimd", base: "rxhystrix-semaphore", limit: 1.2},
	{row: "rxhystrix-pool-vegas", base: "rxhystrix-pool", limit: 1.2},
	{row: "rxhystrix-pool-no-timeout-vegas", base: "rxhystrix-pool-no-timeout", limit: 1.2},
}

// name is the budget's benchmark name: row÷base, with +handoff on a
// base that hands its call off.
func (g budget) name() string {
	base := g.base
	if g.handOff {
		base += "+handoff"
	}
	return g.row + "÷" + base
}

// Turns of a budget's measurement.
const (
	budgetTurn  = 10 * time.Millisecond // about how long each turn runs
	budgetPairs = 100                   // pairs of turns, one of each row
)

// BenchmarkBudgets measures every budget with 1 and with 75 callers, as
// the budget type says, and reports for each: the row's and the base's
// ns/op (medians of their turns), the median of the pairs' ratios
// (×base) and their first and third quartiles (×base-q1, ×base-q3), and
// the limit (limit×). b.N is ignored: a budget runs its turns once; run
// it with -benchtime=1x.
func BenchmarkBudgets(b *testing.B) {
	rows := rowsByName()
	for _, callers := range callerCounts {
		b.Run(fmt.Sprintf("c=%d", callers), func(b *testing.B) {
			for _, g := range budgets {
				b.Run(g.name(), func(b *testing.B) {
					measured, ok1 := rows[g.row]
					base, ok2 := rows[g.base]
					if !ok1 || !ok2 {
						b.Fatalf("budget %s names a row that does not exist", g.name())
					}
					rowCall := measured.prepare(b, callers, passes)
					baseCall := base.prepare(b, callers, passes)
					if g.handOff {
						baseCall = handedOff(baseCall)
					}
					rowNs, baseNs, ratios := paired(b, callers, rowCall, baseCall)
					b.ReportMetric(rowNs, "ns/op")
					b.ReportMetric(baseNs, "base-ns/op")
					b.ReportMetric(quantile(ratios, 0.5), "×base")
					b.ReportMetric(quantile(ratios, 0.25), "×base-q1")
					b.ReportMetric(quantile(ratios, 0.75), "×base-q3")
					b.ReportMetric(g.limit, "limit×")
				})
			}
		})
	}
}

// rowsByName returns every row of BenchmarkCircuits by its name.
func rowsByName() map[string]row {
	rows := map[string]row{}
	for _, r := range append(peerRows(), ourRows...) {
		rows[r.name] = r
	}
	return rows
}

// handedOff returns call made on a goroutine of its own and waited for.
func handedOff(call func() error) func() error {
	return func() error {
		done := make(chan error, 1)
		go func() { done <- call() }()
		return <-done
	}
}

// paired times row and base in budgetPairs pairs of turns, alternating
// which goes first, and returns the medians of their ns/op over the turns
// and the pairs' ratios row/base, sorted.
func paired(b *testing.B, callers int, row, base func() error) (rowNs, baseNs float64, ratios []float64) {
	rowN := turnSize(b, callers, row)
	baseN := turnSize(b, callers, base)
	rows := make([]float64, budgetPairs)
	bases := make([]float64, budgetPairs)
	ratios = make([]float64, budgetPairs)
	for i := range budgetPairs {
		if i%2 == 0 {
			bases[i] = turn(b, callers, baseN, base)
			rows[i] = turn(b, callers, rowN, row)
		} else {
			rows[i] = turn(b, callers, rowN, row)
			bases[i] = turn(b, callers, baseN, base)
		}
		ratios[i] = rows[i] / bases[i]
	}
	slices.Sort(ratios)
	return median(rows), median(bases), ratios
}

// turnSize warms call up and returns how many calls take about
// budgetTurn.
func turnSize(b *testing.B, callers int, call func() error) int {
	n := 64 * callers
	for {
		ns := turn(b, callers, n, call) * float64(n)
		if ns >= float64(budgetTurn)/4 {
			return max(callers, int(float64(n)*float64(budgetTurn)/ns))
		}
		n *= 4
	}
}

// turn makes n calls of passing work split across callers goroutines
// and returns their ns/op. It fails b if a call's result is wrong, as
// measure does.
func turn(b *testing.B, callers, n int, call func() error) float64 {
	var (
		t  tally
		wg sync.WaitGroup
	)
	start := time.Now()
	for i := range callers {
		wg.Go(func() { t.callN(share(n, callers, i), true, call, nil) })
	}
	wg.Wait()
	elapsed := time.Since(start)
	t.check(b, n, true)
	return float64(elapsed.Nanoseconds()) / float64(n)
}

// median returns the median of vs, which it sorts.
func median(vs []float64) float64 {
	slices.Sort(vs)
	return quantile(vs, 0.5)
}

// quantile returns the q-quantile of sorted, interpolated between its two
// nearest values.
func quantile(sorted []float64, q float64) float64 {
	at := q * float64(len(sorted)-1)
	i := int(at)
	if i+1 >= len(sorted) {
		return sorted[len(sorted)-1]
	}
	return sorted[i] + (at-float64(i))*(sorted[i+1]-sorted[i])
}
