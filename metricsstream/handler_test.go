package metricsstream

import (
	"context"
	"encoding/json"
	"iter"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The fields of each object, in the order Hystrix writes them
// (SerialHystrixDashboardData, HYSTRIX.md section 7).
var (
	hystrixCommandFields = []string{
		"type", "name", "group", "currentTime", "isCircuitBreakerOpen",
		"errorPercentage", "errorCount", "requestCount",
		"rollingCountBadRequests", "rollingCountCollapsedRequests", "rollingCountEmit",
		"rollingCountExceptionsThrown", "rollingCountFailure", "rollingCountFallbackEmit",
		"rollingCountFallbackFailure", "rollingCountFallbackMissing", "rollingCountFallbackRejection",
		"rollingCountFallbackSuccess", "rollingCountResponsesFromCache", "rollingCountSemaphoreRejected",
		"rollingCountShortCircuited", "rollingCountSuccess", "rollingCountThreadPoolRejected",
		"rollingCountTimeout",
		"currentConcurrentExecutionCount", "rollingMaxConcurrentExecutionCount",
		"latencyExecute_mean", "latencyExecute", "latencyTotal_mean", "latencyTotal",
		"propertyValue_circuitBreakerRequestVolumeThreshold",
		"propertyValue_circuitBreakerSleepWindowInMilliseconds",
		"propertyValue_circuitBreakerErrorThresholdPercentage",
		"propertyValue_circuitBreakerForceOpen",
		"propertyValue_circuitBreakerForceClosed",
		"propertyValue_circuitBreakerEnabled",
		"propertyValue_executionIsolationStrategy",
		"propertyValue_executionIsolationThreadTimeoutInMilliseconds",
		"propertyValue_executionTimeoutInMilliseconds",
		"propertyValue_executionIsolationThreadInterruptOnTimeout",
		"propertyValue_executionIsolationThreadPoolKeyOverride",
		"propertyValue_executionIsolationSemaphoreMaxConcurrentRequests",
		"propertyValue_fallbackIsolationSemaphoreMaxConcurrentRequests",
		"propertyValue_metricsRollingStatisticalWindowInMilliseconds",
		"propertyValue_requestCacheEnabled",
		"propertyValue_requestLogEnabled",
		"reportingHosts", "threadPool",
	}
	// ourCommandFields follow Hystrix's in each command object.
	ourCommandFields = []string{
		"rollingCountRetried", "rollingCountHedged", "rollingCountRetryBudgetExhausted",
		"rollingCountRateLimited",
	}
	commandFields           = append(append([]string(nil), hystrixCommandFields...), ourCommandFields...)
	hystrixThreadPoolFields = []string{
		"type", "name", "currentTime", "currentActiveCount", "currentCompletedTaskCount",
		"currentCorePoolSize", "currentLargestPoolSize", "currentMaximumPoolSize", "currentPoolSize",
		"currentQueueSize", "currentTaskCount", "rollingCountThreadsExecuted", "rollingMaxActiveThreads",
		"rollingCountCommandRejections", "propertyValue_queueSizeRejectionThreshold",
		"propertyValue_metricsRollingStatisticalWindowInMilliseconds", "reportingHosts",
	}
	hystrixCollapserFields = []string{
		"type", "name", "currentTime", "rollingCountRequestsBatched", "rollingCountBatches",
		"rollingCountResponsesFromCache", "batchSize_mean", "batchSize",
		"propertyValue_requestCacheEnabled", "propertyValue_maxRequestsInBatch",
		"propertyValue_timerDelayInMilliseconds", "reportingHosts",
	}
	latencyPercentileKeys = []string{"0", "25", "50", "75", "90", "95", "99", "99.5", "100"}
)

// userScenario fills reg with a command GetUser whose breaker is forced
// open, a pool UserPool that has worked, and a pool that has not, and
// closes every bucket they recorded in.
func userScenario(t *testing.T) *Registry {
	t.Helper()
	reg, mc := newStreamRegistry()
	m := reg.Command("GetUser", Config{})
	m.SetStatusProvider(commandStatus{
		Group: "UserService", Pool: "UserPool", CircuitBreakerOpen: true,
		Properties: CommandProperties{
			CircuitBreakerEnabled: true, RequestVolumeThreshold: 20, SleepWindow: 5 * time.Second,
			ErrorThresholdPercentage: 50, ForceOpen: true, Isolation: "THREAD",
			Timeout: 1500 * time.Millisecond, TimeoutEnabled: true, InterruptOnTimeout: true,
			MaxConcurrentRequests: 10, FallbackEnabled: true, FallbackMaxConcurrentRequests: 12,
			RequestCacheEnabled: true, RequestLogEnabled: false,
		},
	})
	ms := time.Millisecond
	for range 3 {
		recordEvents(m, 10*ms, 12*ms, Success)
	}
	recordEvents(m, 30*ms, 32*ms, Failure, FallbackSuccess)
	recordEvents(m, 1000*ms, 1002*ms, Timeout, FallbackMissing)
	recordEvents(m, 0, 0, ShortCircuited, FallbackSuccess)
	recordEvents(m, 5*ms, 7*ms, BadRequest)
	m.MarkStart()
	m.MarkStart() // two executions still running

	p := reg.Pool("UserPool", Config{})
	p.SetStatusProvider(poolStatus{CoreSize: 10, MaximumSize: 10, PoolSize: 3, LargestPoolSize: 4, QueueSizeRejectionThreshold: 5})
	p.MarkStart()
	p.MarkStart()
	p.MarkStart()
	p.MarkDone()
	p.MarkDone()
	p.MarkRejected()
	p.SetQueueSize(2)
	reg.Pool("IdlePool", Config{}) // nothing done: not listed

	mc.Advance(10 * time.Second) // closes the rolling, health and latency buckets
	return reg
}

func TestHandlerWritesHystrixHeadersAndAFrameAtOnce(t *testing.T) {
	reg := userScenario(t)
	srv := newStreamServer(t, Handler(WithRegistry(reg)))
	c := connect(t, srv.URL)

	assert.Equal(t, "text/event-stream;charset=UTF-8", c.resp.Header.Get("Content-Type"))
	assert.Equal(t, "no-cache, no-store, max-age=0, must-revalidate", c.resp.Header.Get("Cache-Control"))
	assert.Equal(t, "no-cache", c.resp.Header.Get("Pragma"))

	objs := objectsOfFrame(t, c.frame(t))
	assert.Equal(t, []string{"HystrixCommand GetUser", "HystrixThreadPool UserPool"}, names(objs),
		"commands, then pools that have done anything")
}

func TestHandlerCommandObject(t *testing.T) {
	reg := userScenario(t)
	objs := objectsOfFrame(t, c0(t, reg))
	require.NotEmpty(t, objs)
	o := objs[0]

	assert.Equal(t, commandFields, o.keys, "every field, in Hystrix's order, then ours")
	assert.Equal(t, "HystrixCommand", o.values["type"])
	assert.Equal(t, "GetUser", o.values["name"])
	assert.Equal(t, "UserService", o.values["group"])
	assert.Equal(t, "UserPool", o.values["threadPool"])
	assert.Equal(t, t0.Add(10*time.Second).UnixMilli(), o.int(t, "currentTime"))
	assert.Equal(t, true, o.values["isCircuitBreakerOpen"])

	// Health: successes, failures and timeouts count; the short-circuit
	// and the bad request do not. 2 errors of 5 is 40%.
	assert.Equal(t, int64(5), o.int(t, "requestCount"))
	assert.Equal(t, int64(2), o.int(t, "errorCount"))
	assert.Equal(t, int64(40), o.int(t, "errorPercentage"))

	counts := map[string]int64{
		"rollingCountBadRequests": 1, "rollingCountCollapsedRequests": 0, "rollingCountEmit": 0,
		"rollingCountExceptionsThrown": 2, // BAD_REQUEST + FALLBACK_MISSING
		"rollingCountFailure":          1, "rollingCountFallbackEmit": 0, "rollingCountFallbackFailure": 0,
		"rollingCountFallbackMissing": 1, "rollingCountFallbackRejection": 0, "rollingCountFallbackSuccess": 2,
		"rollingCountResponsesFromCache": 0, "rollingCountSemaphoreRejected": 0, "rollingCountShortCircuited": 1,
		"rollingCountSuccess": 3, "rollingCountThreadPoolRejected": 0, "rollingCountTimeout": 1,
		"currentConcurrentExecutionCount": 2, "rollingMaxConcurrentExecutionCount": 2,
	}
	for k, want := range counts {
		assert.Equal(t, want, o.int(t, k), k)
	}

	// Latencies in whole milliseconds, percentiles under string keys. The
	// six executions that ran: 5, 10, 10, 10, 30 and 1000 ms.
	exec, ok := o.values["latencyExecute"].(map[string]any)
	require.True(t, ok, "latencyExecute is an object")
	assert.Len(t, exec, len(latencyPercentileKeys))
	want := map[string]int64{"0": 5, "25": 10, "50": 10, "75": 30, "90": 30, "99.5": 1000, "100": 1000}
	for k, v := range want {
		require.Contains(t, exec, k)
		got, err := exec[k].(json.Number).Int64()
		require.NoError(t, err, "%s is an integer", k)
		assert.Equal(t, v, got, "latencyExecute[%q]", k)
	}
	assert.Equal(t, int64(177), o.int(t, "latencyExecute_mean"), "(5+30+30+1000)/6 truncated")
	assert.Equal(t, int64(179), o.int(t, "latencyTotal_mean"))
	total := o.values["latencyTotal"].(map[string]any)
	assert.Equal(t, json.Number("7"), total["0"])
	assert.Equal(t, json.Number("1002"), total["100"])

	props := map[string]any{
		"propertyValue_circuitBreakerRequestVolumeThreshold":             json.Number("20"),
		"propertyValue_circuitBreakerSleepWindowInMilliseconds":          json.Number("5000"),
		"propertyValue_circuitBreakerErrorThresholdPercentage":           json.Number("50"),
		"propertyValue_circuitBreakerForceOpen":                          true,
		"propertyValue_circuitBreakerForceClosed":                        false,
		"propertyValue_circuitBreakerEnabled":                            true,
		"propertyValue_executionIsolationStrategy":                       "THREAD",
		"propertyValue_executionIsolationThreadTimeoutInMilliseconds":    json.Number("1500"),
		"propertyValue_executionTimeoutInMilliseconds":                   json.Number("1500"),
		"propertyValue_executionIsolationThreadInterruptOnTimeout":       true,
		"propertyValue_executionIsolationThreadPoolKeyOverride":          nil,
		"propertyValue_executionIsolationSemaphoreMaxConcurrentRequests": json.Number("10"),
		"propertyValue_fallbackIsolationSemaphoreMaxConcurrentRequests":  json.Number("12"),
		"propertyValue_metricsRollingStatisticalWindowInMilliseconds":    json.Number("10000"),
		"propertyValue_requestCacheEnabled":                              true,
		"propertyValue_requestLogEnabled":                                false,
		"reportingHosts":                                                 json.Number("1"),
	}
	for k, v := range props {
		assert.Equal(t, v, o.values[k], k)
	}
}

// c0 returns the first frame of reg's stream.
func c0(t *testing.T, reg *Registry, opts ...HandlerOption) []string {
	t.Helper()
	srv := newStreamServer(t, Handler(append([]HandlerOption{WithRegistry(reg)}, opts...)...))
	return connect(t, srv.URL).frame(t)
}

func TestHandlerCommandWithoutStatus(t *testing.T) {
	reg, _ := newStreamRegistry()
	m := reg.Command("Bare", Config{RollingWindow: 20 * time.Second})
	m.SetStatusProvider(commandStatus{Group: "G", Properties: CommandProperties{PoolKeyOverride: "Override"}})
	reg.Command("Plain", Config{})

	objs := objectsOfFrame(t, c0(t, reg))
	require.Equal(t, []string{"HystrixCommand Bare", "HystrixCommand Plain"}, names(objs), "in key order")

	bare := objs[0]
	assert.Equal(t, "G", bare.values["group"])
	assert.Equal(t, "G", bare.values["threadPool"], "the pool defaults to the group")
	assert.Equal(t, "Override", bare.values["propertyValue_executionIsolationThreadPoolKeyOverride"])
	assert.Equal(t, int64(20000), bare.int(t, "propertyValue_metricsRollingStatisticalWindowInMilliseconds"))

	plain := objs[1]
	assert.Equal(t, commandFields, plain.keys)
	assert.Equal(t, "Plain", plain.values["group"], "no provider: the group is the key")
	assert.Equal(t, "Plain", plain.values["threadPool"])
	assert.Equal(t, false, plain.values["isCircuitBreakerOpen"], "no breaker reads closed, as in Hystrix")
	assert.Equal(t, int64(0), plain.int(t, "errorPercentage"))
	assert.Equal(t, "", plain.values["propertyValue_executionIsolationStrategy"])
	for _, k := range latencyPercentileKeys {
		assert.Equal(t, json.Number("0"), plain.values["latencyExecute"].(map[string]any)[k], "no latency yet: 0")
	}
}

func TestHandlerThreadPoolObject(t *testing.T) {
	reg := userScenario(t)
	objs := objectsOfFrame(t, c0(t, reg))
	require.Len(t, objs, 2)
	o := objs[1]
	assert.Equal(t, hystrixThreadPoolFields, o.keys, "every field, in Hystrix's order")
	want := map[string]int64{
		"currentActiveCount": 1, "currentCompletedTaskCount": 2, "currentCorePoolSize": 10,
		"currentLargestPoolSize": 4, "currentMaximumPoolSize": 10, "currentPoolSize": 3,
		"currentQueueSize": 2, "currentTaskCount": 5, "rollingCountThreadsExecuted": 2,
		"rollingMaxActiveThreads": 3, "rollingCountCommandRejections": 1,
		"propertyValue_queueSizeRejectionThreshold":                   5,
		"propertyValue_metricsRollingStatisticalWindowInMilliseconds": 10000,
		"reportingHosts": 1,
		"currentTime":    t0.Add(10 * time.Second).UnixMilli(),
	}
	for k, v := range want {
		assert.Equal(t, v, o.int(t, k), k)
	}
	assert.Equal(t, "UserPool", o.values["name"])
}

func TestHandlerListsAPoolOnceItHasDoneAnything(t *testing.T) {
	cases := []struct {
		name string
		do   func(p *PoolMetrics)
	}{
		{"running", func(p *PoolMetrics) { p.MarkStart() }},
		{"queueing", func(p *PoolMetrics) { p.SetQueueSize(1) }},
		{"rejecting", func(p *PoolMetrics) { p.MarkRejected() }},
		{"completed", func(p *PoolMetrics) { p.MarkStart(); p.MarkDone() }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			reg, mc := newStreamRegistry()
			tc.do(reg.Pool("P", Config{}))
			mc.Advance(time.Second)
			assert.Equal(t, []string{"HystrixThreadPool P"}, names(objectsOfFrame(t, c0(t, reg))))
		})
	}
}

