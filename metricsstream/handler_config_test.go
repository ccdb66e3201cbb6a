package metricsstream

import (
	"encoding/json"
	"iter"
	"strings"
	"testing"
	"time"

	"github.com/rxhystrix/rxhystrix/internal/clock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ordered is a JSON object decoded with the order of its keys, at every
// depth.
type ordered struct {
	keys   []string
	values map[string]any // nested objects are ordered too
}

// decodeOrdered decodes one JSON value, objects as ordered.
func decodeOrdered(t *testing.T, dec *json.Decoder) any {
	t.Helper()
	tok, err := dec.Token()
	require.NoError(t, err)
	switch tok {
	case json.Delim('{'):
		o := ordered{values: map[string]any{}}
		for dec.More() {
			k, err := dec.Token()
			require.NoError(t, err)
			key := k.(string)
			require.NotContains(t, o.values, key, "key %q twice", key)
			o.keys = append(o.keys, key)
			o.values[key] = decodeOrdered(t, dec)
		}
		_, err := dec.Token()
		require.NoError(t, err)
		return o
	case json.Delim('['):
		t.Fatal("no arrays in these streams")
	}
	return tok
}

// parseOrdered parses one event's JSON object.
func parseOrdered(t *testing.T, data string) ordered {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(data))
	dec.UseNumber()
	o, ok := decodeOrdered(t, dec).(ordered)
	require.True(t, ok, "an object: %s", data)
	require.False(t, dec.More(), "one object per event: %s", data)
	return o
}

// get follows a path of keys down nested objects.
func (o ordered) get(t *testing.T, path ...string) any {
	t.Helper()
	var v any = o
	for _, k := range path {
		obj, ok := v.(ordered)
		require.True(t, ok, "%v: not an object at %q", path, k)
		require.Contains(t, obj.values, k, "%v", path)
		v = obj.values[k]
	}
	return v
}

// object returns the nested object at path.
func (o ordered) object(t *testing.T, path ...string) ordered {
	t.Helper()
	v, ok := o.get(t, path...).(ordered)
	require.True(t, ok, "%v is an object", path)
	return v
}

// assertFields checks that the object at path has exactly the fields of
// want, in order, with want's values (numbers as int64).
func (o ordered) assertFields(t *testing.T, want []field, path ...string) {
	t.Helper()
	obj := o.object(t, path...)
	keys := make([]string, len(want))
	for i, f := range want {
		keys[i] = f.name
	}
	assert.Equal(t, keys, obj.keys, "%v: the fields, in Hystrix's order", path)
	for _, f := range want {
		got := obj.values[f.name]
		if n, ok := got.(json.Number); ok {
			v, err := n.Int64()
			require.NoError(t, err, "%v %s is an integer", path, f.name)
			got = v
		}
		assert.Equal(t, f.value, got, "%v %s", path, f.name)
	}
}

type field struct {
	name  string
	value any // int64, bool, string or nil
}

// oneEvent reads a frame that must hold one data event and parses it.
func oneEvent(t *testing.T, c *sseClient) ordered {
	t.Helper()
	frame := c.frame(t)
	require.Len(t, frame, 1, "one event per frame")
	return parseOrdered(t, frame[0])
}

