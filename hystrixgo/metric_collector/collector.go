package metricCollector

import (
	"sync"
	"time"
)

// MetricCollector receives the result of every finished command of one
// circuit. Update is called once per command, on the caller's goroutine
// before the caller gets the result; it must not block. Reset is called
// once as the circuit makes the collector, before any Update, and when
// hystrix.Flush forgets the circuit. As in hystrix-go, a circuit
// calls its collector's methods one at a time, never concurrently.
type MetricCollector interface {
	Update(MetricResult)
	Reset()
}

// MetricResult is what happened in one command, as counts of 0 or 1:
// Attempts is always 1; a success counts Successes; a failure, rejection,
// short-circuit or timeout counts itself and Errors; a context that ended
// first counts ContextCanceled or ContextDeadlineExceeded only; the
// fallback's outcome adds FallbackSuccesses or FallbackFailures.
// ConcurrencyInUse is the share of the circuit's MaxConcurrentRequests in
// use when the command ended.
type MetricResult struct {
	Attempts                float64
	Errors                  float64
	Successes               float64
	Failures                float64
	Rejects                 float64
	ShortCircuits           float64
	Timeouts                float64
	FallbackSuccesses       float64
	FallbackFailures        float64
	ContextCanceled         float64
	ContextDeadlineExceeded float64
	TotalDuration           time.Duration
	RunDuration             time.Duration
	ConcurrencyInUse        float64
}

// Registry holds the collector factories every new circuit calls. As in
// hystrix-go it is a variable of the registry type, not a pointer, so
// &Registry has its methods.
var Registry = metricCollectorRegistry{}

// metricCollectorRegistry is the type of Registry. It is safe for
// concurrent use.
type metricCollectorRegistry struct {
	mu        sync.RWMutex
	factories []func(name string) MetricCollector
}

// Register adds a factory: every circuit made from now on calls it once
// with its name and sends its results to the collector it returns.
func (m *metricCollectorRegistry) Register(initMetricCollector func(string) MetricCollector) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.factories = append(m.factories, initMetricCollector)
}

// InitializeMetricCollectors calls every registered factory with name
// and returns the collectors, in the order the factories were
// registered.
func (m *metricCollectorRegistry) InitializeMetricCollectors(name string) []MetricCollector {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if len(m.factories) == 0 {
		return nil
	}
	cs := make([]MetricCollector, len(m.factories))
	for i, f := range m.factories {
		cs[i] = f(name)
	}
	return cs
}