func TestHandlerCollapserObject(t *testing.T) {
	reg, _ := newStreamRegistry()
	snap := CollapserSnapshot{
		Key: "UserBatch", Time: t0, RequestsBatched: 320, Batches: 40, ResponsesFromCache: 3,
		BatchSizeMean: 8, BatchSizePercentiles: [8]int64{4, 7, 9, 12, 14, 18, 19, 20},
		RequestCacheEnabled: true, MaxRequestsInBatch: 100, TimerDelay: 10 * time.Millisecond,
	}
	src := CollapserSourceFunc(func() iter.Seq[CollapserSnapshot] {
		return func(yield func(CollapserSnapshot) bool) { yield(snap) }
	})
	reg.Command("C", Config{})

	objs := objectsOfFrame(t, c0(t, reg, WithCollapsers(src)))
	require.Equal(t, []string{"HystrixCommand C", "HystrixCollapser UserBatch"}, names(objs), "collapsers come last")
	o := objs[1]
	assert.Equal(t, hystrixCollapserFields, o.keys, "every field, in Hystrix's order")
	for k, v := range map[string]int64{
		"currentTime": t0.UnixMilli(), "rollingCountRequestsBatched": 320, "rollingCountBatches": 40,
		"rollingCountResponsesFromCache": 3, "batchSize_mean": 8, "propertyValue_maxRequestsInBatch": 100,
		"propertyValue_timerDelayInMilliseconds": 10, "reportingHosts": 1,
	} {
		assert.Equal(t, v, o.int(t, k), k)
	}
	assert.Equal(t, true, o.values["propertyValue_requestCacheEnabled"])
	sizes := o.values["batchSize"].(map[string]any)
	assert.Equal(t, json.Number("19"), sizes["99.5"])
	assert.Equal(t, json.Number("4"), sizes["25"])
	assert.NotContains(t, sizes, "0", "Hystrix's batch sizes start at the 25th percentile")
}

