package reading

import "github.com/rxhystrix/rxhystrix/metricsstream/turbine"

// TurbineDiscovery returns the status of the Discovery of t, a Turbine,
// and false when t has none: when it is not a *turbine.Aggregator (or
// another type with its Discovery method), or finds no instances by
// itself (turbine.WithDiscovery).
func TurbineDiscovery(t any) (turbine.DiscoveryStatus, bool) {
	d, ok := t.(interface {
		Discovery() (turbine.DiscoveryStatus, bool)
	})
	if !ok {
		return turbine.DiscoveryStatus{}, false
	}
	return d.Discovery()
}
