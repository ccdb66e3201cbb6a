package metricsstream

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEventTypeNamesAreHystrixs(t *testing.T) {
	want := []string{
		"EMIT", "SUCCESS", "FAILURE", "TIMEOUT", "BAD_REQUEST", "SHORT_CIRCUITED",
		"THREAD_POOL_REJECTED", "SEMAPHORE_REJECTED", "FALLBACK_EMIT", "FALLBACK_SUCCESS",
		"FALLBACK_FAILURE", "FALLBACK_REJECTION", "FALLBACK_MISSING", "EXCEPTION_THROWN",
		"RESPONSE_FROM_CACHE", "CANCELLED", "COLLAPSED", "COMMAND_MAX_ACTIVE",
		// rxhystrix's own, after Hystrix's ordinals
		"RETRIED", "HEDGED", "RETRY_BUDGET_EXHAUSTED", "RATE_LIMITED",
	}
	require.Len(t, want, int(NumEventTypes))
	for e := range NumEventTypes {
		assert.Equal(t, want[e], e.String())
		got, err := ParseEventType(want[e])
		require.NoError(t, err)
		assert.Equal(t, e, got)
	}
	assert.Equal(t, "THREAD_POOL_REJECTED", PoolRejected.String())
	assert.Equal(t, "EventType(99)", EventType(99).String())
	assert.Equal(t, "EventType(-1)", EventType(-1).String())
}

func TestParseEventTypeRejectsUnknownNames(t *testing.T) {
	for _, name := range []string{"", "success", "POOL_REJECTED", "FALLBACK_DISABLED"} {
		_, err := ParseEventType(name)
		assert.True(t, errors.Is(err, ErrUnknownEventType), "ParseEventType(%q) = %v", name, err)
	}
}

func TestEventTypeJSONUsesNames(t *testing.T) {
	b, err := json.Marshal([]EventType{Success, PoolRejected})
	require.NoError(t, err)
	assert.JSONEq(t, `["SUCCESS","THREAD_POOL_REJECTED"]`, string(b))

	var back []EventType
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, []EventType{Success, PoolRejected}, back)

	assert.ErrorIs(t, json.Unmarshal([]byte(`["NOPE"]`), &back), ErrUnknownEventType)
	_, err = json.Marshal(EventType(42))
	assert.Error(t, err)
}

// The classifications are Hystrix 1.5.12's HystrixEventType: isTerminal,
// EXCEPTION_PRODUCING_EVENT_TYPES, HealthCounts.plus and ThreadPool.from.
func TestEventTypeClassification(t *testing.T) {
	set := func(es ...EventType) map[EventType]bool {
		m := map[EventType]bool{}
		for _, e := range es {
			m[e] = true
		}
		return m
	}
	terminal := set(Success, BadRequest, FallbackSuccess, FallbackFailure, FallbackRejection,
		FallbackMissing, ResponseFromCache, Cancelled)
	exception := set(BadRequest, FallbackFailure, FallbackMissing, FallbackRejection)
	healthTotal := set(Success, Failure, Timeout, PoolRejected, SemaphoreRejected)
	healthError := set(Failure, Timeout, PoolRejected, SemaphoreRejected)
	for e := range NumEventTypes {
		assert.Equal(t, terminal[e], e.IsTerminal(), "%v.IsTerminal", e)
		assert.Equal(t, exception[e], e.IsExceptionProducing(), "%v.IsExceptionProducing", e)
		assert.Equal(t, healthTotal[e], e.CountsInHealth(), "%v.CountsInHealth", e)
		assert.Equal(t, healthError[e], e.IsHealthError(), "%v.IsHealthError", e)

		p, ok := e.PoolEvent()
		switch e {
		case Success, Failure, Timeout, BadRequest:
			assert.True(t, ok)
			assert.Equal(t, PoolExecuted, p, "%v.PoolEvent", e)
		case PoolRejected:
			assert.True(t, ok)
			assert.Equal(t, PoolRejection, p)
		default:
			assert.False(t, ok, "%v.PoolEvent", e)
		}
	}
	assert.False(t, EventType(99).IsTerminal())
	assert.Equal(t, "EXECUTED", PoolExecuted.String())
	assert.Equal(t, "REJECTED", PoolRejection.String())
	assert.Equal(t, "PoolEventType(7)", PoolEventType(7).String())
}

func TestEventCountsCountLikeHystrix(t *testing.T) {
	var c EventCounts
	c.Add(Emit, 1)
	c.Add(Emit, 2)
	c.Add(Failure, 1)
	c.Add(Failure, 5) // presence only
	c.Add(FallbackEmit, 4)
	c.Add(FallbackMissing, 1)

	assert.Equal(t, 3, c.Count(Emit))
	assert.Equal(t, 1, c.Count(Failure))
	assert.Equal(t, 4, c.Count(FallbackEmit))
	assert.Equal(t, 1, c.Count(ExceptionThrown), "derived from FALLBACK_MISSING")
	assert.Equal(t, 0, c.Count(Success))
	assert.Equal(t, 0, c.Count(EventType(-3)))
	assert.True(t, c.Contains(FallbackMissing))
	assert.False(t, c.Contains(Timeout))

	var ok EventCounts
	ok.Add(Success, 1)
	assert.Equal(t, 0, ok.Count(ExceptionThrown))
}

func TestEventCountsAddPanicsOnBadInput(t *testing.T) {
	var c EventCounts
	assert.PanicsWithValue(t, "metricsstream: EventCounts.Add with count 0 < 1", func() { c.Add(Emit, 0) })
	assert.Panics(t, func() { c.Add(NumEventTypes, 1) })
}
