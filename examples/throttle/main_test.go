package main

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type row struct{ served, reached, turnedAway, refused float64 }

func TestThrottlingServesTheCapacityAHystrixBreakerWastes(t *testing.T) {
	var out strings.Builder
	require.NoError(t, run(&out, options{Demand: 300, Capacity: 100, Overload: 10 * time.Second, Recovery: 15 * time.Second}))
	got := out.String()
	t.Log("\n" + got)

	rowOf := func(name string) row {
		m := regexp.MustCompile(regexp.QuoteMeta(name) + ` +(\d+) +(\d+) +(\d+) +(\d+) +after \S+\n`).FindStringSubmatch(got)
		require.NotNil(t, m, "a row for %q, back in full", name)
		var v [4]float64
		for i := range v {
			v[i], _ = strconv.ParseFloat(m[i+1], 64)
		}
		return row{v[0], v[1], v[2], v[3]}
	}
	none, hystrix := rowOf("no breaker"), rowOf("Hystrix breaker")
	half, ninety := rowOf("throttle below 50%"), rowOf("throttle below 90%")

	assert.Equal(t, row{100, 300, 200, 0}, none, "every call reaches the downstream, which serves its capacity")
	assert.Less(t, hystrix.served, 30.0, "open most of the time, the breaker wastes the capacity")
	assert.GreaterOrEqual(t, half.served, 95.0, "throttling keeps the downstream serving its capacity")
	assert.Less(t, half.reached, 0.9*none.reached, "with fewer calls to turn away")
	assert.GreaterOrEqual(t, ninety.served, 85.0)
	assert.Less(t, ninety.reached, half.reached, "a higher threshold sheds more")
	for _, r := range []row{hystrix, half, ninety} {
		assert.InDelta(t, 300, r.reached+r.refused, 1, "every call reaches the downstream or is refused: %+v", r)
	}
}

func TestRunRejectsBadOptions(t *testing.T) {
	for _, o := range []options{
		{},
		{Demand: 300, Capacity: 0, Overload: time.Second, Recovery: time.Second},
		{Demand: 250, Capacity: 100, Overload: time.Second, Recovery: time.Second},
		{Demand: 300, Capacity: 100, Overload: time.Millisecond, Recovery: time.Second},
	} {
		assert.Error(t, run(&strings.Builder{}, o), "%+v", o)
	}
	// A downstream that can serve its demand is not overloaded: the table
	// would compare the policies in a scenario it does not describe.
	for _, capacity := range []int{300, 500} {
		err := run(&strings.Builder{}, options{Demand: 300, Capacity: capacity, Overload: time.Second, Recovery: time.Second})
		assert.EqualError(t, err, fmt.Sprintf("throttle: -capacity %d must be less than -demand 300, or the downstream is not overloaded", capacity))
	}
	// The rates are counts over whole steps of 10ms: an -overload of
	// 1.009s ran 100 steps and divided by 1.009s.
	assert.EqualError(t, run(&strings.Builder{}, options{Demand: 300, Capacity: 100, Overload: time.Second + 9*time.Millisecond, Recovery: time.Second}),
		"throttle: -overload 1.009s and -recovery 1s must be multiples of 10ms")
	// The multiple is a number of calls a second, not a duration.
	assert.EqualError(t, run(&strings.Builder{}, options{Demand: 250, Capacity: 100, Overload: time.Second, Recovery: time.Second}),
		"throttle: -demand 250 and -capacity 100 must be multiples of 100")
}
