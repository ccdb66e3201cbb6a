package metricsstream

import (
	"testing"

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
