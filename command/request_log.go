package command

import (
	"sync"

	"github.com/rxhystrix/rxhystrix/metricsstream"
)

// RequestLogCapacity is how many executions a RequestLog keeps, as
// Hystrix's HystrixRequestLog.MAX_STORAGE; later ones are counted in
// RequestLog.Dropped and otherwise left out, so that a runaway request
// cannot grow its log without bound.
const RequestLogCapacity = 1000

// RequestLog lists the executions of one request context, as Hystrix's
// HystrixRequestLog: every command and observable command executed with
// the request context, cache hits and collapsed batches included, except
// those of keys whose Config.RequestLogDisabled is set. An execution is
// recorded when it ends (Hystrix adds a command when it starts), so the
// log lists executions in the order they ended and leaves out those still
// running. Get one with RequestLogFrom.
//
// A RequestLog is safe for concurrent use. A nil *RequestLog is an empty
// log.
type RequestLog struct {
	mu         sync.Mutex
	executions []Execution
	dropped    int
}

// Execution is one execution in a RequestLog: its key, its events, how
// long its user code ran, and the cache key or collapser it ran for. It is
// the type the request events stream publishes (see
// metricsstream.RequestExecution for its fields); its String method
// formats it as the request log shows it: "GetUser[SUCCESS][12ms]".
type Execution = metricsstream.RequestExecution

// Executions returns a copy of the executions logged so far, in the order
// they ended.
func (l *RequestLog) Executions() []Execution {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Execution(nil), l.executions...)
}

// Len returns how many executions the log holds.
func (l *RequestLog) Len() int {
	if l == nil {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.executions)
}

// Dropped returns how many executions were left out because the log was
// full (see RequestLogCapacity).
func (l *RequestLog) Dropped() int {
	if l == nil {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.dropped
}

// String formats the log as Hystrix's getExecutedCommandsAsString, for a
// log line or a response header (see metricsstream.RequestEvents.String):
//
//	GetUser[SUCCESS][12ms], GetUser[SUCCESS, RESPONSE_FROM_CACHE][0ms]x2, GetOrders[TIMEOUT, FALLBACK_SUCCESS][1000ms]
//
// An empty log is "".
func (l *RequestLog) String() string { return metricsstream.RequestEvents(l.Executions()).String() }

// add appends e, unless the log is full.
func (l *RequestLog) add(e Execution) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.executions) >= RequestLogCapacity {
		l.dropped++
		return
	}
	l.executions = append(l.executions, e)
}

// record logs an execution that has ended.
func (l *RequestLog) record(e *execution) { l.add(e.logRecord()) }

// logRecord returns what the request log keeps of an execution that has
// ended.
func (e *execution) logRecord() Execution {
	latency := e.execLatency
	if !e.executed {
		latency = -1
	}
	return Execution{Command: e.k.key, Events: e.completion.Events, ExecutionLatency: latency}
}

// executionRecorder sees, just before its Completion is published, an
// execution that somebody must see once it has ended: a request log, the
// request cache's shared entry, or the request logs of a global collapser
// batch.
type executionRecorder interface{ recordExecution(Execution) }

func (l *RequestLog) recordExecution(e Execution) { l.add(e) }

// requestLogs records an execution in several request logs.
type requestLogs []*RequestLog

func (ls requestLogs) recordExecution(e Execution) {
	for _, l := range ls {
		l.add(e)
	}
}
