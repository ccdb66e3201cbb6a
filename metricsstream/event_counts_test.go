package metricsstream

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestEventCountsNamesInHystrixOrder(t *testing.T) {
	var none EventCounts
	assert.Nil(t, none.Names(), "no events, no names")

	var c EventCounts
	c.Add(FallbackSuccess, 1)
	c.Add(Emit, 3)
	c.Add(Failure, 1)
	c.Add(FallbackEmit, 1)
	c.Add(Collapsed, 2)
	c.Add(Success, 1)
	assert.Equal(t,
		[]string{"EMITx3", "SUCCESS", "FAILURE", "FALLBACK_EMIT", "FALLBACK_SUCCESS", "COLLAPSEDx2"},
		c.Names(), "in EventType order, counts above one after an x")

	var bad EventCounts
	bad.Add(BadRequest, 1)
	assert.True(t, bad.Contains(ExceptionThrown), "precondition: BAD_REQUEST derives EXCEPTION_THROWN")
	assert.Equal(t, []string{"BAD_REQUEST"}, bad.Names(), "the derived EXCEPTION_THROWN is left out")
}

// An emission count that would pass math.MaxInt32 stays there: wrapped
// around, it would be negative, and a completion would record no
// emissions at all.
func TestEventCountsEmissionsStopAtTheLargestCount(t *testing.T) {
	var c EventCounts
	c.Add(Emit, math.MaxInt32-1)
	c.Add(Emit, 1)
	assert.Equal(t, math.MaxInt32, c.Count(Emit))
	c.Add(Emit, 1)
	assert.Equal(t, math.MaxInt32, c.Count(Emit))

	var huge EventCounts
	huge.Add(FallbackEmit, 1<<40) // int32(1<<40) is 0
	assert.Equal(t, math.MaxInt32, huge.Count(FallbackEmit))
	huge.Add(Collapsed, 3)
	assert.Equal(t, 3, huge.Count(Collapsed))

	m, mc := newTestMetrics(t, Config{})
	m.MarkCompletion(&Completion{Events: huge})
	mc.Advance(time.Second)
	assert.Equal(t, int64(math.MaxInt32), m.RollingCount(FallbackEmit))
}
