package plugins

import (
	"fmt"

	"github.com/DataDog/datadog-go/v5/statsd"

	metricCollector "github.com/rxhystrix/rxhystrix/hystrixgo/metric_collector"
)

// The names of the statistics a DatadogCollector sends, hystrix-go's. The
// circuit is not in the name: every statistic carries the tag
// hystrixcircuit:<circuit>, so one graph or monitor covers every circuit.
// A DatadogClient of one's own sees these names. They are spelled as
// hystrix-go spells them, underscore included, for the drop-in.
const (
	DM_CircuitOpen             = "hystrix.circuitOpen"
	DM_Attempts                = "hystrix.attempts"
	DM_Errors                  = "hystrix.errors"
	DM_Successes               = "hystrix.successes"
	DM_Failures                = "hystrix.failures"
	DM_Rejects                 = "hystrix.rejects"
	DM_ShortCircuits           = "hystrix.shortCircuits"
	DM_Timeouts                = "hystrix.timeouts"
	DM_FallbackSuccesses       = "hystrix.fallbackSuccesses"
	DM_FallbackFailures        = "hystrix.fallbackFailures"
	DM_ContextCanceled         = "hystrix.contextCanceled"
	DM_ContextDeadlineExceeded = "hystrix.contextDeadlineExceeded"
	DM_TotalDuration           = "hystrix.totalDuration"
	DM_RunDuration             = "hystrix.runDuration"
	DM_ConcurrencyInUse        = "hystrix.concurrencyInUse"
)

// datadogCounters are the names of the counters in the order of
// resultCounts.
var datadogCounters = [numCounters]string{
	DM_Attempts, DM_Errors, DM_Successes, DM_Failures, DM_Rejects, DM_ShortCircuits, DM_Timeouts,
	DM_FallbackSuccesses, DM_FallbackFailures, DM_ContextCanceled, DM_ContextDeadlineExceeded,
}

// DatadogClient is what a DatadogCollector needs of its client.
// *statsd.Client of github.com/DataDog/datadog-go/v5/statsd has these
// methods; a client of one's own can add tags, log, or send elsewhere.
type DatadogClient interface {
	Count(name string, value int64, tags []string, rate float64) error
	Gauge(name string, value float64, tags []string, rate float64) error
	TimeInMilliseconds(name string, value float64, tags []string, rate float64) error
}

// NewDatadogCollector returns, for metricCollector.Registry.Register, a
// factory of collectors that send to the DogStatsD agent at addr
// (host:port) through one client of github.com/DataDog/datadog-go/v5.
// prefix, which may be empty, starts every statistic's name, followed by
// a dot: "myapp" gives "myapp.hystrix.attempts". The client lives as long
// as the process, as in hystrix-go; NewDatadogCollectorWithClient takes
// one that can be closed.
func NewDatadogCollector(addr, prefix string) (func(string) metricCollector.MetricCollector, error) {
	c, err := newDatadogClient(addr, prefix)
	if err != nil {
		return nil, err
	}
	return NewDatadogCollectorWithClient(c), nil
}

// newDatadogClient is NewDatadogCollector's client: datadog-go's defaults,
// which buffer statistics for at most 100 ms as hystrix-go's buffered
// client did, with prefix as the namespace.
func newDatadogClient(addr, prefix string) (*statsd.Client, error) {
	var opts []statsd.Option
	if prefix != "" {
		// datadog-go adds the dot; an empty namespace would become ".".
		opts = append(opts, statsd.WithNamespace(prefix))
	}
	c, err := statsd.New(addr, opts...)
	if err != nil {
		return nil, fmt.Errorf("plugins: datadog client for %q: %w", addr, err)
	}
	return c, nil
}

// NewDatadogCollectorWithClient returns, for
// metricCollector.Registry.Register, a factory of collectors that send to
// client.
func NewDatadogCollectorWithClient(client DatadogClient) func(string) metricCollector.MetricCollector {
	return func(name string) metricCollector.MetricCollector {
		return &DatadogCollector{client: client, tags: []string{"hystrixcircuit:" + name}}
	}
}

// DatadogCollector sends one circuit's results to Datadog, tagged
// hystrixcircuit:<circuit>.
type DatadogCollector struct {
	client DatadogClient
	tags   []string
}

// Update sends the statistics of one finished command: the counters that
// are not 0, the gauge DM_CircuitOpen (0 after a success, 1 after a
// short-circuit), the durations in milliseconds, and DM_ConcurrencyInUse,
// the share of MaxConcurrentRequests in use in percent, as a timing. A
// statistic the client refuses is logged with the standard logger.
func (d *DatadogCollector) Update(r metricCollector.MetricResult) {
	if v, ok := circuitOpen(r); ok {
		d.gauge(DM_CircuitOpen, float64(v))
	}
	for i, n := range resultCounts(r) {
		d.count(datadogCounters[i], n)
	}
	d.timing(DM_TotalDuration, float64(r.TotalDuration.Milliseconds()))
	d.timing(DM_RunDuration, float64(r.RunDuration.Milliseconds()))
	d.timing(DM_ConcurrencyInUse, 100*r.ConcurrencyInUse)
}

// count sends a counter that is not 0.
func (d *DatadogCollector) count(name string, n float64) {
	if n != 0 {
		logUnsent("datadog", name, d.client.Count(name, int64(n), d.tags, 1))
	}
}

func (d *DatadogCollector) gauge(name string, v float64) {
	logUnsent("datadog", name, d.client.Gauge(name, v, d.tags, 1))
}

func (d *DatadogCollector) timing(name string, ms float64) {
	logUnsent("datadog", name, d.client.TimeInMilliseconds(name, ms, d.tags, 1))
}

// Reset does nothing: Datadog keeps no state of the circuit here.
func (d *DatadogCollector) Reset() {}
