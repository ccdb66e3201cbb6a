package command

import (
	"strconv"
	"strings"
	"sync"
	"time"

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

// Execution is one execution in a RequestLog, what Hystrix's request log
// knows of a command: its key, its events and how long its user code ran.
type Execution struct {
	// Command is the command key.
	Command string
	// Events are the execution's events, as its Completion reports them.
	// An execution served from the request cache has the events of the
	// execution that produced the response, and RESPONSE_FROM_CACHE; one
	// that left before the response came has RESPONSE_FROM_CACHE and
	// CANCELLED.
	Events metricsstream.EventCounts
	// ExecutionLatency is how long the user's code ran (Hystrix's
	// getExecutionTimeInMilliseconds), or -1 when it did not run: the
	// execution was short-circuited, rejected or served from the cache.
	ExecutionLatency time.Duration
}

// String returns the execution as the request log shows it:
// "GetUser[SUCCESS][12ms]".
func (e Execution) String() string {
	var b strings.Builder
	e.appendDisplay(&b)
	b.WriteByte('[')
	b.WriteString(strconv.FormatInt(e.millis(), 10))
	b.WriteString("ms]")
	return b.String()
}

// appendDisplay writes the key and the events, as Hystrix's request log:
// events in Hystrix's order, "EMITx3" and "FALLBACK_EMITx2" for repeated
// emissions, "[Executed]" when there are none.
func (e Execution) appendDisplay(b *strings.Builder) {
	b.WriteString(e.Command)
	b.WriteByte('[')
	n := 0
	for t := range metricsstream.NumEventTypes {
		count := e.Events[t]
		if count <= 0 || t == metricsstream.ExceptionThrown {
			continue
		}
		if n > 0 {
			b.WriteString(", ")
		}
		n++
		b.WriteString(t.String())
		if (t == metricsstream.Emit || t == metricsstream.FallbackEmit) && count > 1 {
			b.WriteByte('x')
			b.WriteString(strconv.Itoa(int(count)))
		}
	}
	if n == 0 {
		b.WriteString("Executed")
	}
	b.WriteByte(']')
}

// millis is the execution latency in whole milliseconds, 0 when unknown.
func (e Execution) millis() int64 {
	if e.ExecutionLatency < 0 {
		return 0
	}
	return e.ExecutionLatency.Milliseconds()
}

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
// log line or a response header: executions that read the same (key and
// events) are listed once, where the first of them ended, with the sum of
// their latencies in milliseconds and "xN" when there are N of them:
//
//	GetUser[SUCCESS][12ms], GetUser[SUCCESS, RESPONSE_FROM_CACHE][0ms]x2, GetOrders[TIMEOUT, FALLBACK_SUCCESS][1000ms]
//
// An empty log is "".
func (l *RequestLog) String() string {
	executions := l.Executions()
	type group struct {
		display string
		millis  int64
		count   int
	}
	var groups []group
	index := make(map[string]int)
	var b strings.Builder
	for _, e := range executions {
		b.Reset()
		e.appendDisplay(&b)
		display := b.String()
		i, ok := index[display]
		if !ok {
			i = len(groups)
			index[display] = i
			groups = append(groups, group{display: display})
		}
		groups[i].millis += e.millis()
		groups[i].count++
	}
	b.Reset()
	for i, g := range groups {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(g.display)
		b.WriteByte('[')
		b.WriteString(strconv.FormatInt(g.millis, 10))
		b.WriteString("ms]")
		if g.count > 1 {
			b.WriteByte('x')
			b.WriteString(strconv.Itoa(g.count))
		}
	}
	return b.String()
}

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