func TestConfigHandlerWritesHystrixConfig(t *testing.T) {
	reg := userScenario(t)
	b := reg.Collapser("UserBatch", Config{Buckets: 20, PercentileBuckets: 12, PercentileDisabled: true})
	b.SetStatusProvider(collapserStatus{RequestCacheEnabled: true, MaxRequestsInBatch: 50, TimerDelay: 20 * time.Millisecond})
	reg.Collapser("AddressBatch", Config{})
	extra := CollapserSourceFunc(func() iter.Seq[CollapserSnapshot] {
		return func(yield func(CollapserSnapshot) bool) {
			yield(CollapserSnapshot{Key: "Elsewhere", MaxRequestsInBatch: 7, TimerDelay: 5 * time.Millisecond})
		}
	})
	srv := newStreamServer(t, ConfigHandler(WithRegistry(reg), WithCollapsers(extra)))
	c := connect(t, srv.URL)
	assert.Equal(t, "text/event-stream;charset=UTF-8", c.resp.Header.Get("Content-Type"))

	o := oneEvent(t, c)
	assert.Equal(t, []string{"type", "commands", "threadpools", "collapsers"}, o.keys)
	assert.Equal(t, "HystrixConfig", o.get(t, "type"))

	assert.Equal(t, []string{"GetUser"}, o.object(t, "commands").keys)
	o.assertFields(t, []field{
		{"threadPoolKey", "UserPool"}, {"groupKey", "UserService"},
		{"execution", o.get(t, "commands", "GetUser", "execution")},
		{"metrics", o.get(t, "commands", "GetUser", "metrics")},
		{"circuitBreaker", o.get(t, "commands", "GetUser", "circuitBreaker")},
	}, "commands", "GetUser")
	o.assertFields(t, []field{
		{"isolationStrategy", "THREAD"}, {"threadPoolKeyOverride", nil},
		{"requestCacheEnabled", true}, {"requestLogEnabled", false},
		{"timeoutEnabled", true}, {"fallbackEnabled", true},
		{"timeoutInMilliseconds", int64(1500)}, {"semaphoreSize", int64(10)},
		{"fallbackSemaphoreSize", int64(12)}, {"threadInterruptOnTimeout", true},
	}, "commands", "GetUser", "execution")
	o.assertFields(t, []field{
		{"healthBucketSizeInMs", int64(500)},
		{"percentileBucketSizeInMilliseconds", int64(10000)},
		{"percentileBucketCount", int64(6)}, // Hystrix writes the counters' 10 here
		{"percentileEnabled", true},
		{"counterBucketSizeInMilliseconds", int64(1000)},
		{"counterBucketCount", int64(10)},
	}, "commands", "GetUser", "metrics")
	o.assertFields(t, []field{
		{"enabled", true}, {"isForcedOpen", true},
		{"isForcedClosed", false}, // Hystrix writes isForcedOpen here
		{"requestVolumeThreshold", int64(20)}, {"errorPercentageThreshold", int64(50)},
		{"sleepInMilliseconds", int64(5000)},
	}, "commands", "GetUser", "circuitBreaker")

	assert.Equal(t, []string{"IdlePool", "UserPool"}, o.object(t, "threadpools").keys,
		"every pool, in key order, whether or not it has worked")
	o.assertFields(t, []field{
		{"coreSize", int64(10)}, {"maximumSize", int64(10)}, {"actualMaximumSize", int64(10)},
		{"maxQueueSize", int64(-1)}, {"queueRejectionThreshold", int64(5)},
		{"keepAliveTimeInMinutes", int64(0)}, {"allowMaximumSizeToDivergeFromCoreSize", false},
		{"counterBucketSizeInMilliseconds", int64(1000)}, {"counterBucketCount", int64(10)},
	}, "threadpools", "UserPool")

	assert.Equal(t, []string{"AddressBatch", "UserBatch", "Elsewhere"}, o.object(t, "collapsers").keys,
		"the registry's collapsers in key order, then the source's")
	o.assertFields(t, []field{
		{"maxRequestsInBatch", int64(50)}, {"timerDelayInMilliseconds", int64(20)},
		{"requestCacheEnabled", true}, {"metrics", o.get(t, "collapsers", "UserBatch", "metrics")},
	}, "collapsers", "UserBatch")
	o.assertFields(t, []field{
		{"percentileBucketSizeInMilliseconds", int64(5000)}, {"percentileBucketCount", int64(12)},
		{"percentileEnabled", false}, {"counterBucketSizeInMilliseconds", int64(500)},
		{"counterBucketCount", int64(20)},
	}, "collapsers", "UserBatch", "metrics")
	assert.Equal(t, int64(1<<31-1), mustInt(t, o.get(t, "collapsers", "AddressBatch", "maxRequestsInBatch")),
		"no cap reads as Hystrix's Integer.MAX_VALUE")
	o.assertFields(t, []field{
		{"maxRequestsInBatch", int64(7)}, {"timerDelayInMilliseconds", int64(5)}, {"requestCacheEnabled", false},
	}, "collapsers", "Elsewhere")
}

func mustInt(t *testing.T, v any) int64 {
	t.Helper()
	n, ok := v.(json.Number)
	require.True(t, ok, "a number: %v", v)
	i, err := n.Int64()
	require.NoError(t, err)
	return i
}

// statusFunc is a CommandStatusProvider that asks a function each time.
type statusFunc func() CommandStatus

func (f statusFunc) CommandStatus() CommandStatus { return f() }

func TestConfigHandlerTicksEveryFiveSecondsAndShowsLiveValues(t *testing.T) {
	reg, mc := newStreamRegistry()
	// The sleep window reports when the status was asked for, so each
	// event shows the time it was built at.
	reg.Command("C", Config{}).SetStatusProvider(statusFunc(func() CommandStatus {
		return CommandStatus{Properties: CommandProperties{SleepWindow: mc.Now().Sub(t0), AdaptiveLimit: "vegas"}}
	}))
	srv := newStreamServer(t, ConfigHandler(WithRegistry(reg)))
	c := connect(t, srv.URL)
	sleepAt := func(o ordered) int64 {
		return mustInt(t, o.get(t, "commands", "C", "circuitBreaker", "sleepInMilliseconds"))
	}
	first := oneEvent(t, c)
	assert.Equal(t, int64(0), sleepAt(first), "the first event at once")
	assert.Equal(t, "vegas", first.get(t, "commands", "C", "execution", "adaptiveLimit"))

	mc.Advance(DefaultConfigStreamInterval - time.Millisecond)
	mc.Advance(time.Millisecond)
	assert.Equal(t, int64(5000), sleepAt(oneEvent(t, c)), "the next after Hystrix's 5s, not before")
}

