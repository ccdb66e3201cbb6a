package hystrix

import (
	"errors"
	"fmt"
	"sync"
	"time"

	metricCollector "github.com/rxhystrix/rxhystrix/hystrixgo/metric_collector"
	"github.com/rxhystrix/rxhystrix/metricsstream"
)

// CircuitBreaker is the circuit of one name: rxhystrix's breaker of the
// name's command key, which trips on the key's health counts. It is safe
// for concurrent use.
type CircuitBreaker struct {
	// Name is the name the circuit was made for.
	Name string

	core       *core
	collectors []metricCollector.MetricCollector
	// collectorsMu has the collectors told of one command at a time, and
	// reset between commands, as hystrix-go's one goroutine per circuit
	// does: a collector written for it need not be safe for concurrent use.
	collectorsMu sync.Mutex
}

// GetCircuit returns the circuit of name, making it if there is none;
// created reports whether this call made it. The error is always nil.
func GetCircuit(name string) (*CircuitBreaker, bool, error) {
	cb, created := current().circuit(name)
	return cb, created, nil
}

// circuit returns the live circuit of name, making it on first use or
// after Flush.
func (e *engine) circuit(name string) (*CircuitBreaker, bool) {
	if cb, ok := e.circuits.Load(name); ok {
		return cb.(*CircuitBreaker), false
	}
	c := e.coreFor(name)
	e.mu.Lock()
	defer e.mu.Unlock()
	if cb, ok := e.circuits.Load(name); ok {
		return cb.(*CircuitBreaker), false
	}
	cb := &CircuitBreaker{Name: name, core: c, collectors: metricCollector.Registry.InitializeMetricCollectors(name)}
	// hystrix-go resets every collector a new circuit makes, before its
	// first Update: a collector may make its state in Reset alone.
	for _, mc := range cb.collectors {
		mc.Reset()
	}
	e.circuits.Store(name, cb)
	return cb, true
}

// Flush forgets every circuit: it resets their collectors and breakers
// (closed, with empty health counts), so that the next command or
// GetCircuit of a name makes its circuit afresh. Settings are kept, and
// so are the concurrency slots of runs still running: where hystrix-go
// gives each circuit a fresh pool, a run that timed out before Flush
// holds its slot until it returns (see "The bulkhead holds" in the
// package documentation).
func Flush() { current().flush() }

func (e *engine) flush() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.circuits.Range(func(name, v any) bool {
		cb := v.(*CircuitBreaker)
		cb.collectorsMu.Lock()
		for _, c := range cb.collectors {
			c.Reset()
		}
		cb.collectorsMu.Unlock()
		cb.core.breaker.Reset()
		e.circuits.Delete(name)
		return true
	})
}

// IsOpen reports whether the circuit is open (half-open included): it
// opens once the rolling window holds RequestVolumeThreshold requests and
// ErrorPercentThreshold percent of them failed. The health counts are
// taken every 250ms, so a circuit opens up to that long after the request
// that tips it.
func (circuit *CircuitBreaker) IsOpen() bool { return circuit.core.breaker.IsOpen() }

// AllowRequest reports whether a request may run: always while the
// circuit is closed; once SleepWindow has passed since it opened, to one
// caller, whose request is the trial that closes or re-opens it (report
// its outcome with ReportEvent).
func (circuit *CircuitBreaker) AllowRequest() bool { return circuit.core.breaker.AttemptExecution() }

// reportedEvent is an event type of ReportEvent: rxhystrix's event and
// the kind a collector is told.
type reportedEvent struct {
	event metricsstream.EventType
	kind  kind
}

// reportedEvents maps hystrix-go's event names to rxhystrix's events and the
// kind a collector is told.
var reportedEvents = map[string]reportedEvent{
	"success":                   {metricsstream.Success, kindSuccess},
	"failure":                   {metricsstream.Failure, kindFailure},
	"rejected":                  {metricsstream.PoolRejected, kindRejected},
	"short-circuit":             {metricsstream.ShortCircuited, kindShortCircuit},
	"timeout":                   {metricsstream.Timeout, kindTimeout},
	"context_canceled":          {metricsstream.Cancelled, kindCanceled},
	"context_deadline_exceeded": {metricsstream.Cancelled, kindDeadlineExceeded},
}

