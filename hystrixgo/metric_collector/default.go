package metricCollector

import (
	"sync"

	"github.com/rxhystrix/rxhystrix/hystrixgo/rolling"
)

// DefaultMetricCollector keeps hystrix-go's rolling counters of one
// circuit: each count over the last 10 seconds and the durations over
// the last 60. It is safe for concurrent use.
type DefaultMetricCollector struct {
	mu sync.RWMutex

	numRequests, errors, successes, failures, rejects, shortCircuits,
	timeouts, fallbackSuccesses, fallbackFailures, contextCanceled,
	contextDeadlineExceeded *rolling.Number

	totalDuration, runDuration *rolling.Timing
}

// NewDefaultMetricCollector returns an empty DefaultMetricCollector; it
// has the signature Registry.Register takes. name is not used.
func NewDefaultMetricCollector(name string) MetricCollector {
	d := &DefaultMetricCollector{}
	d.Reset()
	return d
}

func (d *DefaultMetricCollector) number(p **rolling.Number) *rolling.Number {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return *p
}

func (d *DefaultMetricCollector) timing(p **rolling.Timing) *rolling.Timing {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return *p
}

// NumRequests counts the attempts.
func (d *DefaultMetricCollector) NumRequests() *rolling.Number { return d.number(&d.numRequests) }

// Errors counts failures, rejections, short-circuits and timeouts.
func (d *DefaultMetricCollector) Errors() *rolling.Number { return d.number(&d.errors) }

// Successes counts the runs that succeeded.
func (d *DefaultMetricCollector) Successes() *rolling.Number { return d.number(&d.successes) }

// Failures counts the runs that returned an error.
func (d *DefaultMetricCollector) Failures() *rolling.Number { return d.number(&d.failures) }

// Rejects counts the commands refused for MaxConcurrentRequests.
func (d *DefaultMetricCollector) Rejects() *rolling.Number { return d.number(&d.rejects) }

// ShortCircuits counts the commands refused by the open circuit.
func (d *DefaultMetricCollector) ShortCircuits() *rolling.Number { return d.number(&d.shortCircuits) }

// Timeouts counts the runs that outlasted the timeout.
func (d *DefaultMetricCollector) Timeouts() *rolling.Number { return d.number(&d.timeouts) }

// FallbackSuccesses counts the fallbacks that succeeded.
func (d *DefaultMetricCollector) FallbackSuccesses() *rolling.Number {
	return d.number(&d.fallbackSuccesses)
}

// FallbackFailures counts the fallbacks that failed.
func (d *DefaultMetricCollector) FallbackFailures() *rolling.Number {
	return d.number(&d.fallbackFailures)
}

// ContextCanceled counts the commands whose context was cancelled first.
func (d *DefaultMetricCollector) ContextCanceled() *rolling.Number {
	return d.number(&d.contextCanceled)
}

// ContextDeadlineExceeded counts the commands whose context's deadline
// passed first.
func (d *DefaultMetricCollector) ContextDeadlineExceeded() *rolling.Number {
	return d.number(&d.contextDeadlineExceeded)
}

// TotalDuration holds how long callers waited.
func (d *DefaultMetricCollector) TotalDuration() *rolling.Timing { return d.timing(&d.totalDuration) }

// RunDuration holds how long the runs took.
func (d *DefaultMetricCollector) RunDuration() *rolling.Timing { return d.timing(&d.runDuration) }

// Update adds r to the counters.
func (d *DefaultMetricCollector) Update(r MetricResult) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	d.numRequests.Increment(r.Attempts)
	d.errors.Increment(r.Errors)
	d.successes.Increment(r.Successes)
	d.failures.Increment(r.Failures)
	d.rejects.Increment(r.Rejects)
	d.shortCircuits.Increment(r.ShortCircuits)
	d.timeouts.Increment(r.Timeouts)
	d.fallbackSuccesses.Increment(r.FallbackSuccesses)
	d.fallbackFailures.Increment(r.FallbackFailures)
	d.contextCanceled.Increment(r.ContextCanceled)
	d.contextDeadlineExceeded.Increment(r.ContextDeadlineExceeded)
	d.totalDuration.Add(r.TotalDuration)
	d.runDuration.Add(r.RunDuration)
}

// Reset empties every counter.
func (d *DefaultMetricCollector) Reset() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, p := range []**rolling.Number{&d.numRequests, &d.errors, &d.successes, &d.failures,
		&d.rejects, &d.shortCircuits, &d.timeouts, &d.fallbackSuccesses, &d.fallbackFailures,
		&d.contextCanceled, &d.contextDeadlineExceeded} {
		*p = rolling.NewNumber()
	}
	d.totalDuration = rolling.NewTiming()
	d.runDuration = rolling.NewTiming()
}
