package otelmetrics

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/rxhystrix/rxhystrix/metricsstream"
	"github.com/rxhystrix/rxhystrix/metricsstream/internal/reading"
)

// instruments are the observable instruments one Register made.
type instruments struct {
	commandEvents, completionsDropped, streamPanics            metric.Int64ObservableCounter
	requestEventsDropped, requestEventsPanics                  metric.Int64ObservableCounter
	circuitOpen, errorPercentage, healthRequests, healthErrors metric.Int64ObservableGauge
	circuitState                                               metric.Int64ObservableGauge
	concurrent, rollingMaxConcurrent                           metric.Int64ObservableGauge
	partitionGuaranteed, partitionInFlight                     metric.Int64ObservableGauge
	partitionRejected                                          metric.Int64ObservableCounter
	backlogSize, backlogWaiting                                metric.Int64ObservableGauge
	faultInjection                                             metric.Int64ObservableGauge
	faultsInjected                                             metric.Int64ObservableCounter
	sleepWindow, throttle                                      metric.Float64ObservableGauge
	adaptiveLimit, poolAdaptiveLimit                           metric.Int64ObservableGauge
	poolExecuted, poolRejected                                 metric.Int64ObservableCounter
	poolActive, poolQueued, poolCoreSize, poolWorkers          metric.Int64ObservableGauge
	collapserEvents                                            metric.Int64ObservableCounter
}

// Register makes the counters and gauges on meter (which should be named
// [ScopeName]) and registers the callback that reads the registry at each
// collection, so commands made later are reported too. Unregister the
// returned Registration to stop. It returns the meter's errors, joined.
//
// The latency histograms are not instruments of the meter: pass m to the
// reader's WithProducer as well (see the package documentation).
func (m *Metrics) Register(meter metric.Meter) (metric.Registration, error) {
	var (
		in   instruments
		errs []error
	)
	counter := func(i instrument) metric.Int64ObservableCounter {
		c, err := meter.Int64ObservableCounter(i.name, metric.WithUnit(i.unit), metric.WithDescription(i.description))
		errs = append(errs, err)
		return c
	}
	gauge := func(i instrument) metric.Int64ObservableGauge {
		g, err := meter.Int64ObservableGauge(i.name, metric.WithUnit(i.unit), metric.WithDescription(i.description))
		errs = append(errs, err)
		return g
	}
	floatGauge := func(i instrument) metric.Float64ObservableGauge {
		g, err := meter.Float64ObservableGauge(i.name, metric.WithUnit(i.unit), metric.WithDescription(i.description))
		errs = append(errs, err)
		return g
	}
	in.commandEvents = counter(commandEvents)
	in.completionsDropped = counter(completionsDropped)
	in.streamPanics = counter(streamPanics)
	in.requestEventsDropped = counter(requestEventsDropped)
	in.requestEventsPanics = counter(requestEventsPanics)
	in.circuitOpen = gauge(circuitOpen)
	in.circuitState = gauge(circuitState)
	in.errorPercentage = gauge(errorPercentage)
	in.healthRequests = gauge(healthRequests)
	in.healthErrors = gauge(healthErrors)
	in.concurrent = gauge(concurrent)
	in.rollingMaxConcurrent = gauge(rollingMaxConcurrent)
	in.partitionGuaranteed = gauge(partitionGuaranteed)
	in.partitionInFlight = gauge(partitionInFlight)
	in.partitionRejected = counter(partitionRejected)
	in.backlogSize = gauge(backlogSize)
	in.backlogWaiting = gauge(backlogWaiting)
	in.sleepWindow = floatGauge(sleepWindow)
	in.throttle = floatGauge(throttle)
	in.faultInjection = gauge(faultInjection)
	in.faultsInjected = counter(faultsInjected)
	in.adaptiveLimit = gauge(adaptiveLimit)
	in.poolAdaptiveLimit = gauge(poolAdaptiveLimit)
	in.poolExecuted = counter(poolExecuted)
	in.poolRejected = counter(poolRejected)
	in.poolActive = gauge(poolActive)
	in.poolQueued = gauge(poolQueued)
	in.poolCoreSize = gauge(poolCoreSize)
	in.poolWorkers = gauge(poolWorkers)
	in.collapserEvents = counter(collapserEvents)
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return meter.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		in.observe(o, m.registry)
		return nil
	},
		in.commandEvents, in.completionsDropped, in.circuitOpen, in.circuitState, in.errorPercentage, in.healthRequests,
		in.healthErrors, in.concurrent, in.rollingMaxConcurrent, in.poolExecuted, in.poolRejected,
		in.poolActive, in.poolQueued, in.poolCoreSize, in.poolWorkers, in.collapserEvents,
		in.streamPanics, in.requestEventsDropped, in.requestEventsPanics,
		in.partitionGuaranteed, in.partitionInFlight, in.partitionRejected,
		in.backlogSize, in.backlogWaiting, in.sleepWindow, in.throttle, in.adaptiveLimit, in.poolAdaptiveLimit,
		in.faultInjection, in.faultsInjected)
}

