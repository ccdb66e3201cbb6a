package turbine

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sumOf returns the event of the objects given as JSON, from instances
// named in order.
func sumOf(t *testing.T, objects ...string) string {
	t.Helper()
	var objs []*object
	for _, s := range objects {
		o, err := parseObject([]byte(s))
		require.NoError(t, err, s)
		objs = append(objs, o)
	}
	return string(appendSum(nil, objs))
}

func TestSumAddsAsTurbineDoes(t *testing.T) {
	cases := []struct {
		name    string
		objects []string
		want    string
	}{
		{"one instance: itself, instanceId left out",
			[]string{`{"type":"HystrixCommand","name":"GetUser","instanceId":"a","currentTime":1000,"rollingCountSuccess":3,"reportingHosts":1}`},
			`{"type":"HystrixCommand","name":"GetUser","currentTime":1000,"rollingCountSuccess":3,"reportingHosts":1}`},
		{"counts and means are summed, the latest time kept",
			[]string{
				`{"type":"HystrixCommand","name":"GetUser","currentTime":1000,"rollingCountSuccess":3,"errorPercentage":10,"latencyExecute_mean":12,"reportingHosts":1}`,
				`{"type":"HystrixCommand","name":"GetUser","currentTime":1500,"rollingCountSuccess":4,"errorPercentage":30,"latencyExecute_mean":20,"reportingHosts":1}`,
			},
			`{"type":"HystrixCommand","name":"GetUser","currentTime":1500,"rollingCountSuccess":7,"errorPercentage":40,"latencyExecute_mean":32,"reportingHosts":2}`},
		{"percentiles are summed member by member, in the order they came",
			[]string{
				`{"type":"HystrixCommand","name":"GetUser","latencyExecute":{"0":1,"25":5,"99.5":90,"100":120}}`,
				`{"type":"HystrixCommand","name":"GetUser","latencyExecute":{"0":2,"25":7,"99.5":110,"100":300}}`,
			},
			`{"type":"HystrixCommand","name":"GetUser","latencyExecute":{"0":3,"25":12,"99.5":200,"100":420},"reportingHosts":2}`},
		{"members only some instances have, and one instance's alone",
			[]string{
				`{"type":"HystrixCollapser","name":"Batch","batchSize":{"25":1,"50":2},"shardSize":{"50":7}}`,
				`{"type":"HystrixCollapser","name":"Batch","batchSize":{"50":3,"99":9}}`,
			},
			`{"type":"HystrixCollapser","name":"Batch","batchSize":{"25":1,"50":5,"99":9},"shardSize":{"50":7},"reportingHosts":2}`},
		{"values the instances agree on are kept as they are; numeric settings are summed",
			[]string{
				`{"type":"HystrixCommand","name":"GetUser","group":"Users","isCircuitBreakerOpen":false,"propertyValue_metricsRollingStatisticalWindowInMilliseconds":10000}`,
				`{"type":"HystrixCommand","name":"GetUser","group":"Users","isCircuitBreakerOpen":false,"propertyValue_metricsRollingStatisticalWindowInMilliseconds":10000}`,
			},
			`{"type":"HystrixCommand","name":"GetUser","group":"Users","isCircuitBreakerOpen":false,"propertyValue_metricsRollingStatisticalWindowInMilliseconds":20000,"reportingHosts":2}`},
		{"values they differ on are counted by value",
			[]string{
				`{"type":"HystrixCommand","name":"GetUser","isCircuitBreakerOpen":false,"propertyValue_executionIsolationStrategy":"THREAD","group":"A"}`,
				`{"type":"HystrixCommand","name":"GetUser","isCircuitBreakerOpen":true,"propertyValue_executionIsolationStrategy":"SEMAPHORE","group":"B"}`,
				`{"type":"HystrixCommand","name":"GetUser","isCircuitBreakerOpen":false,"propertyValue_executionIsolationStrategy":"THREAD","group":"B"}`,
			},
			`{"type":"HystrixCommand","name":"GetUser","isCircuitBreakerOpen":{"false":2,"true":1},"propertyValue_executionIsolationStrategy":{"SEMAPHORE":1,"THREAD":2},"group":{"A":1,"B":2},"reportingHosts":3}`},
		{"a Turbine among the instances counts its hosts",
			[]string{
				`{"type":"HystrixThreadPool","name":"Users","currentActiveCount":4,"reportingHosts":3}`,
				`{"type":"HystrixThreadPool","name":"Users","currentActiveCount":1,"reportingHosts":1}`,
			},
			`{"type":"HystrixThreadPool","name":"Users","currentActiveCount":5,"reportingHosts":4}`},
		{"fields only some instances write, and numbers that are not integers",
			[]string{
				`{"type":"HystrixCollapser","name":"Batch","rollingCountBatches":2,"ratio":0.25}`,
				`{"type":"HystrixCollapser","name":"Batch","ratio":0.5,"rollingCountEmit":1}`,
			},
			`{"type":"HystrixCollapser","name":"Batch","rollingCountBatches":2,"ratio":0.75,"rollingCountEmit":1,"reportingHosts":2}`},
		{"a number and something else are counted by value",
			[]string{
				`{"type":"HystrixCommand","name":"GetUser","latencyExecute_mean":12}`,
				`{"type":"HystrixCommand","name":"GetUser","latencyExecute_mean":"12"}`,
			},
			`{"type":"HystrixCommand","name":"GetUser","latencyExecute_mean":{"12":2},"reportingHosts":2}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, "data: "+tc.want+"\n\n", sumOf(t, tc.objects...))
		})
	}
}

func TestSumOfIntegersIsExact(t *testing.T) {
	got := sumOf(t,
		`{"type":"T","name":"n","c":9007199254740993}`, // 2^53+1: a float64 would round it
		`{"type":"T","name":"n","c":1}`)
	assert.Equal(t, `data: {"type":"T","name":"n","c":9007199254740994,"reportingHosts":2}`+"\n\n", got)
}

func TestSumOfIntegersTooLargeIsAFloat(t *testing.T) {
	got := sumOf(t,
		`{"type":"T","name":"n","c":9223372036854775807}`,
		`{"type":"T","name":"n","c":1}`)
	assert.Equal(t, `data: {"type":"T","name":"n","c":9.223372036854776e+18,"reportingHosts":2}`+"\n\n", got)
}

func TestParseObjectRefusesWhatIsNotAnObjectOfTheStream(t *testing.T) {
	for _, s := range []string{
		`not json`, `[1,2]`, `"x"`, `{"name":"GetUser"}`, `{"type":"HystrixCommand"}`,
		`{"type":1,"name":"GetUser"}`, `{"type":"T","name":"n"} trailing`, `{"type":"T","name":"n","c":1e999}`,
	} {
		_, err := parseObject([]byte(s))
		assert.Error(t, err, s)
	}
}

func TestParseObjectReadsDeleteData(t *testing.T) {
	for _, s := range []string{`{"type":"T","name":"n","deleteData":"true"}`, `{"type":"T","name":"n","deleteData":true}`} {
		o, err := parseObject([]byte(s))
		require.NoError(t, err)
		assert.True(t, o.deleted, s)
	}
}

// A Turbine among the instances has written, for a value its hosts agree
// on, that value, and for one they differ on, the count of its hosts by
// value: either counts as many hosts as its reportingHosts, so that the
// circuit reads "Open 1 Closed 2" over the 3 hosts summed.
func TestSumCountsANestedTurbinesHostsByValue(t *testing.T) {
	cases := []struct {
		name    string
		objects []string
		want    string
	}{
		{"a Turbine whose 2 hosts agree, and a host that differs",
			[]string{
				`{"type":"HystrixCommand","name":"GetUser","isCircuitBreakerOpen":false,"reportingHosts":2}`,
				`{"type":"HystrixCommand","name":"GetUser","isCircuitBreakerOpen":true,"reportingHosts":1}`,
			},
			`{"type":"HystrixCommand","name":"GetUser","isCircuitBreakerOpen":{"false":2,"true":1},"reportingHosts":3}`},
		{"a Turbine whose hosts differ, and a host",
			[]string{
				`{"type":"HystrixCommand","name":"GetUser","isCircuitBreakerOpen":{"false":1,"true":1},"reportingHosts":2}`,
				`{"type":"HystrixCommand","name":"GetUser","isCircuitBreakerOpen":false,"reportingHosts":1}`,
			},
			`{"type":"HystrixCommand","name":"GetUser","isCircuitBreakerOpen":{"false":2,"true":1},"reportingHosts":3}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, "data: "+tc.want+"\n\n", sumOf(t, tc.objects...))
		})
	}
}

