package breaker

import "time"

// RetryAfter returns how long until AttemptExecution could let a request
// through, for the answer to a caller it refused (a server's Retry-After
// header, say): 0 when it would now, and the rest of the sleep window
// (SleepWindow) when the breaker is Open, 1ns at its very end, where a
// request is still refused (one is let through after the window, as in
// Hystrix). It returns false when that
// depends on what has not happened yet: a HalfOpen breaker whose trials
// are all out closes or opens again on their results, a breaker forced
// open stays so until its Config changes, and a Closed breaker that
// throttles admits the next request or not by a draw (a caller told to
// retry at once would only add to the load it sheds).
func (b *Breaker) RetryAfter() (time.Duration, bool) {
	w := b.refresh()
	switch {
	case w&forcedOpenBit != 0:
		return 0, false
	case w&allowAllBit != 0:
		return 0, true
	}
	cfg := b.cfg.Load()
	switch stateOf(w) {
	case Open:
		now := b.now()
		if b.sleepWindowOver(now) {
			return 0, true
		}
		// AttemptExecution admits strictly after the window: at its very
		// end the rest is 0 but a request would still be refused.
		return time.Duration(max(b.sleepWindow.Load()-(now-b.openedAt.Load()), 1)), true
	case HalfOpen:
		return 0, admittedOf(w) < cfg.HalfOpenTrials
	}
	return 0, w&throttlingBit == 0
}
