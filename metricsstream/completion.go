package metricsstream

import "time"

// Completion is the record of one command execution, what Hystrix calls a
// HystrixCommandCompletion: the command reports it once, when the
// execution ends, through [CommandMetrics.MarkCompletion], and every
// subscriber of [CommandMetrics.Completions] receives a copy. It is a
// plain value (no pointers but the keys' strings), so building and
// recording one does not allocate.
type Completion struct {
	// CommandKey, GroupKey and PoolKey name the command, its group and
	// its worker pool: the pool of a pool-isolated execution, whether its
	// code ran there or was turned away (THREAD_POOL_REJECTED, say), and
	// empty under semaphore isolation and for a response from the request
	// cache, which no pool served.
	CommandKey, GroupKey, PoolKey string

	// Events is what happened, as the execution result's event counts.
	Events EventCounts

	// ExecutionLatency is how long the user's code ran (Hystrix's
	// execution latency), and TotalLatency how long the caller waited
	// from the start of the execution to its end (Hystrix's user-thread
	// latency). A negative latency means unknown (Hystrix's -1) and is not
	// recorded; so are both when Executed is false.
	ExecutionLatency, TotalLatency time.Duration

	// Executed reports whether the user's code ran (Hystrix's
	// didCommandExecute). Only executions that ran are recorded in the
	// latency distributions: short-circuits, rejections and cache hits
	// are not.
	Executed bool

	// ConcurrencyAtStart is the value [CommandMetrics.MarkStart] returned
	// for this execution, or 0 when the execution never started (it was
	// short-circuited, rejected or served from the cache).
	// [CommandMetrics.MarkCompletion] decrements the command's concurrent
	// execution count when it is positive.
	ConcurrencyAtStart int64

	// End is when the execution ended. [CommandMetrics.MarkCompletion]
	// counts the completion in the bucket that holds End; the zero time
	// means "now", read from the metrics' clock. End must not lie in the
	// future of that clock. [CommandMetrics.MarkCompletionAt] counts it
	// at the time it is given instead, and fills in a zero End with that
	// time for the subscribers.
	End time.Time
}