func TestHandlerTicksEveryIntervalOnTheRegistryClock(t *testing.T) {
	reg, mc := newStreamRegistry()
	m := reg.Command("GetUser", Config{})
	srv := newStreamServer(t, Handler(WithRegistry(reg)))
	c := connect(t, srv.URL)

	first := objectsOfFrame(t, c.frame(t))
	require.Len(t, first, 1)
	assert.Equal(t, t0.UnixMilli(), first[0].int(t, "currentTime"))
	assert.Equal(t, int64(0), first[0].int(t, "rollingCountSuccess"))

	recordEvents(m, time.Millisecond, time.Millisecond, Success)
	recordEvents(m, time.Millisecond, time.Millisecond, Success)
	mc.Advance(500 * time.Millisecond)
	second := objectsOfFrame(t, c.frame(t))
	assert.Equal(t, t0.Add(500*time.Millisecond).UnixMilli(), second[0].int(t, "currentTime"))
	assert.Equal(t, int64(0), second[0].int(t, "rollingCountSuccess"), "the bucket is still open")

	mc.Advance(500 * time.Millisecond)
	third := objectsOfFrame(t, c.frame(t))
	assert.Equal(t, t0.Add(time.Second).UnixMilli(), third[0].int(t, "currentTime"))
	assert.Equal(t, int64(2), third[0].int(t, "rollingCountSuccess"), "the bucket closed")

	reg.Command("Later", Config{})
	mc.Advance(500 * time.Millisecond)
	assert.Equal(t, []string{"HystrixCommand GetUser", "HystrixCommand Later"}, names(objectsOfFrame(t, c.frame(t))),
		"a command made while streaming appears in the next frame")
}

