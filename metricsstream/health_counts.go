package metricsstream

// HealthCounts is what the circuit breaker looks at: the executions of the
// rolling window that count for health, how many of them were errors, and
// their percentage (rounded down, as Hystrix does). Errors are FAILURE,
// TIMEOUT, THREAD_POOL_REJECTED and SEMAPHORE_REJECTED; Total adds SUCCESS
// to those.
type HealthCounts struct {
	Total           int64
	Errors          int64
	ErrorPercentage int
}