// null is counted as null, as its JSON, not as the empty string: a pool
// key override (a string or null) set on some instances only.
func TestSumCountsNullAsNull(t *testing.T) {
	got := sumOf(t,
		`{"type":"HystrixCommand","name":"GetUser","propertyValue_executionIsolationThreadPoolKeyOverride":null}`,
		`{"type":"HystrixCommand","name":"GetUser","propertyValue_executionIsolationThreadPoolKeyOverride":"Users"}`)
	assert.Equal(t, `data: {"type":"HystrixCommand","name":"GetUser","propertyValue_executionIsolationThreadPoolKeyOverride":{"Users":1,"null":1},"reportingHosts":2}`+"\n\n", got)
}

// An object whose type or name is null has neither.
func TestParseObjectRefusesANullTypeOrName(t *testing.T) {
	for _, s := range []string{`{"type":null,"name":"n"}`, `{"type":"T","name":null}`} {
		_, err := parseObject([]byte(s))
		assert.ErrorIs(t, err, errNotAnObject, s)
	}
}

// A member an instance writes twice is read once, with its last value, as
// a dashboard reading the instance itself (JSON.parse) reads it: not
// added to itself, nor counted as two hosts.
func TestSumReadsAMemberWrittenTwiceOnce(t *testing.T) {
	got := sumOf(t,
		`{"type":"HystrixCommand","name":"GetUser","rollingCountSuccess":1,"isCircuitBreakerOpen":false,"latencyExecute":{"50":4,"50":5},"rollingCountSuccess":2,"isCircuitBreakerOpen":false}`,
		`{"type":"HystrixCommand","name":"GetUser","rollingCountSuccess":3,"isCircuitBreakerOpen":true,"latencyExecute":{"50":6}}`)
	assert.Equal(t, `data: {"type":"HystrixCommand","name":"GetUser","rollingCountSuccess":5,"isCircuitBreakerOpen":{"false":1,"true":1},"latencyExecute":{"50":11},"reportingHosts":2}`+"\n\n", got)
}

// A sum of floats that overflows float64 is written as JSON can carry
// it (null, as metricsstream writes a number it has none for), not as
// "+Inf", which no dashboard or Turbine reading the sum can parse: the
// whole event would be lost.
func TestSumThatOverflowsIsStillJSON(t *testing.T) {
	got := sumOf(t,
		`{"type":"T","name":"n","c":1e308,"p":{"50":-1.5e308},"reportingHosts":1e308}`,
		`{"type":"T","name":"n","c":1e308,"p":{"50":-1.5e308},"reportingHosts":1e308}`)
	data, ok := strings.CutPrefix(strings.TrimSuffix(got, "\n\n"), "data: ")
	require.True(t, ok, got)
	assert.True(t, json.Valid([]byte(data)), "not JSON: %s", data)
	assert.Equal(t, `{"type":"T","name":"n","c":null,"p":{"50":null},"reportingHosts":null}`, data)
}