func TestConfigHandlerEscapesKeys(t *testing.T) {
	reg, _ := newStreamRegistry()
	key := `Get "User" <x>`
	reg.Command(key, Config{})
	reg.Pool(key, Config{})
	srv := newStreamServer(t, ConfigHandler(WithRegistry(reg)))
	o := oneEvent(t, connect(t, srv.URL))
	assert.Equal(t, []string{key}, o.object(t, "commands").keys)
	assert.Equal(t, []string{key}, o.object(t, "threadpools").keys)
	assert.Equal(t, key, o.get(t, "commands", key, "threadPoolKey"),
		"without a status provider the pool is the group, which is the key")
}

func TestUtilizationHandlerWritesHystrixUtilization(t *testing.T) {
	reg := userScenario(t)
	reg.Command("Idle", Config{})
	srv := newStreamServer(t, UtilizationHandler(WithRegistry(reg)))
	c := connect(t, srv.URL)

	o := oneEvent(t, c)
	assert.Equal(t, []string{"type", "commands", "threadpools"}, o.keys)
	assert.Equal(t, "HystrixUtilization", o.get(t, "type"))
	assert.Equal(t, []string{"GetUser", "Idle"}, o.object(t, "commands").keys)
	o.assertFields(t, []field{{"activeCount", int64(2)}}, "commands", "GetUser")
	o.assertFields(t, []field{{"activeCount", int64(0)}}, "commands", "Idle")
	assert.Equal(t, []string{"IdlePool", "UserPool"}, o.object(t, "threadpools").keys)
	o.assertFields(t, []field{
		{"activeCount", int64(1)}, {"queueSize", int64(2)}, {"corePoolSize", int64(10)}, {"poolSize", int64(3)},
	}, "threadpools", "UserPool")
	o.assertFields(t, []field{
		{"activeCount", int64(0)}, {"queueSize", int64(0)}, {"corePoolSize", int64(0)}, {"poolSize", int64(0)},
	}, "threadpools", "IdlePool")

	// The counters are read at each tick: the next event, after Hystrix's
	// 500ms, shows what started since.
	reg.Command("Idle", Config{}).MarkStart()
	reg.Pool("IdlePool", Config{}).SetQueueSize(3)
	mc := reg.clock.(*clock.Manual)
	mc.Advance(DefaultUtilizationStreamInterval)
	next := oneEvent(t, c)
	assert.Equal(t, int64(1), mustInt(t, next.get(t, "commands", "Idle", "activeCount")))
	assert.Equal(t, int64(3), mustInt(t, next.get(t, "threadpools", "IdlePool", "queueSize")))
}

func TestSiblingStreamsNameTheirConstructorWhenAnOptionIsNil(t *testing.T) {
	assert.PanicsWithValue(t, "metricsstream: ConfigHandler: option 1 is nil",
		func() { ConfigHandler(WithInterval(time.Second), nil) })
	assert.PanicsWithValue(t, "metricsstream: UtilizationHandler: option 0 is nil",
		func() { UtilizationHandler(nil) })
}

// A command with partitions lists each one's share in its "execution",
// in the order of its Config; one without lists none.
func TestConfigHandlerShowsPartitions(t *testing.T) {
	reg, _ := newStreamRegistry()
	reg.Command("Search", Config{}).SetStatusProvider(commandStatus{Partitions: []PartitionStatus{
		{Name: "live", Share: 0.75, Guaranteed: 8}, {Name: "batch", Share: 0.25, Guaranteed: 3},
	}})
	reg.Command("Lookup", Config{})
	srv := newStreamServer(t, ConfigHandler(WithRegistry(reg)))
	o := oneEvent(t, connect(t, srv.URL))
	partitions := o.object(t, "commands").object(t, "Search").object(t, "execution").object(t, "partitions")
	assert.Equal(t, []string{"live", "batch"}, partitions.keys)
	assert.Equal(t, json.Number("0.75"), partitions.get(t, "live"))
	assert.Equal(t, json.Number("0.25"), partitions.get(t, "batch"))
	assert.NotContains(t, o.object(t, "commands").object(t, "Lookup").object(t, "execution").keys, "partitions")
}

// A command with a backlog lists its size, timeout and order in its
// "execution", after Hystrix's fields.
func TestConfigHandlerShowsBacklogs(t *testing.T) {
	reg, _ := newStreamRegistry()
	reg.Command("Search", Config{}).SetStatusProvider(commandStatus{
		Backlog: BacklogStatus{Size: 40, Timeout: 1500 * time.Millisecond, Order: "FIFO", Waiting: 6},
	})
	reg.Command("Lookup", Config{})
	srv := newStreamServer(t, ConfigHandler(WithRegistry(reg)))
	o := oneEvent(t, connect(t, srv.URL))
	execution := o.object(t, "commands").object(t, "Search").object(t, "execution")
	assert.Equal(t, "backlog", execution.keys[len(execution.keys)-1])
	backlog := execution.object(t, "backlog")
	assert.Equal(t, []string{"size", "timeoutInMilliseconds", "order"}, backlog.keys)
	assert.Equal(t, json.Number("40"), backlog.get(t, "size"))
	assert.Equal(t, json.Number("1500"), backlog.get(t, "timeoutInMilliseconds"))
	assert.Equal(t, "FIFO", backlog.get(t, "order"))
	assert.NotContains(t, o.object(t, "commands").object(t, "Lookup").object(t, "execution").keys, "backlog")
}
