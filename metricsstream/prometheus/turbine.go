package prometheus

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/rxhystrix/rxhystrix/internal/label"
	"github.com/rxhystrix/rxhystrix/metricsstream/internal/reading"
	"github.com/rxhystrix/rxhystrix/metricsstream/turbine"
)

// TurbineInstances is what [TurbineCollector] reads: a
// *turbine.Aggregator.
type TurbineInstances interface {
	Instances() []turbine.Instance
}

var _ TurbineInstances = (*turbine.Aggregator)(nil)

// TurbineCollector is a [prometheus.Collector] over the instances of a
// Turbine (package turbine), labelled instance (the URL of its stream,
// its password redacted):
//
//	rxhystrix_turbine_instance_connected       gauge    1 while the instance's stream is read, else 0
//	rxhystrix_turbine_instance_objects         gauge    the instance's objects (commands, pools, collapsers) in the sum
//	rxhystrix_turbine_instance_ignored_events_total  counter  events of the instance that were not usable
//
// and, for a Turbine that finds its instances with a Discovery
// (turbine.WithDiscovery), without labels:
//
//	rxhystrix_turbine_discovery_failures_total                counter  discoveries that failed
//	rxhystrix_turbine_discovery_last_success_timestamp_seconds gauge   when a discovery last found the instances, 0 before
//
// An instance that is not connected is out of the sum, so an alert on
// rxhystrix_turbine_instance_connected == 0 says the dashboard shows
// less of the cluster than there is; one on
// time() - rxhystrix_turbine_discovery_last_success_timestamp_seconds
// says the list of instances may be out of date. Get one with
// [NewTurbineCollector]; it reads the Turbine at each scrape, and is safe
// for concurrent use.
type TurbineCollector struct {
	turbine TurbineInstances
}

// NewTurbineCollector returns a collector of t's instances. It panics if
// t is nil.
func NewTurbineCollector(t TurbineInstances) *TurbineCollector {
	if t == nil {
		panic("prometheus: NewTurbineCollector with nil argument")
	}
	return &TurbineCollector{turbine: t}
}

var (
	turbineLabels = []string{"instance"}

	turbineConnectedDesc = prometheus.NewDesc("rxhystrix_turbine_instance_connected",
		"1 while the Turbine reads the instance's stream, else 0: an instance not read is out of the sum.", turbineLabels, nil)
	turbineObjectsDesc = prometheus.NewDesc("rxhystrix_turbine_instance_objects",
		"The instance's objects (commands, pools, collapsers) in the Turbine's sum.", turbineLabels, nil)
	turbineIgnoredDesc = prometheus.NewDesc("rxhystrix_turbine_instance_ignored_events_total",
		"Events of the instance's stream that were not JSON objects with a type and a name, which the sum leaves out.",
		turbineLabels, nil)

	turbineDiscoveryFailuresDesc = prometheus.NewDesc("rxhystrix_turbine_discovery_failures_total",
		"Discoveries of the Turbine's instances that failed, which left the instances found before.", nil, nil)
	turbineDiscoveryFoundDesc = prometheus.NewDesc("rxhystrix_turbine_discovery_last_success_timestamp_seconds",
		"When a discovery last found the Turbine's instances, in seconds since the Unix epoch; 0 before the first.", nil, nil)
)

// Describe sends the descriptions of the metrics.
func (c *TurbineCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- turbineConnectedDesc
	ch <- turbineObjectsDesc
	ch <- turbineIgnoredDesc
	ch <- turbineDiscoveryFailuresDesc
	ch <- turbineDiscoveryFoundDesc
}

// Collect reads the Turbine's instances and sends their metrics.
func (c *TurbineCollector) Collect(ch chan<- prometheus.Metric) {
	for _, in := range c.turbine.Instances() {
		labels := []string{label.Value(in.RedactedURL())}
		connected := 0.0
		if in.Connected {
			connected = 1
		}
		ch <- gauge(turbineConnectedDesc, connected, labels)
		ch <- gauge(turbineObjectsDesc, float64(in.Objects), labels)
		ch <- prometheus.MustNewConstMetric(turbineIgnoredDesc, prometheus.CounterValue, float64(in.Ignored), labels...)
	}
	if s, ok := reading.TurbineDiscovery(c.turbine); ok {
		ch <- prometheus.MustNewConstMetric(turbineDiscoveryFailuresDesc, prometheus.CounterValue, float64(s.Failures))
		ch <- gauge(turbineDiscoveryFoundDesc, reading.UnixSeconds(s.Found), nil)
	}
}
