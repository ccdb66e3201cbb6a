package metricsstream

import (
	"encoding/json"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A command with partitions writes each partition's share, guarantee,
// executions in flight and refusals as objects keyed by the partition's
// name, after every field of Hystrix's; a command without writes none.
func TestHandlerShowsPartitions(t *testing.T) {
	reg, mc := newStreamRegistry()
	partitioned := reg.Command("Search", Config{})
	partitioned.SetStatusProvider(commandStatus{
		Properties: CommandProperties{Isolation: "SEMAPHORE", MaxConcurrentRequests: 10},
		Partitions: []PartitionStatus{
			{Name: "live", Share: 0.75, Guaranteed: 8, InFlight: 3, Rejected: 0},
			{Name: `batch "nightly"`, Share: 0.25, Guaranteed: 3, InFlight: 7, Rejected: 12},
		},
	})
	plain := reg.Command("Lookup", Config{})
	plain.SetStatusProvider(commandStatus{Properties: CommandProperties{Isolation: "SEMAPHORE", MaxConcurrentRequests: 10}})
	recordEvents(partitioned, time.Millisecond, time.Millisecond, Success)
	recordEvents(plain, time.Millisecond, time.Millisecond, Success)
	mc.Advance(time.Second)

	frame := c0(t, reg)
	objs := objectsOfFrame(t, frame)
	require.Equal(t, []string{"HystrixCommand Lookup", "HystrixCommand Search"}, names(objs))
	lookup, search := objs[0], objs[1]

	fields := []string{"partitionShare", "partitionGuaranteed", "partitionInFlight", "partitionRejected"}
	assert.Equal(t, fields, search.keys[len(search.keys)-len(fields):], "the partitions come last")
	want := map[string]map[string]any{
		"partitionShare":      {"live": json.Number("0.75"), `batch "nightly"`: json.Number("0.25")},
		"partitionGuaranteed": {"live": json.Number("8"), `batch "nightly"`: json.Number("3")},
		"partitionInFlight":   {"live": json.Number("3"), `batch "nightly"`: json.Number("7")},
		"partitionRejected":   {"live": json.Number("0"), `batch "nightly"`: json.Number("12")},
	}
	for _, f := range fields {
		assert.Equal(t, want[f], search.values[f], f)
		assert.NotContains(t, lookup.keys, f)
	}
	assert.Contains(t, frame[1], `"partitionShare":{"live":0.75,"batch \"nightly\"":0.25}`, "in the order of the Config")
}

// A command with a backlog writes its size and its waiters last; a
// command without writes neither.
func TestHandlerShowsBacklogs(t *testing.T) {
	reg, mc := newStreamRegistry()
	backlogged := reg.Command("Search", Config{})
	backlogged.SetStatusProvider(commandStatus{
		Properties: CommandProperties{Isolation: "SEMAPHORE", MaxConcurrentRequests: 10},
		Backlog: BacklogStatus{Size: 40, Timeout: time.Second, Order: "LIFO", Waiting: 6,
			Admitted: 90, WaitTime: 4500 * time.Millisecond, Full: 3, Expired: 2},
	})
	plain := reg.Command("Lookup", Config{})
	plain.SetStatusProvider(commandStatus{Properties: CommandProperties{Isolation: "SEMAPHORE", MaxConcurrentRequests: 10}})
	recordEvents(backlogged, time.Millisecond, time.Millisecond, Success)
	recordEvents(plain, time.Millisecond, time.Millisecond, Success)
	mc.Advance(time.Second)

	objs := objectsOfFrame(t, c0(t, reg))
	require.Equal(t, []string{"HystrixCommand Lookup", "HystrixCommand Search"}, names(objs))
	lookup, search := objs[0], objs[1]
	fields := []string{"backlogSize", "backlogWaiting", "cumulativeCountBacklogAdmitted", "cumulativeBacklogWaitTimeInMilliseconds",
		"cumulativeCountBacklogFull", "cumulativeCountBacklogExpired"}
	assert.Equal(t, fields, search.keys[len(search.keys)-len(fields):], "the backlog comes last")
	for field, want := range map[string]string{"backlogSize": "40", "backlogWaiting": "6", "cumulativeCountBacklogAdmitted": "90",
		"cumulativeBacklogWaitTimeInMilliseconds": "4500", "cumulativeCountBacklogFull": "3", "cumulativeCountBacklogExpired": "2"} {
		assert.Equal(t, json.Number(want), search.values[field], field)
	}
	for _, f := range fields {
		assert.NotContains(t, lookup.keys, f)
	}
}

// A share that is not a number (a CommandStatusProvider's own) writes
// null, as every other float of the stream does: a bare NaN or +Inf is
// not JSON, and the dashboard and Turbine would drop the whole command's
// object, and the configuration stream's whole frame.
func TestHandlerWritesNullForAShareThatIsNotANumber(t *testing.T) {
	reg, _ := newStreamRegistry()
	m := reg.Command("Search", Config{})
	m.SetStatusProvider(commandStatus{
		Properties: CommandProperties{Isolation: "SEMAPHORE", MaxConcurrentRequests: 10},
		Partitions: []PartitionStatus{
			{Name: "live", Share: math.NaN(), Guaranteed: 8},
			{Name: "batch", Share: math.Inf(1), Guaranteed: 3},
		},
	})

	objs := objectsOfFrame(t, c0(t, reg))
	require.Len(t, objs, 1)
	assert.Equal(t, map[string]any{"live": nil, "batch": nil}, objs[0].values["partitionShare"])

	rec := serveOnce(ConfigHandler(WithRegistry(reg)), http.MethodGet, "")
	data, _, ok := strings.Cut(strings.TrimPrefix(rec.Body.String(), "data: "), "\n\n")
	require.True(t, ok, rec.Body.String())
	cfg := parseObject(t, data)
	e := cfg.values["commands"].(map[string]any)["Search"].(map[string]any)["execution"].(map[string]any)
	assert.Equal(t, map[string]any{"live": nil, "batch": nil}, e["partitions"])
}
