package command

import (
	"fmt"
	"math"
	"time"

	"github.com/rxhystrix/rxhystrix/observable"
)

// RetryConfig configures the retries of a command's failed executions.
// Each attempt is a full execution, with its own breaker check, permit,
// timeout and Completion; a retry is recorded RETRIED. The fallback runs
// once, for the attempt after which no retry follows. An
// ObservableCommand's execution that has emitted a value is not retried.
type RetryConfig struct {
	// MaxAttempts is the number of executions in all, the first
	// included; 0 or 1 means no retry (the default).
	MaxAttempts int
	// Backoff is the wait before each retry: exponential with full jitter
	// from 100 ms, capped at 5 s, by default.
	Backoff observable.Backoff
	// On is the failures that are retried; the zero value means
	// CommandFailure and TimeoutFailure. A short circuit or a rejection
	// is not retried by default: retrying into an open circuit or a full
	// bulkhead only adds load. A bad request and a fallback's rejection
	// are never retried, and a set that names them is not valid.
	On FailureTypes
	// Budget bounds the retries and hedges in flight for the key.
	Budget RetryBudget
}

// RetryBudget bounds a key's retries and hedges in flight, as Envoy's
// retry budget: at most Percent of the key's executions in flight, and
// never fewer than MinConcurrency. A retry or hedge the budget refuses is
// recorded RETRY_BUDGET_EXHAUSTED, and the failure stands (its fallback
// runs).
type RetryBudget struct {
	// Percent is the share, 0 to 100, of the executions in flight that
	// may be retries or hedges; 0 means 20. A retry counts from the
	// moment it is granted, while it waits out its backoff too, as
	// Envoy's does.
	Percent float64
	// MinConcurrency is the number of retries and hedges always allowed
	// in flight; 0 means 3.
	MinConcurrency int
}

// HedgeConfig configures hedging: when an execution of a Command has not
// answered after a delay, another starts beside it; the first to succeed
// wins and the others are cancelled (recorded CANCELLED). A hedge is
// recorded HEDGED and counts in the retry budget. A failure the others
// may still make good runs no fallback; the last attempt to fail does. A
// bad request, which no other attempt makes good, is the answer: it ends
// the race as a success does, as gRPC's hedging ends on a fatal status.
// An ObservableCommand's executions race for the first value: the first
// to emit, or to complete, is the stream, as in gRPC's hedged streaming
// calls, and the others are cancelled.
//
// A value an attempt returns once another has won is dropped, as a
// timed-out run's is, and handed to the command's WithDiscard function,
// which can release what it holds (rows, a response body).
type HedgeConfig struct {
	// MaxHedges is the number of executions that may start beside the
	// first; 0 means no hedging (the default).
	MaxHedges int
	// Delay is how long an execution may go unanswered before the next
	// hedge starts; with Percentile it is the delay used until the key
	// has latencies to read.
	Delay time.Duration
	// Percentile, when not zero, takes the delay from the key's live
	// execution latency: its value at this percentile (95, say) over the
	// rolling percentile window. An ObservableCommand's execution latency
	// runs to the end of its stream, while its hedges race for the first
	// value: for a long stream, a fixed Delay says more.
	Percentile float64
	// OnError starts the next hedge at once when an execution fails.
	// A failure whose error carries a server's pushback (a Retry-After
	// header, gRPC's grpc-retry-pushback-ms: observable.Pushback) has the
	// word instead, as gRPC's hedging honours it: the next hedge starts
	// the wait it says after the failure, and one that says not to try
	// again starts no more hedges (see observable.HedgePolicy).
	OnError bool
}

// RateLimitConfig configures a token bucket in front of a key's
// executions: burst at once, then one per 1/Rate. An execution the limiter refuses is
// recorded RATE_LIMITED: it is not counted in health, and the fallback
// answers it, as for the other rejections.
type RateLimitConfig struct {
	// Enabled turns the limiter on.
	Enabled bool
	// Rate is the sustained number of executions a second.
	Rate float64
	// Burst is the number of executions that may start at once; 0 means
	// Rate rounded up, and at least 1.
	Burst int
	// MaxWait is how long an execution may wait for a token, under its
	// caller's context and within its timeout: a wait that would not end
	// before either is not begun, and the execution is rate limited at
	// once (a timeout after the wait would count against the breaker,
	// where RATE_LIMITED does not); 0 rejects at once. The
	// wait is on the goroutine that admits the execution: the caller's
	// for Execute and First; Queue and Observe, which never block their
	// caller, return at once in either isolation, and their execution
	// waits for its token on its own.
	MaxWait time.Duration
}

