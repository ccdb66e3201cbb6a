// Package reading is what the exporters of metricsstream (the Prometheus
// collector and the OpenTelemetry instruments) read from a
// [metricsstream.Registry], so that both report the same values with the
// same meaning: the group of a command, the event types they count, the
// values of every metric of a command (CommandPoints, which each exporter
// names in its own way), and cumulative latency histograms folded from the closed
// buckets of the percentile window.
//
// Nothing here locks: each exporter holds its own lock around a
// collection.
package reading