func TestHandlerIntervals(t *testing.T) {
	cases := []struct {
		name  string
		opts  []HandlerOption
		query string
		want  time.Duration
	}{
		{"Hystrix's default", nil, "", 500 * time.Millisecond},
		{"WithInterval", []HandlerOption{WithInterval(2 * time.Second)}, "", 2 * time.Second},
		{"?delay=", nil, "?delay=2000", 2 * time.Second},
		{"?delay= over WithInterval", []HandlerOption{WithInterval(time.Second)}, "?delay=250", 250 * time.Millisecond},
		{"an empty ?delay=", []HandlerOption{WithInterval(time.Second)}, "?delay=", time.Second},
		{"the first ?delay=", nil, "?title=x&delay=1500&delay=9", 1500 * time.Millisecond},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			reg, mc := newStreamRegistry()
			reg.Command("C", Config{})
			srv := newStreamServer(t, Handler(append([]HandlerOption{WithRegistry(reg)}, tc.opts...)...))
			c := connect(t, srv.URL+tc.query)
			c.frame(t)

			// Just before the interval nothing is due; at the interval a
			// frame comes. Had a frame come earlier, its currentTime
			// would be earlier.
			mc.Advance(tc.want - time.Millisecond)
			mc.Advance(time.Millisecond)
			objs := objectsOfFrame(t, c.frame(t))
			assert.Equal(t, t0.Add(tc.want).UnixMilli(), objs[0].int(t, "currentTime"))
		})
	}
}

