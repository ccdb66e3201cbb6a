package otelmetrics

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/rxhystrix/rxhystrix/internal/label"
	"github.com/rxhystrix/rxhystrix/metricsstream/internal/reading"
	"github.com/rxhystrix/rxhystrix/metricsstream/turbine"
)

// TurbineInstanceKey is the attribute of a Turbine's instance: the URL of
// its stream, its password redacted.
const TurbineInstanceKey = attribute.Key("rxhystrix.turbine.instance.url")

// TurbineInstances is what [RegisterTurbine] reads: a
// *turbine.Aggregator.
type TurbineInstances interface {
	Instances() []turbine.Instance
}

var _ TurbineInstances = (*turbine.Aggregator)(nil)

var (
	turbineConnected = instrument{"rxhystrix.turbine.instance.connected", "{instance}",
		"1 while the Turbine reads the instance's stream, else 0: an instance not read is out of the sum."}
	turbineObjects = instrument{"rxhystrix.turbine.instance.objects", "{object}",
		"The instance's objects (commands, pools, collapsers) in the Turbine's sum."}
	turbineIgnored = instrument{"rxhystrix.turbine.instance.ignored_events", "{event}",
		"Events of the instance's stream that were not JSON objects with a type and a name, which the sum leaves out."}
	turbineDiscoveryFailures = instrument{"rxhystrix.turbine.discovery.failures", "{discovery}",
		"Discoveries of the Turbine's instances that failed, which left the instances found before."}
	turbineDiscoveryFound = instrument{"rxhystrix.turbine.discovery.last_success", "s",
		"When a discovery last found the Turbine's instances, in seconds since the Unix epoch; 0 before the first."}
)

// turbineRegistrations are RegisterTurbine's, by meter and Turbine.
var turbineRegistrations registrations

// turbineRegistration is the key of a RegisterTurbine.
type turbineRegistration struct {
	meter metric.Meter
	t     TurbineInstances
}

// RegisterTurbine makes on meter (which should be named [ScopeName]) the
// instruments of a Turbine's instances (package turbine), those the
// Prometheus collector's TurbineCollector reports, with the attribute
// [TurbineInstanceKey]:
//
//	rxhystrix.turbine.instance.connected       gauge    {instance}  1 while the instance's stream is read, else 0
//	rxhystrix.turbine.instance.objects         gauge    {object}    the instance's objects in the sum
//	rxhystrix.turbine.instance.ignored_events  counter  {event}     events of the instance that were not usable
//
// and, for a Turbine that finds its instances with a Discovery
// (turbine.WithDiscovery), without attributes:
//
//	rxhystrix.turbine.discovery.failures       counter  {discovery}  discoveries that failed
//	rxhystrix.turbine.discovery.last_success   gauge    s            when a discovery last found the instances (Unix time), 0 before
//
// and registers the callback that reads t at each collection. Unregister
// the returned Registration to stop. It returns the meter's errors,
// joined, and ErrAlreadyRegistered if t is registered on meter already
// and not unregistered. It panics if t is nil.
func RegisterTurbine(meter metric.Meter, t TurbineInstances) (metric.Registration, error) {
	if t == nil {
		panic("otelmetrics: RegisterTurbine with nil instances")
	}
	connected, err1 := meter.Int64ObservableGauge(turbineConnected.name,
		metric.WithUnit(turbineConnected.unit), metric.WithDescription(turbineConnected.description))
	objects, err2 := meter.Int64ObservableGauge(turbineObjects.name,
		metric.WithUnit(turbineObjects.unit), metric.WithDescription(turbineObjects.description))
	ignored, err3 := meter.Int64ObservableCounter(turbineIgnored.name,
		metric.WithUnit(turbineIgnored.unit), metric.WithDescription(turbineIgnored.description))
	discoveryFailures, err4 := meter.Int64ObservableCounter(turbineDiscoveryFailures.name,
		metric.WithUnit(turbineDiscoveryFailures.unit), metric.WithDescription(turbineDiscoveryFailures.description))
	discoveryFound, err5 := meter.Float64ObservableGauge(turbineDiscoveryFound.name,
		metric.WithUnit(turbineDiscoveryFound.unit), metric.WithDescription(turbineDiscoveryFound.description))
	if err := errors.Join(err1, err2, err3, err4, err5); err != nil {
		return nil, err
	}
	return turbineRegistrations.register(turbineRegistration{meter, t}, meter, func(_ context.Context, o metric.Observer) error {
		for _, in := range t.Instances() {
			set := metric.WithAttributes(TurbineInstanceKey.String(label.Value(in.RedactedURL())))
			up := int64(0)
			if in.Connected {
				up = 1
			}
			o.ObserveInt64(connected, up, set)
			o.ObserveInt64(objects, int64(in.Objects), set)
			o.ObserveInt64(ignored, in.Ignored, set)
		}
		if s, ok := reading.TurbineDiscovery(t); ok {
			o.ObserveInt64(discoveryFailures, s.Failures)
			o.ObserveFloat64(discoveryFound, reading.UnixSeconds(s.Found))
		}
		return nil
	}, connected, objects, ignored, discoveryFailures, discoveryFound)
}