// ReportEvent records the outcome of a request the caller ran itself:
// eventTypes[0] is one of "success", "failure", "rejected",
// "short-circuit", "timeout", "context_canceled" and
// "context_deadline_exceeded", optionally followed by "fallback-success"
// or "fallback-failure". It counts in the circuit's health, closes or
// re-opens a half-open circuit, and is sent to the circuit's collectors.
// It returns an error, recording nothing, when eventTypes is empty or
// names an unknown event.
func (circuit *CircuitBreaker) ReportEvent(eventTypes []string, start time.Time, runDuration time.Duration) error {
	if len(eventTypes) == 0 {
		return errors.New("no event types sent for metrics")
	}
	ev, ok := reportedEvents[eventTypes[0]]
	if !ok {
		return fmt.Errorf("unknown event type %q", eventTypes[0])
	}
	var fb int32
	var counts metricsstream.EventCounts
	counts.Add(ev.event, 1)
	for _, t := range eventTypes[1:] {
		switch t {
		case "fallback-success":
			fb = fallbackSucceeded
			counts.Add(metricsstream.FallbackSuccess, 1)
		case "fallback-failure":
			fb = fallbackFailed
			counts.Add(metricsstream.FallbackFailure, 1)
		default:
			return fmt.Errorf("unknown event type %q", t)
		}
	}
	c := circuit.core
	clk := current().reg.Clock()
	executed := ev.kind == kindSuccess || ev.kind == kindFailure || ev.kind == kindTimeout
	c.metrics.MarkCompletion(&metricsstream.Completion{
		CommandKey:       c.key,
		GroupKey:         c.key,
		PoolKey:          c.key,
		Events:           counts,
		ExecutionLatency: runDuration,
		TotalLatency:     clk.Since(start),
		Executed:         executed,
	})
	switch ev.kind {
	case kindSuccess:
		c.breaker.MarkSuccess()
	case kindShortCircuit:
	default:
		c.breaker.MarkNonSuccess()
	}
	circuit.send(metricResult(ev.kind, fb, clk.Since(start), runDuration, circuit.concurrency()))
	return nil
}

// concurrency is the share of MaxConcurrentRequests in use, as
// hystrix-go's executorPool.ActiveCount()/Max: the pool's slots taken,
// which include those of runs whose callers timed out and left (the
// bulkhead holds them until run returns). A command whose run has ended
// and whose fallback runs holds no slot, as in hystrix-go, though it is
// still among the key's concurrent executions; those count only before
// the pool has metrics.
func (circuit *CircuitBreaker) concurrency() float64 {
	limit := circuit.core.maxConcurrent.Load()
	if limit <= 0 {
		return 0
	}
	var active int64
	if p, ok := circuit.core.reg.Metrics().LookupPool(circuit.core.key); ok {
		active = p.ActiveCount()
	} else {
		active = circuit.core.metrics.ConcurrentExecutions()
	}
	return float64(active) / float64(limit)
}

// update tells the collectors how a command ended; err is the rxhystrix
// command's error.
func (circuit *CircuitBreaker) update(rec *record, err error, total time.Duration) {
	k := kindOf(err)
	fb := rec.fallback.Load()
	if fb != 0 {
		k = kind(rec.kind.Load())
	}
	circuit.send(metricResult(k, fb, total, time.Duration(rec.runDuration.Load()), circuit.concurrency()))
}

func (circuit *CircuitBreaker) send(r metricCollector.MetricResult) {
	if len(circuit.collectors) == 0 {
		return
	}
	circuit.collectorsMu.Lock()
	defer circuit.collectorsMu.Unlock()
	for _, c := range circuit.collectors {
		c.Update(r)
	}
}
