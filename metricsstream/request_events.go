package metricsstream

import (
	"strconv"
	"strings"
	"time"
)

// RequestExecution is one execution of a request: an entry of the
// command package's request log (command.Execution is this type) and of
// the request events stream ([RequestEventsHandler]), what Hystrix's
// request log and HystrixRequestEvents know of a command.
type RequestExecution struct {
	// Command is the command key.
	Command string
	// Events are the execution's events, as its Completion reports them.
	// An execution served from the request cache has the events of the
	// execution that produced the response, and RESPONSE_FROM_CACHE; one
	// that left before the response came has RESPONSE_FROM_CACHE and
	// CANCELLED. A collapser's batch command has COLLAPSED once per
	// request of its batch.
	Events EventCounts
	// ExecutionLatency is how long the user's code ran (Hystrix's
	// getExecutionTimeInMilliseconds), or -1 when it did not run: the
	// execution was short-circuited, rejected or served from the cache.
	ExecutionLatency time.Duration
	// CacheKey is the request cache key of an execution that went
	// through the request cache, the one that ran as well as those it
	// served; "" for the others.
	CacheKey string
	// Collapser is the collapser key of a collapser's batch command, ""
	// for the other executions.
	Collapser string
}

// String returns the execution as the request log shows it:
// "GetUser[SUCCESS][12ms]".
func (e RequestExecution) String() string {
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
func (e RequestExecution) appendDisplay(b *strings.Builder) {
	b.WriteString(e.Command)
	b.WriteByte('[')
	n := 0
	for t := range NumEventTypes {
		count := e.Events[t]
		if count <= 0 || t == ExceptionThrown {
			continue
		}
		if n > 0 {
			b.WriteString(", ")
		}
		n++
		b.WriteString(t.String())
		if (t == Emit || t == FallbackEmit) && count > 1 {
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
func (e RequestExecution) millis() int64 {
	if e.ExecutionLatency < 0 {
		return 0
	}
	return e.ExecutionLatency.Milliseconds()
}

// fromCache reports whether the request cache served the execution.
func (e *RequestExecution) fromCache() bool { return e.Events[ResponseFromCache] > 0 }

// RequestEvents are the executions of one request, in the order they
// ended, as Hystrix's HystrixRequestEvents: what [Registry.RequestEvents]
// streams when a request ends. The slice a stream delivers is shared by
// its subscribers, who must not change it.
type RequestEvents []RequestExecution

// String formats the executions as Hystrix's request log does
// (getExecutedCommandsAsString), for a log line or a response header:
// executions that read the same (key and events) are listed once, where
// the first of them ended, with the sum of their latencies in
// milliseconds and "xN" when there are N of them:
//
//	GetUser[SUCCESS][12ms], GetUser[SUCCESS, RESPONSE_FROM_CACHE][0ms]x2, GetOrders[TIMEOUT, FALLBACK_SUCCESS][1000ms]
//
// No executions is "".
func (r RequestEvents) String() string {
	type group struct {
		display string
		millis  int64
		count   int
	}
	var groups []group
	index := make(map[string]int)
	var b strings.Builder
	for _, e := range r {
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

// MarshalJSON returns the executions in the JSON of Hystrix's request
// events stream (SerialHystrixRequestEvents), one array per request:
//
//	[{"name":"GetUser","events":["SUCCESS"],"latencies":[12],"cached":2},
//	 {"name":"GetOrders","events":[{"name":"EMIT","count":3},"SUCCESS"],"latencies":[40,52]},
//	 {"name":"GetUsers","events":["SUCCESS"],"latencies":[9],"collapsed":{"name":"UserCollapser","count":4}}]
//
// Executions of a key with the same events are one object, with one
// latency per execution (whole milliseconds, -1 for code that did not
// run), listed where the first of them ended. The events come in
// Hystrix's order, with a count when there are several, without
// COLLAPSED and EXCEPTION_THROWN, as in the request log. An execution
// served from the request cache adds 1 to "cached" of the latest
// execution before it that ran with its key and cache key, and is not
// listed itself; when that execution is not among them (it had not ended
// when the request did), it is listed with its own events, which include
// RESPONSE_FROM_CACHE, so that no execution goes uncounted. A batch
// command has "collapsed", its collapser key and the size of its batch.
// It never fails.
func (r RequestEvents) MarshalJSON() ([]byte, error) { return r.appendJSON(nil), nil }

// requestSignature identifies the executions MarshalJSON lists as one, as
// Hystrix's ExecutionSignature.
type requestSignature struct {
	command   string
	events    EventCounts
	cacheKey  string // of an execution that served cache hits, else ""
	collapser string
}

// appendJSON appends the JSON of MarshalJSON to b.
func (r RequestEvents) appendJSON(b []byte) []byte {
	type ranKey struct{ command, cacheKey string }
	// Hits first go to the execution that produced their response.
	hits := make([]int, len(r))
	ran := make(map[ranKey]int)
	for i := range r {
		e := &r[i]
		if e.CacheKey == "" {
			continue
		}
		k := ranKey{e.Command, e.CacheKey}
		if !e.fromCache() {
			ran[k] = i
		} else if j, ok := ran[k]; ok {
			hits[j]++
			hits[i] = -1 // counted in j's
		}
	}
	type group struct {
		first     int // the index of its first execution
		cached    int
		latencies []int64 // whole milliseconds, in the order they ended
	}
	var groups []group
	index := make(map[requestSignature]int)
	for i := range r {
		if hits[i] < 0 {
			continue
		}
		e := &r[i]
		sig := requestSignature{command: e.Command, events: e.Events, collapser: e.Collapser}
		if hits[i] > 0 {
			sig.cacheKey = e.CacheKey
		}
		g, ok := index[sig]
		if !ok {
			g = len(groups)
			index[sig] = g
			groups = append(groups, group{first: i})
		}
		ms := int64(-1)
		if e.ExecutionLatency >= 0 {
			ms = e.ExecutionLatency.Milliseconds()
		}
		groups[g].cached += hits[i]
		groups[g].latencies = append(groups[g].latencies, ms)
	}

	b = append(b, '[')
	for g, gr := range groups {
		if g > 0 {
			b = append(b, ',')
		}
		e := &r[gr.first]
		o := beginObject(b)
		o.string("name", e.Command)
		o.key("events")
		o.b = appendRequestEventNames(o.b, &e.Events)
		o.key("latencies")
		o.b = append(o.b, '[')
		for i, ms := range gr.latencies {
			if i > 0 {
				o.b = append(o.b, ',')
			}
			o.b = strconv.AppendInt(o.b, ms, 10)
		}
		o.b = append(o.b, ']')
		if gr.cached > 0 {
			o.int("cached", int64(gr.cached))
		}
		if n := e.Events[Collapsed]; n > 0 {
			c := o.open("collapsed")
			c.string("name", e.Collapser)
			c.int("count", int64(n))
			o.close(&c)
		}
		b = o.end()
	}
	return append(b, ']')
}

// appendRequestEventNames appends the events array of one execution:
// "SUCCESS", or {"name":"EMIT","count":3} for an event counted more than
// once.
func appendRequestEventNames(b []byte, events *EventCounts) []byte {
	b = append(b, '[')
	n := 0
	for t := range NumEventTypes {
		count := events[t]
		if count <= 0 || t == Collapsed || t == ExceptionThrown {
			continue
		}
		if n > 0 {
			b = append(b, ',')
		}
		n++
		if count == 1 {
			b = appendJSONString(b, t.String())
			continue
		}
		o := beginObject(b)
		o.string("name", t.String())
		o.int("count", int64(count))
		b = o.end()
	}
	return append(b, ']')
}
