package otelmetrics

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/rxhystrix/rxhystrix/internal/label"
	"github.com/rxhystrix/rxhystrix/metricsstream"
	"github.com/rxhystrix/rxhystrix/metricsstream/internal/reading"
)

// instruments are the observable instruments one Register made: those
// of the command metrics both exporters report, by reading.CommandMetric
// (an Int64 instrument each, a Float64 one for the fractional ones), and
// the rest.
type instruments struct {
	commandInts                                       [reading.NumCommandMetrics]metric.Int64Observable
	commandFloats                                     [reading.NumCommandMetrics]metric.Float64Observable
	requestEventsDropped, requestEventsPanics         metric.Int64ObservableCounter
	poolAdaptiveLimit                                 metric.Int64ObservableGauge
	poolExecuted, poolRejected                        metric.Int64ObservableCounter
	poolActive, poolQueued, poolCoreSize, poolWorkers metric.Int64ObservableGauge
	collapserEvents                                   metric.Int64ObservableCounter
}

// Register makes the counters and gauges on meter (which should be named
// [ScopeName]) and registers the callback that reads the registry at each
// collection, so commands made later are reported too. Unregister the
// returned Registration to stop. It returns the meter's errors, joined,
// and ErrAlreadyRegistered if m is registered on meter already and not
// unregistered.
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
	floatCounter := func(i instrument) metric.Float64ObservableCounter {
		c, err := meter.Float64ObservableCounter(i.name, metric.WithUnit(i.unit), metric.WithDescription(i.description))
		errs = append(errs, err)
		return c
	}
	var observables []metric.Observable
	for cm := reading.CommandMetric(0); cm < reading.NumCommandMetrics; cm++ {
		i := commandInstruments[cm]
		switch {
		case cm.Fractional() && cm.Counter():
			in.commandFloats[cm] = floatCounter(i)
			observables = append(observables, in.commandFloats[cm])
		case cm.Fractional():
			in.commandFloats[cm] = floatGauge(i)
			observables = append(observables, in.commandFloats[cm])
		case cm.Counter():
			in.commandInts[cm] = counter(i)
			observables = append(observables, in.commandInts[cm])
		default:
			in.commandInts[cm] = gauge(i)
			observables = append(observables, in.commandInts[cm])
		}
	}
	in.requestEventsDropped = counter(requestEventsDropped)
	in.requestEventsPanics = counter(requestEventsPanics)
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
	observables = append(observables, in.requestEventsDropped, in.requestEventsPanics, in.poolAdaptiveLimit,
		in.poolExecuted, in.poolRejected, in.poolActive, in.poolQueued, in.poolCoreSize, in.poolWorkers, in.collapserEvents)
	return m.registrations.register(meter, meter, func(_ context.Context, o metric.Observer) error {
		in.observe(o, m.registry)
		return nil
	}, observables...)
}

// observe reports r and every command, pool and collapser of it, with
// the values the Prometheus collector reports.
func (in *instruments) observe(o metric.Observer, r *metricsstream.Registry) {
	o.ObserveInt64(in.requestEventsDropped, int64(r.DroppedRequestEvents()))
	o.ObserveInt64(in.requestEventsPanics, int64(r.PanickedSubscribers()))
	for c := range r.Commands() {
		s := c.Snapshot()
		attrs := commandAttributes(s)
		set := metric.WithAttributes(attrs...)
		for p := range reading.CommandPoints(c, &s) {
			opt := set
			if p.Metric.Labelled() {
				opt = metric.WithAttributes(attrs[0], attrs[1], commandLabelKeys[p.Metric].String(p.Label))
			}
			if f := in.commandFloats[p.Metric]; f != nil {
				o.ObserveFloat64(f, p.Value, opt)
			} else {
				o.ObserveInt64(in.commandInts[p.Metric], int64(p.Value), opt)
			}
		}
	}
	for p := range r.Pools() {
		s := p.Snapshot()
		set := metric.WithAttributes(PoolKey.String(label.Value(s.Key)))
		o.ObserveInt64(in.poolActive, s.ActiveCount, set)
		o.ObserveInt64(in.poolQueued, s.QueueSize, set)
		o.ObserveInt64(in.poolExecuted, s.Cumulative[metricsstream.PoolExecuted], set)
		o.ObserveInt64(in.poolRejected, s.Cumulative[metricsstream.PoolRejection], set)
		if s.HasStatus {
			o.ObserveInt64(in.poolCoreSize, int64(s.Status.CoreSize), set)
			o.ObserveInt64(in.poolWorkers, int64(s.Status.PoolSize), set)
			if s.Status.AdaptiveLimit != "" {
				o.ObserveInt64(in.poolAdaptiveLimit, int64(s.Status.CoreSize),
					metric.WithAttributes(PoolKey.String(label.Value(s.Key)), AlgorithmKey.String(s.Status.AdaptiveLimit)))
			}
		}
	}
	for c := range r.Collapsers() {
		key := CollapserKey.String(label.Value(c.Key()))
		for e := range metricsstream.NumCollapserEventTypes {
			o.ObserveInt64(in.collapserEvents, c.CumulativeCount(e),
				metric.WithAttributes(key, EventKey.String(e.String())))
		}
	}
}

// commandAttributes returns a command's name and group.
func commandAttributes(s metricsstream.CommandSnapshot) []attribute.KeyValue {
	return []attribute.KeyValue{
		CommandKey.String(label.Value(s.Key)),
		GroupKey.String(label.Value(reading.Group(s))),
	}
}
