// Package rolling holds hystrix-go's rolling statistics, for collectors
// written against github.com/afex/hystrix-go/hystrix/rolling: a [Number]
// summed over the last 10 one-second buckets and a [Timing] of the
// durations of the last 60 seconds.
//
// rxhystrix's own metrics (package metricsstream) do not use it; it exists
// so that code reading hystrix-go's DefaultMetricCollector keeps working.
package rolling