func TestHandlerRejectsBadDelays(t *testing.T) {
	reg, _ := newStreamRegistry()
	h := Handler(WithRegistry(reg))
	for _, q := range []string{
		"delay=abc", "delay=0", "delay=-5", "delay=1.5", "delay=3600001", "delay=%20500",
		"delay=99999999999999999999", "delay=%zz", "delay=1e3", "a=b&delay=x", "delay=+7",
	} {
		rec := serveOnce(h, http.MethodGet, q)
		assert.Equal(t, http.StatusBadRequest, rec.Code, q)
		assert.Contains(t, rec.Body.String(), "delay", "%s: the message names the parameter", q)
		assert.NotContains(t, rec.Header().Get("Content-Type"), "event-stream", q)
	}
	for _, q := range []string{"", "delay=1", "delay=3600000", "delay=%2B7", "title=%zz&delay=9", "delay=", "Delay=x"} {
		rec := serveOnce(h, http.MethodGet, q)
		assert.Equal(t, http.StatusOK, rec.Code, "%s: %s", q, rec.Body.String())
	}
}

func TestHandlerMethods(t *testing.T) {
	reg, mc := newStreamRegistry()
	h := Handler(WithRegistry(reg))

	rec := serveOnce(h, http.MethodPost, "")
	assert.Equal(t, http.StatusMethodNotAllowed, rec.Code)
	assert.Equal(t, "GET, HEAD", rec.Header().Get("Allow"))

	rec = serveOnce(h, http.MethodHead, "")
	assert.Equal(t, http.StatusOK, rec.Code)
	assert.Equal(t, streamContentType, rec.Header().Get("Content-Type"))
	assert.Empty(t, rec.Body.String())
	assert.Zero(t, mc.Pending(), "HEAD starts no ticker")

	rec = serveOnce(h, http.MethodHead, "delay=x")
	assert.Equal(t, http.StatusBadRequest, rec.Code, "HEAD checks the query too")
}

