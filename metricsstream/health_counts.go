package metricsstream

// HealthCounts is what the circuit breaker looks at: the executions of the
// rolling window that count for health, how many of them were errors, and
// their percentage (rounded down, as Hystrix does). Errors are FAILURE,
// TIMEOUT, THREAD_POOL_REJECTED and SEMAPHORE_REJECTED; Total adds SUCCESS
// to those. Slow counts the executions of Total whose execution latency
// reached Config.SlowCallDuration (zero when that is unset); the breaker
// may trip on their percentage.
type HealthCounts struct {
	Total           int64
	Errors          int64
	ErrorPercentage int
	Slow            int64
}

// SlowPercentage returns Slow as a percentage of Total, rounded down.
func (h HealthCounts) SlowPercentage() int {
	if h.Total == 0 {
		return 0
	}
	return int(h.Slow * 100 / h.Total)
}

// HealthCountsOf returns the HealthCounts of total executions of which
// errors were errors and slow were slow, with the error percentage
// computed as Hystrix does: (int) ((double) errors / total * 100), 0 when
// total is 0. Sources that add health counts up (see package fleet) use it
// so that their percentages round as the local ones do.
func HealthCountsOf(total, errors, slow int64) HealthCounts {
	h := HealthCounts{Total: total, Errors: errors, Slow: slow}
	if total > 0 {
		h.ErrorPercentage = int(float64(errors) / float64(total) * 100)
	}
	return h
}
