package command

import (
	"time"

	"github.com/rxhystrix/rxhystrix/metricsstream"
)

// budgetPermits takes a place in the key's retry budget for one more
// retry or hedge, if the budget allows it, as Envoy's retry budget: at
// most Config.Retry.Budget.Percent of the key's executions in flight,
// and always Budget.MinConcurrency. A refusal is recorded
// RETRY_BUDGET_EXHAUSTED.
//
// The place is taken when the retry is granted, not when it begins, as
// Envoy counts a retry from its decision: a retry waiting out its backoff
// holds one, so that calls failing together, as they do when a
// downstream goes down, are not all granted a retry before any of them
// began. The retry's or hedge's execution gives it back when it ends
// (attemptInfo.ended), and the call when the retry never begins
// (attemptRounds.giveBackGrant). A compare-and-swap takes it, so that
// callers deciding at once cannot pass the budget together.
func (k *keyState) budgetPermits() bool {
	b := k.config.Load().Retry.Budget
	pct, floor := b.Percent, int64(b.MinConcurrency)
	if pct == 0 {
		pct = DefaultRetryBudgetPercent
	}
	if floor == 0 {
		floor = DefaultRetryBudgetMinConcurrency
	}
	// Percent times the count, then over 100: pct/100 first is inexact in
	// binary (0.29 is a little less), and its product fell just short of
	// a whole share (28 places for 29 % of 100).
	allowed := max(floor, int64(pct*float64(k.metrics.ConcurrentExecutions())/100))
	for {
		n := k.retrying.Load()
		if n >= allowed {
			k.recordBudgetExhausted()
			return false
		}
		if k.retrying.CompareAndSwap(n, n+1) {
			return true
		}
	}
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
	// The notifiers hear of every event, this one too, before its
	// Completion is published (EventNotifier).
	if global, local := k.registry.plugins.p.Load(), k.plugins.p.Load(); global != nil || local != nil {
		notify(global, local, k.key, metricsstream.BudgetExhausted)
	}
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