// observe reports r and every command, pool and collapser of it, with
// the values the Prometheus collector reports.
func (in *instruments) observe(o metric.Observer, r *metricsstream.Registry) {
	o.ObserveInt64(in.requestEventsDropped, int64(r.DroppedRequestEvents()))
	o.ObserveInt64(in.requestEventsPanics, int64(r.PanickedSubscribers()))
	for c := range r.Commands() {
		s := c.Snapshot()
		attrs := commandAttributes(s)
		for e := range reading.EventTypes() {
			o.ObserveInt64(in.commandEvents, s.Cumulative[e],
				metric.WithAttributes(attrs[0], attrs[1], EventKey.String(e.String())))
		}
		set := metric.WithAttributes(attrs...)
		open := int64(0)
		if s.Status.CircuitBreakerOpen {
			open = 1
		}
		o.ObserveInt64(in.circuitOpen, open, set)
		if st := s.Status.CircuitBreakerState; st != "" {
			for _, state := range metricsstream.CircuitStates {
				in1 := int64(0)
				if state == st {
					in1 = 1
				}
				o.ObserveInt64(in.circuitState, in1, metric.WithAttributes(attrs[0], attrs[1], CircuitStateKey.String(state)))
			}
		}
		o.ObserveInt64(in.errorPercentage, int64(s.Health.ErrorPercentage), set)
		o.ObserveInt64(in.healthRequests, s.Health.Total, set)
		o.ObserveInt64(in.healthErrors, s.Health.Errors, set)
		o.ObserveInt64(in.concurrent, s.ConcurrentExecutions, set)
		o.ObserveInt64(in.rollingMaxConcurrent, s.RollingMaxConcurrentExecutions, set)
		o.ObserveInt64(in.completionsDropped, int64(c.DroppedCompletions()), set)
		o.ObserveInt64(in.streamPanics, int64(c.PanickedSubscribers()), set)
		if p := s.Status.Properties; p.AdaptiveLimit != "" {
			o.ObserveInt64(in.adaptiveLimit, int64(p.MaxConcurrentRequests),
				metric.WithAttributes(attrs[0], attrs[1], AlgorithmKey.String(p.AdaptiveLimit)))
		}
		for _, p := range s.Status.Partitions {
			ps := metric.WithAttributes(attrs[0], attrs[1], PartitionKey.String(reading.LabelValue(p.Name)))
			o.ObserveInt64(in.partitionGuaranteed, int64(p.Guaranteed), ps)
			o.ObserveInt64(in.partitionInFlight, p.InFlight, ps)
			o.ObserveInt64(in.partitionRejected, int64(p.Rejected), ps)
		}
		if b := s.Status.Backlog; b.Size > 0 {
			o.ObserveInt64(in.backlogSize, int64(b.Size), set)
			o.ObserveInt64(in.backlogWaiting, b.Waiting, set)
		}
		if s.Status.Properties.SleepWindowVaries() {
			o.ObserveFloat64(in.sleepWindow, s.Status.CircuitBreakerSleepWindow.Seconds(), set)
		}
		if s.Status.Properties.Throttles() {
			o.ObserveFloat64(in.throttle, s.Status.CircuitBreakerThrottle, set)
		}
		if f := s.Status.Faults; f.Shown() {
			enabled := int64(0)
			if f.Enabled {
				enabled = 1
			}
			o.ObserveInt64(in.faultInjection, enabled, set)
			o.ObserveInt64(in.faultsInjected, f.Delays, metric.WithAttributes(attrs[0], attrs[1], FaultKey.String("delay")))
			o.ObserveInt64(in.faultsInjected, f.Errors, metric.WithAttributes(attrs[0], attrs[1], FaultKey.String("error")))
		}
	}
	for p := range r.Pools() {
		s := p.Snapshot()
		set := metric.WithAttributes(PoolKey.String(reading.LabelValue(s.Key)))
		o.ObserveInt64(in.poolActive, s.ActiveCount, set)
		o.ObserveInt64(in.poolQueued, s.QueueSize, set)
		o.ObserveInt64(in.poolExecuted, s.Cumulative[metricsstream.PoolExecuted], set)
		o.ObserveInt64(in.poolRejected, s.Cumulative[metricsstream.PoolRejection], set)
		if s.HasStatus {
			o.ObserveInt64(in.poolCoreSize, int64(s.Status.CoreSize), set)
			o.ObserveInt64(in.poolWorkers, int64(s.Status.PoolSize), set)
			if s.Status.AdaptiveLimit != "" {
				o.ObserveInt64(in.poolAdaptiveLimit, int64(s.Status.CoreSize),
					metric.WithAttributes(PoolKey.String(reading.LabelValue(s.Key)), AlgorithmKey.String(s.Status.AdaptiveLimit)))
			}
		}
	}
	for c := range r.Collapsers() {
		key := CollapserKey.String(reading.LabelValue(c.Key()))
		for e := range metricsstream.NumCollapserEventTypes {
			o.ObserveInt64(in.collapserEvents, c.CumulativeCount(e),
				metric.WithAttributes(key, EventKey.String(e.String())))
		}
	}
}

// commandAttributes returns a command's name and group.
func commandAttributes(s metricsstream.CommandSnapshot) []attribute.KeyValue {
	return []attribute.KeyValue{
		CommandKey.String(reading.LabelValue(s.Key)),
		GroupKey.String(reading.LabelValue(reading.Group(s))),
	}
}
