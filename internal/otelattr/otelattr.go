// Package otelattr holds the OpenTelemetry attribute keys that the
// metrics (metricsstream/otelmetrics) and the spans (oteltrace) of
// rxhystrix's commands share, so that a span and its command's metrics
// can be joined.
package otelattr

import "go.opentelemetry.io/otel/attribute"

// The attribute keys of a command's name, its group, its worker pool and
// the collapser whose batches it runs.
const (
	CommandKey   = attribute.Key("rxhystrix.command.name")
	GroupKey     = attribute.Key("rxhystrix.command.group")
	PoolKey      = attribute.Key("rxhystrix.pool.name")
	CollapserKey = attribute.Key("rxhystrix.collapser.name")
)

// FaultKey names the kind of a fault injected into a command's executions
// (command.Config.Faults): "delay" or "error".
const FaultKey = attribute.Key("rxhystrix.fault")
