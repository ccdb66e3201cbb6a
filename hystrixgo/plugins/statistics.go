package plugins

import (
	"strings"

	metricCollector "github.com/rxhystrix/rxhystrix/hystrixgo/metric_collector"
)

// numCounters is how many counters of a MetricResult every collector
// sends: those of counterNames.
const numCounters = 11

// counterNames are the names of the counters as hystrix-go's statsd and
// graphite collectors write them after the circuit's, in the order of
// resultCounts, which is the order hystrix-go sends them in.
var counterNames = [numCounters]string{
	"attempts", "errors", "successes", "failures", "rejects", "shortCircuits", "timeouts",
	"fallbackSuccesses", "fallbackFailures", "contextCanceled", "contextDeadlineExceeded",
}

// resultCounts returns the counters of r in the order of counterNames.
func resultCounts(r metricCollector.MetricResult) [numCounters]float64 {
	return [numCounters]float64{
		r.Attempts, r.Errors, r.Successes, r.Failures, r.Rejects, r.ShortCircuits, r.Timeouts,
		r.FallbackSuccesses, r.FallbackFailures, r.ContextCanceled, r.ContextDeadlineExceeded,
	}
}

// circuitOpen returns what r says of the circuit, as hystrix-go's gauge
// circuitOpen: 0 after a success, 1 after a short-circuit. Any other
// result says nothing (ok false).
func circuitOpen(r metricCollector.MetricResult) (v int64, ok bool) {
	switch {
	case r.Successes > 0:
		return 0, true
	case r.ShortCircuits > 0:
		return 1, true
	}
	return 0, false
}

var statNameReplacer = strings.NewReplacer("/", "-", ":", "-", ".", "-")

// statNames are the names of one circuit's statistics.
type statNames struct {
	counters                                                  [numCounters]string // in the order of counterNames
	circuitOpen, totalDuration, runDuration, concurrencyInUse string
}

// circuitStatNames returns the names of the statistics of the circuit
// name, with "/", ":" and "." in it replaced with "-", as hystrix-go's
// statsd and graphite collectors name them.
func circuitStatNames(name string) statNames {
	circuit := statNameReplacer.Replace(name) + "."
	n := statNames{
		circuitOpen:      circuit + "circuitOpen",
		totalDuration:    circuit + "totalDuration",
		runDuration:      circuit + "runDuration",
		concurrencyInUse: circuit + "concurrencyInUse",
	}
	for i, c := range counterNames {
		n.counters[i] = circuit + c
	}
	return n
}
