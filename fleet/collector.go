package fleet

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/rxhystrix/rxhystrix/internal/label"
)

// Descriptions of the metrics of a Collector; the label is the command
// key, escaped as in package metricsstream/prometheus.
var (
	exchangesDesc = prometheus.NewDesc("rxhystrix_fleet_exchanges_total",
		"Exchanges of the command's health buckets with Redis that succeeded.", []string{"command"}, nil)
	failuresDesc = prometheus.NewDesc("rxhystrix_fleet_exchange_failures_total",
		"Exchanges of the command's health buckets with Redis that failed or timed out.", []string{"command"}, nil)
	fallbackDesc = prometheus.NewDesc("rxhystrix_fleet_local_fallback",
		"1 while the command's breaker judges on this instance's health alone, Redis having failed, else 0.", []string{"command"}, nil)
	instancesDesc = prometheus.NewDesc("rxhystrix_fleet_instances",
		"Other instances whose health the latest exchange found in the command's window.", []string{"command"}, nil)
	corruptDesc = prometheus.NewDesc("rxhystrix_fleet_corrupt_values",
		"Values of other instances that the latest exchange found in the command's window and left out of the sum, as corrupt.", []string{"command"}, nil)
	clockSkewDesc = prometheus.NewDesc("rxhystrix_fleet_clock_skew_seconds",
		"How far this instance's clock ran ahead of Redis's (negative: behind) at the latest successful exchange of the command's health buckets.", []string{"command"}, nil)
	fleetRequestsDesc = prometheus.NewDesc("rxhystrix_fleet_health_requests",
		"Requests in the health snapshot the command's breaker was last sent: the fleet's, or this instance's.", []string{"command"}, nil)
	fleetErrorPercentageDesc = prometheus.NewDesc("rxhystrix_fleet_error_percentage",
		"Errors per 100 requests in the health snapshot the command's breaker was last sent.", []string{"command"}, nil)
)

// Collector returns a prometheus.Collector of f's sources: exchanges,
// failures, whether each key has fallen back to local health, the other
// instances seen, the corrupt values skipped, this instance's clock skew from Redis (see
// Stats.ClockSkew: alert well before it nears an interval) and the
// health its breaker was last sent.
func (f *Fleet) Collector() prometheus.Collector { return collector{f} }

type collector struct{ f *Fleet }

func (c collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{exchangesDesc, failuresDesc, fallbackDesc, instancesDesc, corruptDesc, clockSkewDesc, fleetRequestsDesc, fleetErrorPercentageDesc} {
		ch <- d
	}
}

func (c collector) Collect(ch chan<- prometheus.Metric) {
	for k, st := range c.f.Stats() {
		key := label.Value(k)
		fallback := 0.0
		if st.Fallback {
			fallback = 1
		}
		ch <- prometheus.MustNewConstMetric(exchangesDesc, prometheus.CounterValue, float64(st.Exchanges), key)
		ch <- prometheus.MustNewConstMetric(failuresDesc, prometheus.CounterValue, float64(st.Failures), key)
		ch <- prometheus.MustNewConstMetric(fallbackDesc, prometheus.GaugeValue, fallback, key)
		ch <- prometheus.MustNewConstMetric(instancesDesc, prometheus.GaugeValue, float64(st.Instances), key)
		ch <- prometheus.MustNewConstMetric(corruptDesc, prometheus.GaugeValue, float64(st.Corrupt), key)
		if st.Exchanges > 0 { // no skew is known before
			ch <- prometheus.MustNewConstMetric(clockSkewDesc, prometheus.GaugeValue, st.ClockSkew.Seconds(), key)
		}
		ch <- prometheus.MustNewConstMetric(fleetRequestsDesc, prometheus.GaugeValue, float64(st.Health.Total), key)
		ch <- prometheus.MustNewConstMetric(fleetErrorPercentageDesc, prometheus.GaugeValue, float64(st.Health.ErrorPercentage), key)
	}
}
