package metricsstream

import (
	"math"
	"strconv"
	"strings"
)

// EventCounts is the events of one execution, indexed by [EventType], as
// Hystrix's ExecutionResult.EventCounts: [Emit], [FallbackEmit] and
// [Collapsed] hold how many times they happened, every other entry is 1
// when the event happened and 0 when it did not. It is a fixed-size array,
// so a Completion carries it without allocating. The zero value is an
// execution with no events.
//
// The [ExceptionThrown] entry is not used: [EventCounts.Count] derives it.
type EventCounts [NumEventTypes]int32

// Add records that e happened n times: it adds n for [Emit], [FallbackEmit]
// and [Collapsed] and marks every other event as present, as Hystrix's
// EventCounts.plus does. An emission count stops at [math.MaxInt32]
// rather than wrap around to a negative count, which would record none.
// It panics if e is out of range or n < 1.
func (c *EventCounts) Add(e EventType, n int) {
	if !e.valid() {
		panic("metricsstream: EventCounts.Add with invalid event type " + e.String())
	}
	if n < 1 {
		panic("metricsstream: EventCounts.Add with count " + strconv.Itoa(n) + " < 1")
	}
	if e.isMultiple() {
		if room := math.MaxInt32 - int64(c[e]); int64(n) >= room {
			c[e] = math.MaxInt32
		} else {
			c[e] += int32(n)
		}
	} else {
		c[e] = 1
	}
}

// Count returns how many times e happened, as Hystrix's
// EventCounts.getCount: the emission counts for [Emit], [FallbackEmit] and
// [Collapsed], 1 for [ExceptionThrown] when any exception-producing event
// happened (see [EventType.IsExceptionProducing]), and 1 or 0 for the
// others.
func (c *EventCounts) Count(e EventType) int {
	switch {
	case !e.valid():
		return 0
	case e == ExceptionThrown:
		for x := range NumEventTypes {
			if x.IsExceptionProducing() && c[x] > 0 {
				return 1
			}
		}
		return 0
	case e.isMultiple():
		return int(c[e])
	case c[e] > 0:
		return 1
	}
	return 0
}

// Contains reports whether e happened.
func (c *EventCounts) Contains(e EventType) bool { return c.Count(e) > 0 }

// Names returns the events that happened, in Hystrix's order ([EventType]'s
// order), by their Hystrix names: an event counted more than once ([Emit],
// [FallbackEmit] or [Collapsed]) is its name followed by "x" and the count,
// as in "EMITx3". [ExceptionThrown], derived from the others, is left out.
// An execution with no events has no names: Names returns nil.
//
// Hystrix's request log repeats the count of EMIT and FALLBACK_EMIT only;
// Names repeats COLLAPSED's too, the number of requests the batch served.
func (c *EventCounts) Names() []string {
	var names []string
	for e := range NumEventTypes {
		n := c.Count(e)
		switch {
		case n == 0 || e == ExceptionThrown:
		case n > 1:
			names = append(names, e.String()+"x"+strconv.Itoa(n))
		default:
			names = append(names, e.String())
		}
	}
	return names
}

// String returns the events that happened as the request log writes
// them: their [EventCounts.Names] in brackets, as "[EMITx3, SUCCESS]", or
// "[]" for an execution with no events.
func (c EventCounts) String() string {
	return "[" + strings.Join(c.Names(), ", ") + "]"
}

// isMultiple reports whether e may happen more than once per execution.
func (e EventType) isMultiple() bool { return e == Emit || e == FallbackEmit || e == Collapsed }

// EventTotals holds a total per [EventType] over many executions: the
// rolling and cumulative counts of a command. Its [ExceptionThrown] entry
// is derived as Hystrix derives it: the sum of the exception-producing
// events (BAD_REQUEST + FALLBACK_FAILURE + FALLBACK_MISSING +
// FALLBACK_REJECTION). Index it with an EventType: totals[Success].
type EventTotals [NumEventTypes]int64

// String returns the totals that are not zero, in Hystrix's order, as
// "[SUCCESS: 10, TIMEOUT: 2, EXCEPTION_THROWN: 1]", or "[]" when every
// total is zero.
func (t EventTotals) String() string {
	var b strings.Builder
	b.WriteByte('[')
	for e, n := range t {
		if n == 0 {
			continue
		}
		if b.Len() > 1 {
			b.WriteString(", ")
		}
		b.WriteString(EventType(e).String())
		b.WriteString(": ")
		b.WriteString(strconv.FormatInt(n, 10))
	}
	b.WriteByte(']')
	return b.String()
}
