// Package metricCollector is hystrix-go's metric_collector for the
// drop-in package hystrix (github.com/rxhystrix/rxhystrix/hystrixgo): a
// user's own collectors, registered with [Registry], receive one Update
// per finished command, as they did under hystrix-go.
//
// Unlike hystrix-go's, the Registry starts empty: the circuits' health and
// the stream come from rxhystrix's own metrics (package metricsstream),
// which need no collector. Register [NewDefaultMetricCollector] to keep
// hystrix-go's rolling counters as well.
package metricCollector
