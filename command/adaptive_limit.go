package command

import (
	"fmt"
	"reflect"
	"time"

	"github.com/rxhystrix/rxhystrix/limit"
)

// Adaptive limits (Config.AdaptiveLimit, PoolConfig.AdaptiveLimit).
//
// A key under semaphore isolation and a pool each hold at most one
// limit.Limiter, beside their Config; when their Config names an
// algorithm, admission reads the limiter's limit where it would read
// MaxConcurrentRequests or CoreSize, and nothing else changes: the
// permits are still the key's concurrent executions, the workers still
// the pool's busy count, so that a limiter switched or dropped live
// holds no permit and loses none. A rejection at the limit is
// SEMAPHORE_REJECTED or THREAD_POOL_REJECTED, and goes to the fallback,
// as at a fixed limit.
//
// The samples come from the one stage that records how each run ended,
// execution.concluded, which both drivers use: the latency of the user
// code (from when it started on its worker, so that time spent in the
// pool's queue, which the limit itself causes, is not read as the
// downstream slowing down), the key's concurrency when it started, and
// whether it timed out. Successes and failures are samples, a timeout is
// a drop; a bad request or a cancellation says nothing about the
// downstream, and a run that never started (rejected, short-circuited,
// timed out in the queue) measured nothing: none of them is a sample. A
// rejection by the limit is not a drop either, or each rejection would
// lower the limit that caused it. One cancellation is a success: that of
// an ObservableCommand's execution whose Observable has emitted, as
// First leaves it at its first value (execution.cancelled), measured up
// to when it was left.
//
// The in-flight count of a sample is the key's concurrency, which is the
// pool's busy workers when the pool serves one key (the default, a pool
// per group); a pool shared by several keys sees each key's share, and
// the algorithms that hold their limit at low concurrency hold it more
// readily there.

// sampleLimit gives e's limiter its sample: see above.
func (e *execution) sampleLimit(o outcome, now int64) {
	if !e.executed {
		return
	}
	var dropped bool
	switch o {
	case outcomeSuccess, outcomeFailure:
	case outcomeTimeout:
		dropped = true
	default:
		return
	}
	before, after := e.limiter.Record(limit.Sample{
		RTT:      time.Duration(now - e.runStart),
		InFlight: int(e.concurrency),
		Dropped:  dropped,
	})
	if after <= before {
		return
	}
	if e.limitPool != nil {
		e.limitPool.startQueued()
		return
	}
	// A key's limit that grew gives its backlog the new permits, as a
	// Configure that raises them does, rather than one per run that ends.
	for range after - before {
		if e.k.backlog.waiting.Load() == 0 {
			break
		}
		e.k.permitGivenBack()
	}
}

// nextLimiter returns the limiter that serves algorithm a after cur
// (nil if none): cur itself when it runs a already, so that a Config
// written back unchanged keeps the limit where it is; a new limiter
// otherwise, starting at cur's limit if there was one (a switch of
// algorithm, or of its parameters, starts where the last one was, whatever
// the new one's InitialLimit) or at fixed. It returns nil
// when a is nil. a has been validated.
func nextLimiter(cur *limit.Limiter, a limit.Algorithm, fixed int) *limit.Limiter {
	if a == nil {
		return nil
	}
	if cur != nil && cur.Algorithm() == a {
		return cur
	}
	var l *limit.Limiter
	var err error
	if cur != nil {
		l, err = cur.Switch(a)
	} else {
		l, err = limit.New(a, fixed)
	}
	if err != nil {
		panic(err) // a was validated
	}
	return l
}

// validateAlgorithm is a.Validate, or an error for a pointer to an
// algorithm (a *limit.Vegas, say, or a pointer to a type of the program's
// that embeds one). Algorithms are values, compared to tell
// a live change from a configuration written back unchanged: a pointer
// would compare by address, so that a configuration made anew with the
// same algorithm would restart the limit, and a change made through the
// same pointer would go unseen; and a nil one would panic in Validate.
// A type that embeds the limit.Algorithm interface is checked through
// what it holds: nil, which would panic in Validate, or a pointer, are
// refused as they are unwrapped, and one that cannot be compared, which
// its type does not tell, as an uncomparable type is.
func validateAlgorithm(a limit.Algorithm) error {
	v := reflect.ValueOf(a)
	if v.Kind() == reflect.Pointer {
		return fmt.Errorf("%w: %T is a pointer; an algorithm is a value", limit.ErrInvalidConfig, a)
	}
	if err := wrappedAlgorithmsError(v); err != nil {
		return err
	}
	if !v.Comparable() {
		// nextLimiter's == would panic on it.
		return fmt.Errorf("%w: %T cannot be compared; an algorithm is a comparable value", limit.ErrInvalidConfig, a)
	}
	return a.Validate()
}

// algorithmType is the type of limit.Algorithm.
var algorithmType = reflect.TypeFor[limit.Algorithm]()

// wrappedAlgorithmsError checks the algorithms that v, a struct, holds in
// fields of an interface type that is an algorithm (an embedded
// limit.Algorithm), whose methods may be v's: none may be nil or a
// pointer, and each is checked so in turn.
func wrappedAlgorithmsError(v reflect.Value) error {
	if v.Kind() != reflect.Struct {
		return nil
	}
	for i := range v.NumField() {
		f := v.Field(i)
		if f.Kind() != reflect.Interface || !f.Type().Implements(algorithmType) {
			continue
		}
		if f.IsNil() {
			return fmt.Errorf("%w: %s holds a nil %s", limit.ErrInvalidConfig, v.Type(), f.Type())
		}
		if inner := f.Elem(); inner.Kind() == reflect.Pointer {
			return fmt.Errorf("%w: %s holds %s, a pointer; an algorithm is a value", limit.ErrInvalidConfig, v.Type(), inner.Type())
		} else if err := wrappedAlgorithmsError(inner); err != nil {
			return err
		}
	}
	return nil
}
