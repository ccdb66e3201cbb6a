package metricsstream

import (
	"errors"
	"fmt"
	"strconv"
)

// ErrUnknownEventType is the error of [ParseEventType] and
// [EventType.UnmarshalText] for a name that is not an [EventType]'s.
var ErrUnknownEventType = errors.New("metricsstream: unknown event type")

// EventType is one of the things that can happen to a command execution,
// as Hystrix 1.5.12's HystrixEventType. The values keep Hystrix's order
// (its ordinals), so the zero value is [Emit].
//
// An execution reports a set of events: [Emit], [FallbackEmit] and
// [Collapsed] may happen many times, every other event at most once (see
// [EventCounts.Add]).
type EventType int

// The event types, in Hystrix's order, then rxhystrix's own: Retried,
// Hedged, BudgetExhausted and RateLimited, which Hystrix has no word for
// (its commands neither retry, hedge nor limit their rate). None of these
// counts in health; RateLimited is a rejection, answered by the fallback
// as SEMAPHORE_REJECTED is.
const (
	Emit              EventType = iota // the command emitted a value (EMIT)
	Success                            // run completed without error (SUCCESS)
	Failure                            // run failed (FAILURE)
	Timeout                            // run did not complete in time (TIMEOUT)
	BadRequest                         // run failed with a bad request: no fallback, not a health error (BAD_REQUEST)
	ShortCircuited                     // the open circuit refused the execution (SHORT_CIRCUITED)
	PoolRejected                       // the worker pool refused the execution (THREAD_POOL_REJECTED)
	SemaphoreRejected                  // the execution semaphore refused the execution (SEMAPHORE_REJECTED)
	FallbackEmit                       // the fallback emitted a value (FALLBACK_EMIT)
	FallbackSuccess                    // the fallback completed without error (FALLBACK_SUCCESS)
	FallbackFailure                    // the fallback failed (FALLBACK_FAILURE)
	FallbackRejection                  // the fallback semaphore refused the fallback (FALLBACK_REJECTION)
	FallbackMissing                    // no fallback was given (FALLBACK_MISSING)
	ExceptionThrown                    // the caller got an error; derived, never recorded (EXCEPTION_THROWN)
	ResponseFromCache                  // the value came from the request cache (RESPONSE_FROM_CACHE)
	Cancelled                          // the subscriber left before a terminal event (CANCELLED)
	Collapsed                          // the execution served collapsed requests (COLLAPSED)
	CommandMaxActive                   // reserved by Hystrix 1.5.12; nothing records it (COMMAND_MAX_ACTIVE)

	// rxhystrix's own events, after Hystrix's so that its ordinals hold.

	Retried         // the execution retried one that failed (RETRIED)
	Hedged          // the execution was started beside a slow one, as a hedge (HEDGED)
	BudgetExhausted // the retry budget refused a retry or a hedge; no execution ran (RETRY_BUDGET_EXHAUSTED)
	RateLimited     // the rate limiter refused the execution (RATE_LIMITED)

	// NumEventTypes is the number of event types; the valid values are
	// 0 <= e < NumEventTypes, so `for e := range NumEventTypes` visits
	// them all in order.
	NumEventTypes
)

// eventTypeInfo is what Hystrix's HystrixEventType knows of each value.
type eventTypeInfo struct {
	name     string
	terminal bool // HystrixEventType.isTerminal
}

var eventTypes = [NumEventTypes]eventTypeInfo{
	Emit:              {"EMIT", false},
	Success:           {"SUCCESS", true},
	Failure:           {"FAILURE", false},
	Timeout:           {"TIMEOUT", false},
	BadRequest:        {"BAD_REQUEST", true},
	ShortCircuited:    {"SHORT_CIRCUITED", false},
	PoolRejected:      {"THREAD_POOL_REJECTED", false},
	SemaphoreRejected: {"SEMAPHORE_REJECTED", false},
	FallbackEmit:      {"FALLBACK_EMIT", false},
	FallbackSuccess:   {"FALLBACK_SUCCESS", true},
	FallbackFailure:   {"FALLBACK_FAILURE", true},
	FallbackRejection: {"FALLBACK_REJECTION", true},
	FallbackMissing:   {"FALLBACK_MISSING", true},
	ExceptionThrown:   {"EXCEPTION_THROWN", false},
	ResponseFromCache: {"RESPONSE_FROM_CACHE", true},
	Cancelled:         {"CANCELLED", true},
	Collapsed:         {"COLLAPSED", false},
	CommandMaxActive:  {"COMMAND_MAX_ACTIVE", false},
	Retried:           {"RETRIED", false},
	Hedged:            {"HEDGED", false},
	BudgetExhausted:   {"RETRY_BUDGET_EXHAUSTED", false},
	RateLimited:       {"RATE_LIMITED", false},
}

