package command

import (
	"time"

	"github.com/rxhystrix/rxhystrix/metricsstream"
)

// budgetPermits reports whether the key's retry budget allows one more
// retry or hedge in flight, as Envoy's retry budget: at most
// Config.Retry.Budget.Percent of the key's executions in flight, and
// always Budget.MinConcurrency. A refusal is recorded
// RETRY_BUDGET_EXHAUSTED.
func (k *keyState) budgetPermits() bool {
	b := k.config.Load().Retry.Budget
	pct, floor := b.Percent, int64(b.MinConcurrency)
	if pct == 0 {
		pct = DefaultRetryBudgetPercent
	}
	if floor == 0 {
		floor = DefaultRetryBudgetMinConcurrency
	}
	allowed := max(floor, int64(pct/100*float64(k.metrics.ConcurrentExecutions())))
	if k.retrying.Load() < allowed {
		return true
	}
	k.recordBudgetExhausted()
	return false
}

// recordBudgetExhausted records RETRY_BUDGET_EXHAUSTED in a Completion of
// its own, of no execution: no latency, no health, no concurrency.
func (k *keyState) recordBudgetExhausted() {
	c := metricsstream.Completion{
		CommandKey:       k.key,
		GroupKey:         k.config.Load().Group,
		ExecutionLatency: -1,
		TotalLatency:     -1,
		End:              time.Unix(0, k.registry.now()),
	}
	c.Events[metricsstream.BudgetExhausted] = 1
	k.markAlone(&c)
}

// markAlone publishes c, the Completion of no execution (a cache hit, a
// refused retry), to the metrics and to the registry's onCompletion.
func (k *keyState) markAlone(c *metricsstream.Completion) {
	k.metrics.MarkCompletion(c)
	if f := k.registry.onCompletion; f != nil {
		f(c)
	}
}
