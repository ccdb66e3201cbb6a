package prometheus

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/metricsstream/turbine"
)

// instances is a Turbine whose instances the test sets.
type instances []turbine.Instance

func (in instances) Instances() []turbine.Instance { return in }

func TestTurbineCollector(t *testing.T) {
	c := NewTurbineCollector(instances{
		{URL: "http://10.0.0.7:8080/hystrix.stream", Connected: true, Objects: 12, Ignored: 3},
		{URL: "http://ops:secret@10.0.0.8:8080/hystrix.stream", Err: errors.New("connection refused")},
	})
	mfs := gather(t, c) // pedantic: what Collect sends is what Describe says
	require.Len(t, mfs, 3)

	const want = `
# HELP rxhystrix_turbine_instance_connected 1 while the Turbine reads the instance's stream, else 0: an instance not read is out of the sum.
# TYPE rxhystrix_turbine_instance_connected gauge
rxhystrix_turbine_instance_connected{instance="http://10.0.0.7:8080/hystrix.stream"} 1
rxhystrix_turbine_instance_connected{instance="http://ops:xxxxx@10.0.0.8:8080/hystrix.stream"} 0
# HELP rxhystrix_turbine_instance_ignored_events_total Events of the instance's stream that were not JSON objects with a type and a name, which the sum leaves out.
# TYPE rxhystrix_turbine_instance_ignored_events_total counter
rxhystrix_turbine_instance_ignored_events_total{instance="http://10.0.0.7:8080/hystrix.stream"} 3
rxhystrix_turbine_instance_ignored_events_total{instance="http://ops:xxxxx@10.0.0.8:8080/hystrix.stream"} 0
# HELP rxhystrix_turbine_instance_objects The instance's objects (commands, pools, collapsers) in the Turbine's sum.
# TYPE rxhystrix_turbine_instance_objects gauge
rxhystrix_turbine_instance_objects{instance="http://10.0.0.7:8080/hystrix.stream"} 12
rxhystrix_turbine_instance_objects{instance="http://ops:xxxxx@10.0.0.8:8080/hystrix.stream"} 0
`
	assert.NoError(t, testutil.CollectAndCompare(c, strings.NewReader(want)))
	assert.PanicsWithValue(t, "prometheus: NewTurbineCollector with nil argument", func() { NewTurbineCollector(nil) })
}

// discovered is a Turbine that finds its instances with a Discovery, or
// not (ok).
type discovered struct {
	instances
	status turbine.DiscoveryStatus
	ok     bool
}

func (d discovered) Discovery() (turbine.DiscoveryStatus, bool) { return d.status, d.ok }

func TestTurbineCollectorOfADiscovery(t *testing.T) {
	found := time.Date(2026, 12, 5, 9, 0, 0, 500_000_000, time.UTC)
	c := NewTurbineCollector(discovered{status: turbine.DiscoveryStatus{Found: found, Failures: 2}, ok: true})
	want := fmt.Sprintf(`
# HELP rxhystrix_turbine_discovery_failures_total Discoveries of the Turbine's instances that failed, which left the instances found before.
# TYPE rxhystrix_turbine_discovery_failures_total counter
rxhystrix_turbine_discovery_failures_total 2
# HELP rxhystrix_turbine_discovery_last_success_timestamp_seconds When a discovery last found the Turbine's instances, in seconds since the Unix epoch; 0 before the first.
# TYPE rxhystrix_turbine_discovery_last_success_timestamp_seconds gauge
rxhystrix_turbine_discovery_last_success_timestamp_seconds %d.5
`, found.Unix())
	require.Len(t, gather(t, c), 2)
	assert.NoError(t, testutil.CollectAndCompare(c, strings.NewReader(want)))

	c = NewTurbineCollector(discovered{ok: true})
	assert.NoError(t, testutil.CollectAndCompare(c, strings.NewReader(`
# HELP rxhystrix_turbine_discovery_last_success_timestamp_seconds When a discovery last found the Turbine's instances, in seconds since the Unix epoch; 0 before the first.
# TYPE rxhystrix_turbine_discovery_last_success_timestamp_seconds gauge
rxhystrix_turbine_discovery_last_success_timestamp_seconds 0
`), "rxhystrix_turbine_discovery_last_success_timestamp_seconds"), "nothing found yet")

	assert.Empty(t, gather(t, NewTurbineCollector(discovered{ok: false})), "no discovery, no metrics of it")
}

// The collectors of several clusters register side by side, each under
// a label of its cluster, as package turbine's doc says.
func TestTurbineCollectorsOfClusters(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	for cluster, url := range map[string]string{"api": "http://10.0.0.7:8080/hystrix.stream", "batch": "http://10.0.0.9:8080/hystrix.stream"} {
		wrapped := prometheus.WrapRegistererWith(prometheus.Labels{"cluster": cluster}, reg)
		require.NoError(t, wrapped.Register(NewTurbineCollector(instances{{URL: url, Connected: true, Objects: 4}})))
	}
	const want = `
# HELP rxhystrix_turbine_instance_objects The instance's objects (commands, pools, collapsers) in the Turbine's sum.
# TYPE rxhystrix_turbine_instance_objects gauge
rxhystrix_turbine_instance_objects{cluster="api",instance="http://10.0.0.7:8080/hystrix.stream"} 4
rxhystrix_turbine_instance_objects{cluster="batch",instance="http://10.0.0.9:8080/hystrix.stream"} 4
`
	assert.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(want), "rxhystrix_turbine_instance_objects"))
}