// String returns Hystrix's name of e ("THREAD_POOL_REJECTED"), or
// "EventType(n)" for a value out of range.
func (e EventType) String() string {
	if e.valid() {
		return eventTypes[e].name
	}
	return "EventType(" + strconv.Itoa(int(e)) + ")"
}

// ParseEventType returns the EventType whose [EventType.String] is name.
// Names are matched exactly, as Hystrix's HystrixEventType.valueOf does;
// an unknown name gets an error wrapping [ErrUnknownEventType].
func ParseEventType(name string) (EventType, error) {
	for e := range NumEventTypes {
		if eventTypes[e].name == name {
			return e, nil
		}
	}
	return 0, fmt.Errorf("%w: %q", ErrUnknownEventType, name)
}

// MarshalText returns Hystrix's name of e, so that event types read as
// their names in JSON. It fails for a value out of range.
func (e EventType) MarshalText() ([]byte, error) {
	if !e.valid() {
		return nil, fmt.Errorf("%w: %d", ErrUnknownEventType, int(e))
	}
	return []byte(eventTypes[e].name), nil
}

// UnmarshalText sets e to the event type named text, as [ParseEventType].
func (e *EventType) UnmarshalText(text []byte) error {
	v, err := ParseEventType(string(text))
	if err != nil {
		return err
	}
	*e = v
	return nil
}

func (e EventType) valid() bool { return e >= 0 && e < NumEventTypes }

// IsTerminal reports whether e ends an execution's event list, as
// HystrixEventType.isTerminal: SUCCESS, BAD_REQUEST, the four fallback
// outcomes (FALLBACK_SUCCESS, FALLBACK_FAILURE, FALLBACK_REJECTION,
// FALLBACK_MISSING), RESPONSE_FROM_CACHE and CANCELLED.
func (e EventType) IsTerminal() bool { return e.valid() && eventTypes[e].terminal }

// IsExceptionProducing reports whether e makes the caller receive an
// error, as Hystrix's EXCEPTION_PRODUCING_EVENT_TYPES: BAD_REQUEST,
// FALLBACK_FAILURE, FALLBACK_MISSING and FALLBACK_REJECTION. The
// EXCEPTION_THROWN count is derived from these events.
func (e EventType) IsExceptionProducing() bool {
	switch e {
	case BadRequest, FallbackFailure, FallbackMissing, FallbackRejection:
		return true
	}
	return false
}

// CountsInHealth reports whether e counts in [HealthCounts.Total]:
// SUCCESS, FAILURE, TIMEOUT, THREAD_POOL_REJECTED and SEMAPHORE_REJECTED,
// as Hystrix's HealthCounts.plus.
func (e EventType) CountsInHealth() bool {
	return e == Success || e.IsHealthError()
}

// IsHealthError reports whether e counts in [HealthCounts.Errors]:
// FAILURE, TIMEOUT, THREAD_POOL_REJECTED and SEMAPHORE_REJECTED.
// SHORT_CIRCUITED, BAD_REQUEST, RESPONSE_FROM_CACHE, CANCELLED and the
// fallback events are not errors and not counted at all.
func (e EventType) IsHealthError() bool {
	switch e {
	case Failure, Timeout, PoolRejected, SemaphoreRejected:
		return true
	}
	return false
}

// PoolEvent returns the worker-pool event e maps to, as Hystrix's
// HystrixEventType.ThreadPool.from: SUCCESS, FAILURE, TIMEOUT and
// BAD_REQUEST are [PoolExecuted], THREAD_POOL_REJECTED is [PoolRejection];
// ok is false for the others.
func (e EventType) PoolEvent() (p PoolEventType, ok bool) {
	switch e {
	case Success, Failure, Timeout, BadRequest:
		return PoolExecuted, true
	case PoolRejected:
		return PoolRejection, true
	}
	return 0, false
}

// PoolEventType is what a worker pool counts, as Hystrix's
// HystrixEventType.ThreadPool. The zero value is [PoolExecuted].
type PoolEventType int

// The worker-pool event types.
const (
	PoolExecuted  PoolEventType = iota // a command ran in the pool (EXECUTED)
	PoolRejection                      // the pool refused a command (REJECTED)

	// NumPoolEventTypes is the number of worker-pool event types.
	NumPoolEventTypes
)

// String returns Hystrix's name of p ("EXECUTED", "REJECTED").
func (p PoolEventType) String() string {
	switch p {
	case PoolExecuted:
		return "EXECUTED"
	case PoolRejection:
		return "REJECTED"
	}
	return "PoolEventType(" + strconv.Itoa(int(p)) + ")"
}