// flushSignal is a ResponseWriter that reports its first flush: the stream
// has been admitted and written its first frame.
type flushSignal struct {
	*httptest.ResponseRecorder
	once    sync.Once
	flushed chan struct{}
}

func (w *flushSignal) Flush() {
	w.ResponseRecorder.Flush()
	w.once.Do(func() { close(w.flushed) })
}

// startStream serves a GET in its own goroutine until cancel is called, and
// returns once the stream has written its first frame.
func startStream(t *testing.T, h http.Handler) (cancel func()) {
	t.Helper()
	ctx, stop := context.WithCancel(context.Background())
	w := &flushSignal{ResponseRecorder: httptest.NewRecorder(), flushed: make(chan struct{})}
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.ServeHTTP(w, httptest.NewRequestWithContext(ctx, http.MethodGet, "/", nil))
	}()
	select {
	case <-w.flushed:
	case <-done:
		t.Fatalf("the stream was refused: %d %s", w.Code, w.Body.String())
	}
	cancel = func() {
		stop()
		<-done
	}
	t.Cleanup(cancel)
	return cancel
}

func TestHandlerLimitsConnections(t *testing.T) {
	cases := []struct {
		name string
		opts []HandlerOption
		max  int
		msg  string
	}{
		{"Hystrix's default", nil, 5, "MaxConcurrentConnections reached: 5"},
		{"WithMaxConnections", []HandlerOption{WithMaxConnections(2)}, 2, "MaxConcurrentConnections reached: 2"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			reg, _ := newStreamRegistry()
			h := Handler(append([]HandlerOption{WithRegistry(reg)}, tc.opts...)...)
			var streams []func()
			for range tc.max {
				streams = append(streams, startStream(t, h))
			}
			rec := serveOnce(h, http.MethodGet, "")
			assert.Equal(t, http.StatusServiceUnavailable, rec.Code)
			assert.Equal(t, tc.msg, strings.TrimSpace(rec.Body.String()))

			streams[0]() // one client leaves: its place is free
			startStream(t, h)
			rec = serveOnce(h, http.MethodGet, "")
			assert.Equal(t, http.StatusServiceUnavailable, rec.Code, "and taken again")
		})
	}
}

