package breaker

// A run of failures (Config.ConsecutiveFailures) is counted in one word
// beside the state word, and only while the state word's countsRunBit is
// set: a breaker without the setting pays nothing for it. A success
// stores zero only when the run is not zero already, so that a dependency
// that keeps succeeding costs its callers a load, not a store that every
// core's cache must see.

// endRun ends a run of failures, on a success.
func (b *Breaker) endRun() {
	if b.failureRun.Load() != 0 {
		b.failureRun.Store(0)
	}
}

// countFailure adds a failure to the run of a Closed breaker and trips
// it when the run reaches Config.ConsecutiveFailures.
func (b *Breaker) countFailure() {
	if b.failureRun.Add(1) < int64(b.cfg.Load().ConsecutiveFailures) {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	w := b.word.Load()
	n := b.failureRun.Load()
	cfg := b.cfg.Load()
	if stateOf(w) != Closed || w&countsRunBit == 0 || n < int64(cfg.ConsecutiveFailures) {
		return // another failure tripped it, or a success or SetConfig came first
	}
	b.failureRun.Store(0)
	b.openLocked(w, b.now(), int(n))
}