// makesAttempts reports whether a call of a Command of c may make more
// than one execution: it retries or hedges.
func (c *Config) makesAttempts() bool { return c.Retry.MaxAttempts > 1 || c.Hedge.MaxHedges > 0 }

// Defaults of the retry budget.
const (
	DefaultRetryBudgetPercent        = 20.0
	DefaultRetryBudgetMinConcurrency = 3
)

// FailureTypes is a set of failure types.
type FailureTypes uint16

// FailureTypesOf returns the set of types. It panics if one is not a
// FailureType of this package: a set that silently left it out (or,
// left empty, meant RetryConfig's defaults) would retry what the caller
// did not name.
func FailureTypesOf(types ...FailureType) FailureTypes {
	var s FailureTypes
	for _, t := range types {
		if t < 0 || int(t) >= numFailureTypes {
			panic(fmt.Sprintf("command: FailureTypesOf: %d is not a FailureType", int(t)))
		}
		s |= 1 << t
	}
	return s
}

// Has reports whether t is in s.
func (s FailureTypes) Has(t FailureType) bool {
	return t >= 0 && int(t) < numFailureTypes && s&(1<<t) != 0
}

// defaultRetryOn is what a zero RetryConfig.On means.
var defaultRetryOn = FailureTypesOf(CommandFailure, TimeoutFailure)

func (c RetryConfig) validate() error {
	if c.MaxAttempts < 0 {
		return invalidConfig("command: Config.Retry.MaxAttempts: %d is negative", c.MaxAttempts)
	}
	if err := c.Backoff.Validate(); err != nil {
		return invalidConfig("command: Config.Retry.%w", err)
	}
	if c.On>>numFailureTypes != 0 {
		return invalidConfig("command: Config.Retry.On: %#x names no failure type", uint16(c.On))
	}
	for _, t := range []FailureType{BadRequestFailure, FallbackRejectedFailure} {
		if c.On.Has(t) {
			// A bad request has no fallback stage, where the retry is
			// decided, and a fallback's rejection comes after it: either
			// would be accepted and never retried.
			return invalidConfig("command: Config.Retry.On: %v is never retried", t)
		}
	}
	return c.Budget.validate()
}

func (b RetryBudget) validate() error {
	if !(b.Percent >= 0 && b.Percent <= 100) {
		return invalidConfig("command: Config.Retry.Budget.Percent: %v is not within [0, 100]", b.Percent)
	}
	if b.MinConcurrency < 0 {
		return invalidConfig("command: Config.Retry.Budget.MinConcurrency: %d is negative", b.MinConcurrency)
	}
	return nil
}

func (c HedgeConfig) validate() error {
	switch {
	case c.MaxHedges < 0:
		return invalidConfig("command: Config.Hedge.MaxHedges: %d is negative", c.MaxHedges)
	case c.Delay < 0:
		return invalidConfig("command: Config.Hedge.Delay: %v is negative", c.Delay)
	case !(c.Percentile >= 0 && c.Percentile <= 100):
		return invalidConfig("command: Config.Hedge.Percentile: %v is not within [0, 100]", c.Percentile)
	}
	return nil
}

func (c RateLimitConfig) validate() error {
	// A disabled limiter may leave Rate 0, its zero value; nothing else
	// wrong is let through for being off.
	switch {
	case (c.Enabled || c.Rate != 0) && (!(c.Rate > 0) || math.IsInf(c.Rate, 0)):
		return invalidConfig("command: Config.RateLimit.Rate: %v is not a positive number", c.Rate)
	case c.Burst < 0:
		return invalidConfig("command: Config.RateLimit.Burst: %d is negative", c.Burst)
	case c.MaxWait < 0:
		return invalidConfig("command: Config.RateLimit.MaxWait: %v is negative", c.MaxWait)
	}
	return nil
}

func (c RateLimitConfig) burst() int {
	if c.Burst > 0 {
		return c.Burst
	}
	// Bounded before the conversion, which a rate past math.MaxInt
	// would overflow (to a burst of 1); the bucket's span is bounded by
	// maxRateSpan anyway.
	return max(1, int(math.Min(math.Ceil(c.Rate), maxRateSpan)))
}
