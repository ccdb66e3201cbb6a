package metricsstream

import "sync/atomic"

// MaxHealthWindowCalls is the largest Config.HealthWindowCalls: a
// window of calls holds a word for each.
const MaxHealthWindowCalls = 100_000

// callWindow holds the outcomes of the latest executions that count in
// health, however old (Config.HealthWindowCalls): resilience4j's
// count-based sliding window. Each execution takes the next slot with one
// add to a shared counter and stores its outcome there, overwriting the
// oldest. A snapshot reads every slot, once per health snapshot interval;
// written by a recording that happens at the same time, a slot reads as
// its old or its new outcome.
//
// The counter is a write that every execution of the key makes, on top of
// the health buckets', which is why the window is opt-in.
type callWindow struct {
	next  atomic.Uint64
	slots []atomic.Uint32 // a callOutcome each
}

// callOutcome is what a slot of a callWindow holds: nothing yet, or one
// execution's outcome, with its slow flag.
type callOutcome = uint32

const (
	callEmpty   callOutcome = 0
	callSuccess callOutcome = 1
	callError   callOutcome = 2
	callSlow    callOutcome = 4 // or'ed with callSuccess or callError
)

func newCallWindow(n int) *callWindow { return &callWindow{slots: make([]atomic.Uint32, n)} }

// recordCall records c, an execution that counts in health, in the
// window of calls. It is a function of its own, kept out of
// MarkCompletionAt, so that a key without a window pays a field test
// there and nothing more: with the recording written in line,
// bench/peers' rxhystrix-semaphore ÷ cep21-minimal at 1 caller had a
// median of 0.785× against 0.772× without it, five rounds each; with
// this function, 0.767× against 0.777×.
//
//go:noinline
func (m *CommandMetrics) recordCall(failed bool, c *Completion) {
	m.calls.Load().record(failed, m.slow(c))
}

// record stores an execution's outcome in the next slot.
func (w *callWindow) record(failed, slow bool) {
	o := callSuccess
	if failed {
		o = callError
	}
	if slow {
		o |= callSlow
	}
	i := w.next.Add(1) - 1
	w.slots[i%uint64(len(w.slots))].Store(o)
}

// health returns the health counts of the outcomes in the window.
func (w *callWindow) health() HealthCounts {
	var total, errs, slow int64
	for i := range w.slots {
		o := w.slots[i].Load()
		if o == callEmpty {
			continue
		}
		total++
		if o&callError != 0 {
			errs++
		}
		if o&callSlow != 0 {
			slow++
		}
	}
	return HealthCountsOf(total, errs, slow)
}
