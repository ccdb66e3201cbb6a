package breaker

// Reset closes the breaker whatever its state and starts its health
// counts over (HealthSource.ResetStream), as if it had just been made:
// the failures seen so far can no longer trip it. It is for callers that
// forget their circuits, as hystrix-go's Flush does; its configuration is
// kept. A trial admitted before Reset reports to no effect; reports
// carry no token, so with Config.ConsecutiveFailures a failure that an
// execution admitted before Reset reports after it counts toward the new
// run.
func (b *Breaker) Reset() {
	b.mu.Lock()
	now := b.now()
	b.expireLocked(now) // an overdue trial re-opened it, as of the bound: say so first
	resubscribe := b.closeLocked(b.word.Load(), now)
	b.mu.Unlock()
	if resubscribe != nil {
		resubscribe()
	}
}