func TestHandlerStopsWhenTheClientLeaves(t *testing.T) {
	reg, mc := newStreamRegistry()
	reg.Command("C", Config{})
	srv := newStreamServer(t, Handler(WithRegistry(reg)))
	c := connect(t, srv.URL)
	c.frame(t)
	require.Equal(t, 1, mc.Pending(), "the stream's ticker")

	c.close()
	srv.waitReturned(t)
	assert.Zero(t, mc.Pending(), "the ticker is stopped")
	// goleak, in TestMain, checks that no goroutine is left.
}

func TestHandlerShutdown(t *testing.T) {
	reg, mc := newStreamRegistry()
	done := make(chan struct{})
	srv := newStreamServer(t, Handler(WithRegistry(reg), WithShutdown(done)))
	c := connect(t, srv.URL)
	c.frame(t)

	close(done)
	srv.waitReturned(t)
	_, _, err := c.event()
	assert.Error(t, err, "the stream has ended")
	assert.Zero(t, mc.Pending())

	resp, err := http.Get(srv.URL)
	require.NoError(t, err)
	defer resp.Body.Close()
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	body := make([]byte, 100)
	n, _ := resp.Body.Read(body)
	assert.Equal(t, "Service has been shut down.", strings.TrimSpace(string(body[:n])))
}

func TestHandlerOptionsPanicOnBadInput(t *testing.T) {
	cases := []struct {
		name string
		f    func()
		msg  string
	}{
		{"nil option", func() { Handler(nil) }, "metricsstream: Handler: option 0 is nil"},
		{"nil registry", func() { WithRegistry(nil) }, "metricsstream: WithRegistry with nil registry"},
		{"zero interval", func() { WithInterval(0) }, "metricsstream: WithInterval: interval 0s is not positive"},
		{"negative interval", func() { WithInterval(-time.Second) }, "metricsstream: WithInterval: interval -1s is not positive"},
		{"no connections", func() { WithMaxConnections(0) }, "metricsstream: WithMaxConnections: 0 connections; want at least 1"},
		{"nil collapsers", func() { WithCollapsers(nil) }, "metricsstream: WithCollapsers with nil source"},
		{"nil shutdown", func() { WithShutdown(nil) }, "metricsstream: WithShutdown with nil channel"},
		{"nil clock", func() { WithClock(nil) }, "metricsstream: WithClock with nil clock"},
		{"nil source", func() { EventsHandler(nil) }, "metricsstream: EventsHandler with nil source"},
	}
	for _, tc := range cases {
		assert.PanicsWithValue(t, tc.msg, tc.f, tc.name)
	}
}

func TestHandlerDefaultsToTheDefaultRegistry(t *testing.T) {
	h := Handler().(*handler)
	assert.Same(t, DefaultRegistry, h.registry)
	assert.Equal(t, DefaultStreamInterval, h.interval)
	assert.Equal(t, int64(DefaultMaxStreamConnections), h.maxConnections)
}

func TestAppendJSONStringIsEncodingJSON(t *testing.T) {
	for _, s := range []string{
		"", "GetUser", `quote " and \ backslash`, "tab\tnew\nline\r", "\x00\x01\x1f\b\f",
		`<img src=x onerror="alert(1)">&amp;`, "snow ☃ and 😀", "\u2028\u2029", "bad \xff\xfe utf-8 \xe2\x82",
	} {
		want, err := json.Marshal(s)
		require.NoError(t, err)
		assert.Equal(t, string(want), string(appendJSONString(nil, s)), "%q", s)
	}
}

