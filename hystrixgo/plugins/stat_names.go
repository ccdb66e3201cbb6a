package plugins

import "strings"

var statNameReplacer = strings.NewReplacer("/", "-", ":", "-", ".", "-")

// statNames are the names of one circuit's statistics.
type statNames struct {
	circuitOpen, attempts, errors, successes, failures, rejects, shortCircuits,
	timeouts, fallbackSuccesses, fallbackFailures, canceled, deadline,
	totalDuration, runDuration, concurrencyInUse string
}

// circuitStatNames returns the names of the statistics of the circuit
// name, with "/", ":" and "." in it replaced with "-", as hystrix-go's
// statsd and graphite collectors name them.
func circuitStatNames(name string) statNames {
	circuit := statNameReplacer.Replace(name)
	n := func(s string) string { return circuit + "." + s }
	return statNames{
		circuitOpen:       n("circuitOpen"),
		attempts:          n("attempts"),
		errors:            n("errors"),
		successes:         n("successes"),
		failures:          n("failures"),
		rejects:           n("rejects"),
		shortCircuits:     n("shortCircuits"),
		timeouts:          n("timeouts"),
		fallbackSuccesses: n("fallbackSuccesses"),
		fallbackFailures:  n("fallbackFailures"),
		canceled:          n("contextCanceled"),
		deadline:          n("contextDeadlineExceeded"),
		totalDuration:     n("totalDuration"),
		runDuration:       n("runDuration"),
		concurrencyInUse:  n("concurrencyInUse"),
	}
}
