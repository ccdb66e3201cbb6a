package plugins

import (
	"fmt"
	"time"

	metrics "github.com/rcrowley/go-metrics"

	metricCollector "github.com/rxhystrix/rxhystrix/hystrixgo/metric_collector"
)

// GraphiteCollector adds one circuit's results to go-metrics' default
// registry (github.com/rcrowley/go-metrics), from which a GraphiteReporter
// sends them to Graphite, as hystrix-go's graphite collector does.
type GraphiteCollector struct {
	registry metrics.Registry
	names    statNames
}

// NewGraphiteCollector returns the collector of the circuit name, for
// metricCollector.Registry.Register. Its statistics are named
// <circuit>.<statistic>, with "/", ":" and "." in the circuit's name
// replaced with "-"; InitializeGraphiteCollector's Prefix comes before.
func NewGraphiteCollector(name string) metricCollector.MetricCollector {
	return newGraphiteCollector(name, metrics.DefaultRegistry)
}

func newGraphiteCollector(name string, r metrics.Registry) *GraphiteCollector {
	return &GraphiteCollector{registry: r, names: circuitStatNames(name)}
}

// Update adds the statistics of one finished command: to the go-metrics
// counters the counts that are not 0, to the gauge circuitOpen 0 after a
// success and 1 after a short-circuit, and to the go-metrics timers
// totalDuration and runDuration the durations. A statistic is registered
// with go-metrics when it is first not 0, as in hystrix-go, so a circuit
// that never timed out sends no timeouts. A name that go-metrics holds as
// another kind of metric is logged with the standard logger and skipped.
func (g *GraphiteCollector) Update(r metricCollector.MetricResult) {
	if v, ok := circuitOpen(r); ok {
		g.gauge(g.names.circuitOpen, v)
	}
	for i, n := range resultCounts(r) {
		g.count(g.names.counters[i], n)
	}
	g.time(g.names.totalDuration, r.TotalDuration)
	g.time(g.names.runDuration, r.RunDuration)
}

func (g *GraphiteCollector) count(name string, n float64) {
	if n == 0 {
		return
	}
	if c, ok := registered(g.registry, name, "a counter", metrics.NewCounter); ok {
		c.Inc(int64(n))
	}
}

func (g *GraphiteCollector) gauge(name string, v int64) {
	if m, ok := registered(g.registry, name, "a gauge", metrics.NewGauge); ok {
		m.Update(v)
	}
}

func (g *GraphiteCollector) time(name string, d time.Duration) {
	if t, ok := registered(g.registry, name, "a timer", metrics.NewTimer); ok {
		t.Update(d)
	}
}

// registered returns the metric r holds under name, registering one that
// newMetric makes if there is none. When r holds another kind of metric
// there, it logs so, naming kind, the kind wanted, and ok is false.
func registered[M any](r metrics.Registry, name, kind string, newMetric func() M) (m M, ok bool) {
	m, ok = r.GetOrRegister(name, newMetric).(M)
	if !ok {
		logUnsent("graphite", name, fmt.Errorf("go-metrics holds another kind of metric under the name, not %s", kind))
	}
	return m, ok
}

// Reset does nothing, as in hystrix-go: the go-metrics counters are
// cumulative, and Graphite derives rates from them.
func (g *GraphiteCollector) Reset() {}