func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "a", `"\`, "<>&", "\u2028", "\xff", "\x7f", "é", "\xed\xa0\x80"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := json.Marshal(s)
		require.NoError(t, err)
		assert.Equal(t, string(want), string(appendJSONString(nil, s)))
	})
}

// collapserStatus is a CollapserStatusProvider that reports a fixed status.
type collapserStatus CollapserStatus

func (s collapserStatus) CollapserStatus() CollapserStatus { return CollapserStatus(s) }

func TestHandlerStreamsTheRegistrysCollapsers(t *testing.T) {
	reg, mc := newStreamRegistry()
	b := reg.Collapser("UserBatch", Config{})
	b.SetStatusProvider(collapserStatus{RequestCacheEnabled: true, MaxRequestsInBatch: 50, TimerDelay: 20 * time.Millisecond})
	b.MarkBatch(4)
	b.MarkBatch(6)
	b.MarkResponseFromCache()
	reg.Collapser("AddressBatch", Config{})
	mc.Advance(10 * time.Second)
	extra := CollapserSourceFunc(func() iter.Seq[CollapserSnapshot] {
		return func(yield func(CollapserSnapshot) bool) { yield(CollapserSnapshot{Key: "Elsewhere", Time: t0}) }
	})

	objs := objectsOfFrame(t, c0(t, reg, WithCollapsers(extra)))
	require.Equal(t, []string{"HystrixCollapser AddressBatch", "HystrixCollapser UserBatch", "HystrixCollapser Elsewhere"},
		names(objs), "the registry's collapsers in key order, then the source's")
	o := objs[1]
	assert.Equal(t, hystrixCollapserFields, o.keys)
	for k, v := range map[string]int64{
		"rollingCountRequestsBatched": 10, "rollingCountBatches": 2, "rollingCountResponsesFromCache": 1,
		"batchSize_mean": 5, "propertyValue_maxRequestsInBatch": 50, "propertyValue_timerDelayInMilliseconds": 20,
		"currentTime": t0.Add(10 * time.Second).UnixMilli(),
	} {
		assert.Equal(t, v, o.int(t, k), k)
	}
	assert.Equal(t, json.Number("6"), o.values["batchSize"].(map[string]any)["100"])
	assert.Equal(t, int64(1<<31-1), objs[0].int(t, "propertyValue_maxRequestsInBatch"),
		"no cap reads as Hystrix's Integer.MAX_VALUE")
}

// A collapser of WithCollapsers whose snapshot has no cap
// (MaxRequestsInBatch 0, as CollapserStatus and command.CollapserConfig
// spell "no cap") shows Hystrix's Integer.MAX_VALUE on the dashboard
// stream, as the configuration stream and the registry's own collapsers
// show it, not "max batch 0".
func TestCollapserSourceWithoutCapReadsAlikeOnBothStreams(t *testing.T) {
	reg, _ := newStreamRegistry()
	src := CollapserSourceFunc(func() iter.Seq[CollapserSnapshot] {
		return func(yield func(CollapserSnapshot) bool) { yield(CollapserSnapshot{Key: "Elsewhere", Time: t0}) }
	})

	rec := serveOnce(Handler(WithRegistry(reg), WithCollapsers(src)), http.MethodGet, "")
	require.Equal(t, http.StatusOK, rec.Code)
	data, _, ok := strings.Cut(strings.TrimPrefix(rec.Body.String(), "data: "), "\n\n")
	require.True(t, ok)
	o := parseObject(t, data)
	assert.Equal(t, int64(1<<31-1), o.int(t, "propertyValue_maxRequestsInBatch"), "dashboard stream")

	rec = serveOnce(ConfigHandler(WithRegistry(reg), WithCollapsers(src)), http.MethodGet, "")
	require.Equal(t, http.StatusOK, rec.Code)
	assert.Contains(t, rec.Body.String(), `"Elsewhere":{"maxRequestsInBatch":2147483647,`, "configuration stream")
}
