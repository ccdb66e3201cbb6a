package dashboard

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"

	"github.com/rxhystrix/rxhystrix/internal/ssetest"
)

// requestEvent writes the JSON of one request's executions as one
// server-sent event, as the request events stream does.
func requestEvent(executions string) []byte { return ssetest.Data(executions) }

// dataEvent writes v as one server-sent event, as the servlet does.
func dataEvent(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return ssetest.Data(string(b))
}

// jsonObject is a JSON object that keeps its fields in the order they were
// added, so the fake writes Hystrix's field order exactly.
type jsonObject []jsonField

type jsonField struct {
	name  string
	value any
}

func (o jsonObject) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(f.name)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(f.value)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// with sets a field, in place if it exists, else at the end (as Turbine adds
// its own).
func (o jsonObject) with(name string, value any) jsonObject {
	out := append(jsonObject(nil), o...)
	for i := range out {
		if out[i].name == name {
			out[i].value = value
			return out
		}
	}
	return append(out, jsonField{name, value})
}

// without drops fields, as an older Hystrix that did not write them.
func (o jsonObject) without(names ...string) jsonObject {
	var out jsonObject
outer:
	for _, f := range o {
		for _, n := range names {
			if f.name == n {
				continue outer
			}
		}
		out = append(out, f)
	}
	return out
}

// percentiles is a latency (or batch size) distribution in Hystrix's keys
// and order.
func percentiles(keys []string, values ...int64) jsonObject {
	o := make(jsonObject, len(keys))
	for i, k := range keys {
		o[i] = jsonField{k, values[i]}
	}
	return o
}

var (
	latencyKeys   = []string{"0", "25", "50", "75", "90", "95", "99", "99.5", "100"}
	batchSizeKeys = []string{"25", "50", "75", "90", "95", "99", "99.5", "100"}
)

// commandCounts is what one HystrixCommand object reports; the JSON's
// derived fields (errorCount, requestCount, errorPercentage) come from it as
// HealthCounts computes them.
type commandCounts struct {
	name, group, pool, isolation  string
	open                          any // isCircuitBreakerOpen: a bool, or Turbine's aggregate
	forceOpen, forceClosed        bool
	success, shortCircuited       int64
	badRequests, failures         int64
	timeouts, poolRejected        int64
	semaphoreRejected             int64
	fallbackSuccess               int64
	retried, rateLimited          int64    // rxhystrix's own, written only when set
	latency                       [9]int64 // execution latency at latencyKeys, ms
	latencyMean                   int64
	timeoutMillis, semaphoreLimit int64
	windowMillis                  int64
	concurrent                    int64
	partitions                    []partitionCounts // rxhystrix's own, written only when set
	backlogSize, backlogWaiting   int64             // rxhystrix's own, written when backlogSize is set
	sleepWindowMillis             int64             // rxhystrix's own grown sleep window, written when set
	throttlePercentage            float64           // rxhystrix's own share its closed breaker refuses, written when set
	circuitState                  string            // rxhystrix's own circuitBreakerState, written when set
	faultDelays, faultErrors      int64             // rxhystrix's own injected faults, written while faultInjection
	faultInjection                bool
	faultsUntil                   string // RFC 3339, written while faultInjection when set
}

// partitionCounts is one partition of a command's semaphore
// (command.Config.Partitions).
type partitionCounts struct {
	name                 string
	share                float64
	guaranteed, inFlight int64
	rejected             int64
}

func (c commandCounts) errors() int64 {
	return c.failures + c.timeouts + c.poolRejected + c.semaphoreRejected
}

func (c commandCounts) requests() int64 { return c.success + c.errors() }

// hystrixCommand builds the "HystrixCommand" object with every field of
// HYSTRIX.md section 7, in write order.
func hystrixCommand(c commandCounts, currentTime int64) jsonObject {
	errPct := int64(0)
	if c.requests() > 0 {
		errPct = c.errors() * 100 / c.requests()
	}
	total := c.latency
	for i := range total {
		total[i] += 2 // the user thread waits a little longer than run
	}
	o := jsonObject{
		{"type", "HystrixCommand"},
		{"name", c.name},
		{"group", c.group},
		{"currentTime", currentTime},
		{"isCircuitBreakerOpen", c.open},
		{"errorPercentage", errPct},
		{"errorCount", c.errors()},
		{"requestCount", c.requests()},
		{"rollingCountBadRequests", c.badRequests},
		{"rollingCountCollapsedRequests", 0},
		{"rollingCountEmit", c.success},
		{"rollingCountExceptionsThrown", 0},
		{"rollingCountFailure", c.failures},
		{"rollingCountFallbackEmit", c.fallbackSuccess},
		{"rollingCountFallbackFailure", 0},
		{"rollingCountFallbackMissing", 0},
		{"rollingCountFallbackRejection", 0},
		{"rollingCountFallbackSuccess", c.fallbackSuccess},
		{"rollingCountResponsesFromCache", 0},
		{"rollingCountSemaphoreRejected", c.semaphoreRejected},
		{"rollingCountShortCircuited", c.shortCircuited},
		{"rollingCountSuccess", c.success},
		{"rollingCountThreadPoolRejected", c.poolRejected},
		{"rollingCountTimeout", c.timeouts},
		{"currentConcurrentExecutionCount", c.concurrent},
		{"rollingMaxConcurrentExecutionCount", c.concurrent + 3},
		{"latencyExecute_mean", c.latencyMean},
		{"latencyExecute", percentiles(latencyKeys, c.latency[:]...)},
		{"latencyTotal_mean", c.latencyMean + 2},
		{"latencyTotal", percentiles(latencyKeys, total[:]...)},
		{"propertyValue_circuitBreakerRequestVolumeThreshold", 20},
		{"propertyValue_circuitBreakerSleepWindowInMilliseconds", 5000},
		{"propertyValue_circuitBreakerErrorThresholdPercentage", 50},
		{"propertyValue_circuitBreakerForceOpen", c.forceOpen},
		{"propertyValue_circuitBreakerForceClosed", c.forceClosed},
		{"propertyValue_circuitBreakerEnabled", true},
		{"propertyValue_executionIsolationStrategy", c.isolation},
		{"propertyValue_executionIsolationThreadTimeoutInMilliseconds", c.timeoutMillis},
		{"propertyValue_executionTimeoutInMilliseconds", c.timeoutMillis},
		{"propertyValue_executionIsolationThreadInterruptOnTimeout", true},
		{"propertyValue_executionIsolationThreadPoolKeyOverride", nil},
		{"propertyValue_executionIsolationSemaphoreMaxConcurrentRequests", c.semaphoreLimit},
		{"propertyValue_fallbackIsolationSemaphoreMaxConcurrentRequests", 10},
		{"propertyValue_metricsRollingStatisticalWindowInMilliseconds", c.windowMillis},
		{"propertyValue_requestCacheEnabled", true},
		{"propertyValue_requestLogEnabled", true},
		{"reportingHosts", 1},
		{"threadPool", c.pool},
	}
	if c.retried > 0 || c.rateLimited > 0 {
		o = append(o, jsonObject{
			{"rollingCountRetried", c.retried},
			{"rollingCountHedged", 0},
			{"rollingCountRetryBudgetExhausted", 0},
			{"rollingCountRateLimited", c.rateLimited},
		}...)
	}
	if c.circuitState != "" {
		o = append(o, jsonField{"circuitBreakerState", c.circuitState})
	}
	if len(c.partitions) > 0 {
		var share, guaranteed, inFlight, rejected jsonObject
		for _, p := range c.partitions {
			share = append(share, jsonField{p.name, p.share})
			guaranteed = append(guaranteed, jsonField{p.name, p.guaranteed})
			inFlight = append(inFlight, jsonField{p.name, p.inFlight})
			rejected = append(rejected, jsonField{p.name, p.rejected})
		}
		o = append(o, jsonObject{
			{"partitionShare", share},
			{"partitionGuaranteed", guaranteed},
			{"partitionInFlight", inFlight},
			{"partitionRejected", rejected},
		}...)
	}
	if c.backlogSize > 0 {
		o = append(o, jsonObject{
			{"backlogSize", c.backlogSize},
			{"backlogWaiting", c.backlogWaiting},
		}...)
	}
	if c.sleepWindowMillis > 0 {
		o = append(o, jsonField{"circuitBreakerSleepWindowInMilliseconds", c.sleepWindowMillis})
	}
	if c.throttlePercentage > 0 {
		o = append(o, jsonField{"circuitBreakerThrottlePercentage", c.throttlePercentage})
	}
	if c.faultInjection {
		o = append(o, jsonObject{
			{"faultInjectionEnabled", true},
			{"cumulativeCountFaultDelays", c.faultDelays},
			{"cumulativeCountFaultErrors", c.faultErrors},
		}...)
		if c.faultsUntil != "" {
			o = append(o, jsonField{"faultInjectionUntil", c.faultsUntil})
		}
	}
	return o
}

type poolCounts struct {
	name                           string
	active, queued, core, executed int64
	maxActive, rejections          int64
	queueThreshold                 int64
}

// hystrixThreadPool builds the "HystrixThreadPool" object of section 7.
func hystrixThreadPool(p poolCounts, currentTime int64) jsonObject {
	return jsonObject{
		{"type", "HystrixThreadPool"},
		{"name", p.name},
		{"currentTime", currentTime},
		{"currentActiveCount", p.active},
		{"currentCompletedTaskCount", 100000 + p.executed},
		{"currentCorePoolSize", p.core},
		{"currentLargestPoolSize", p.core},
		{"currentMaximumPoolSize", p.core},
		{"currentPoolSize", p.core},
		{"currentQueueSize", p.queued},
		{"currentTaskCount", 100000 + p.executed + p.active + p.queued},
		{"rollingCountThreadsExecuted", p.executed},
		{"rollingMaxActiveThreads", p.maxActive},
		{"rollingCountCommandRejections", p.rejections},
		{"propertyValue_queueSizeRejectionThreshold", p.queueThreshold},
		{"propertyValue_metricsRollingStatisticalWindowInMilliseconds", 10000},
		{"reportingHosts", 1},
	}
}

// hystrixCollapser builds the "HystrixCollapser" object of section 7.
func hystrixCollapser(name string, batches, requests int64, currentTime int64) jsonObject {
	return jsonObject{
		{"type", "HystrixCollapser"},
		{"name", name},
		{"currentTime", currentTime},
		{"rollingCountRequestsBatched", requests},
		{"rollingCountBatches", batches},
		{"rollingCountResponsesFromCache", 3},
		{"batchSize_mean", requests / batches},
		{"batchSize", percentiles(batchSizeKeys, 4, 7, 9, 12, 14, 18, 19, 20)},
		{"propertyValue_requestCacheEnabled", true},
		{"propertyValue_maxRequestsInBatch", math.MaxInt32}, // the default: unlimited
		{"propertyValue_timerDelayInMilliseconds", 10},
		{"reportingHosts", 1},
	}
}

// The scenario: a service whose dependencies are in every state the
// dashboard draws. Frame k of the stream is 2 s after frame k-1 (by the
// stream's currentTime), so 60 frames of history fill the 2-minute sparkline.
const (
	scenarioStart   = int64(1_796_000_000_000) // currentTime of frame 0, ms
	scenarioStepMs  = 2000
	historyFrames   = 60
	frameBeforeStep = historyFrames     // the frame the first assertions read
	frameAfterStep  = historyFrames + 1 // the frame that changes the counts
)

// wave is a smooth oscillation between lo and hi over period frames, at hi
// when k is a multiple of period.
func wave(k int, lo, hi int64, period float64) int64 {
	mid, amp := float64(lo+hi)/2, float64(hi-lo)/2
	return int64(math.Round(mid + amp*math.Cos(2*math.Pi*float64(k)/period)))
}

// userServiceLimit is the adaptive (Vegas) limit of GetUser's pool in
// frame k: 12 workers, then 15 once the counts change.
func userServiceLimit(k int) int64 {
	if k >= frameAfterStep {
		return 15
	}
	return 12
}

// getUser is the seed's sizing example: 30 requests per second at its peak
// and 200 ms at p99, so the advice is 30 × 0.2 + 4 = 10 threads and a
// 300 ms timeout.
func getUser(k int) commandCounts {
	requests := wave(k, 180, 300, 30)
	failures := int64(1 + k%2)
	timeouts := int64(0)
	if k%3 == 0 {
		timeouts = 1
	}
	return commandCounts{
		name: "GetUser", group: "UserService", pool: "UserService", isolation: "THREAD",
		open: false, circuitState: "CLOSED",
		success: requests - failures - timeouts, failures: failures, timeouts: timeouts,
		badRequests: 2, fallbackSuccess: failures + timeouts,
		retried: 1200, rateLimited: 3,
		latency:       [9]int64{3, 21, 40, 66, 120, 160, 200, 200, 350},
		latencyMean:   48,
		timeoutMillis: 1000, semaphoreLimit: 10, windowMillis: 10000, concurrent: 2,
	}
}

// paymentGateway has tripped: its circuit is open and most calls are
// short-circuited, after failures and timeouts; failed trials have
// lengthened its sleep window from 5s to 40s.
func paymentGateway(k int) commandCounts {
	return commandCounts{
		name: "PaymentGateway", group: "PaymentService", pool: "PaymentService", isolation: "THREAD",
		open:    true,
		success: 38, failures: wave(k+4, 30, 50, 20), timeouts: 25, poolRejected: 5,
		shortCircuited: 80 + 3*int64(k), fallbackSuccess: 60,
		latency:       [9]int64{12, 180, 450, 800, 1000, 1000, 1000, 1000, 1001},
		latencyMean:   520,
		timeoutMillis: 1000, semaphoreLimit: 10, windowMillis: 10000, concurrent: 9,
		sleepWindowMillis: 40000,
	}
}

// legacyInventory is forced open by configuration: everything is
// short-circuited.
func legacyInventory(k int) commandCounts {
	return commandCounts{
		name: "LegacyInventory", group: "InventoryService", pool: "InventoryService", isolation: "THREAD",
		open: true, forceOpen: true,
		shortCircuited: 150 + 2*int64(k), fallbackSuccess: 150 + 2*int64(k),
		timeoutMillis: 1000, semaphoreLimit: 10, windowMillis: 10000,
	}
}

// getRecommendations runs under semaphore isolation and is struggling.
func getRecommendations(k int) commandCounts {
	requests := wave(k+7, 620, 820, 20)
	failures := requests * 22 / 100
	rejected := int64(40 + k%7)
	return commandCounts{
		name: "GetRecommendations", group: "RecommendationService", pool: "RecommendationService",
		isolation: "SEMAPHORE", open: false, throttlePercentage: 12.4,
		success: requests - failures - rejected, failures: failures, semaphoreRejected: rejected,
		fallbackSuccess: failures + rejected,
		latency:         [9]int64{5, 60, 140, 300, 520, 700, 900, 1200, 1900},
		latencyMean:     210,
		timeoutMillis:   2000, semaphoreLimit: 10, windowMillis: 10000, concurrent: 10,
		partitions: []partitionCounts{
			{name: "live", share: 0.7, guaranteed: 7, inFlight: 6},
			{name: "batch", share: 0.3, guaranteed: 3, inFlight: 4, rejected: 1200 + rejected},
		},
	}
}

// reserveStock runs under semaphore isolation with a backlog
// (command.Config.Backlog): at its permits, calls wait for one. Its
// circuit is half open: a trial is out. Faults are injected into it
// (command.Config.Faults).
func reserveStock(k int) commandCounts {
	requests := wave(k+2, 90, 150, 25)
	return commandCounts{
		name: "ReserveStock", group: "InventoryService", pool: "InventoryService",
		isolation: "SEMAPHORE", open: true, circuitState: "HALF_OPEN",
		success: requests - 2, semaphoreRejected: 2, fallbackSuccess: 2,
		latency:       [9]int64{4, 30, 55, 80, 110, 130, 160, 180, 240},
		latencyMean:   50,
		timeoutMillis: 1000, semaphoreLimit: 8, windowMillis: 10000, concurrent: 8,
		backlogSize: 32, backlogWaiting: 5 + int64(k%3),
		faultInjection: true, faultDelays: 1500 + int64(k), faultErrors: 12, faultsUntil: "2026-12-06T12:30:00Z",
	}
}

// searchProducts comes through Turbine from three hosts: numbers are summed
// over them, reportingHosts says how many, isCircuitBreakerOpen counts the
// hosts whose circuit is open, and Turbine adds fields of its own.
func searchProducts(k int, currentTime int64) jsonObject {
	const hosts = 3
	perHost := commandCounts{
		name: "SearchProducts", group: "SearchService", pool: "SearchService", isolation: "THREAD",
		success: wave(k+3, 70, 110, 24), failures: 55, timeouts: 12, poolRejected: 4, badRequests: 1,
		latency:       [9]int64{2, 15, 35, 70, 110, 150, 240, 300, 800},
		latencyMean:   52,
		timeoutMillis: 500, semaphoreLimit: 10, windowMillis: 10000, concurrent: 4,
	}
	sum := perHost
	sum.success *= hosts
	sum.failures *= hosts
	sum.timeouts *= hosts
	sum.poolRejected *= hosts
	sum.badRequests *= hosts
	for i := range sum.latency {
		sum.latency[i] *= hosts
	}
	sum.latencyMean *= hosts
	// Turbine sums every number, the settings too.
	sum.windowMillis *= hosts
	sum.timeoutMillis *= hosts
	sum.semaphoreLimit *= hosts
	o := hystrixCommand(sum, currentTime)
	errPct := perHost.errors() * 100 / perHost.requests()
	return o.
		with("errorPercentage", errPct*hosts).
		with("isCircuitBreakerOpen", 1).
		with("reportingHosts", hosts).
		with("turbineCluster", "search").
		with("propertyValue_someFutureSetting", "x")
}

// auditLog comes from an older Hystrix that wrote fewer fields, and its
// circuit is forced closed.
func auditLog(k int, currentTime int64) jsonObject {
	c := commandCounts{
		name: "AuditLog", group: "AuditService", isolation: "THREAD", open: false, forceClosed: true,
		success: auditLogSuccess(k), failures: 1,
		latency:       [9]int64{1, 2, 4, 6, 9, 11, 25, 30, 41},
		latencyMean:   5,
		timeoutMillis: 1000, semaphoreLimit: 10, windowMillis: 10000,
	}
	return hystrixCommand(c, currentTime).without(
		"rollingCountBadRequests", "rollingCountEmit", "rollingCountFallbackEmit",
		"rollingCountExceptionsThrown", "rollingMaxConcurrentExecutionCount", "latencyTotal_mean",
		"latencyTotal", "propertyValue_executionTimeoutInMilliseconds", "reportingHosts", "threadPool")
}

func auditLogSuccess(k int) int64 { return wave(k, 36, 46, 40) }

// scenarioFrame is frame k of the scenario: every command, pool and
// collapser, in the servlet's order (commands, then pools, then collapsers).
func scenarioFrame(k int) [][]byte {
	now := scenarioStart + int64(k)*scenarioStepMs
	user, pay, inv, rec := getUser(k), paymentGateway(k), legacyInventory(k), getRecommendations(k)
	events := [][]byte{
		dataEvent(hystrixCommand(user, now)),
		dataEvent(hystrixCommand(pay, now)),
		dataEvent(hystrixCommand(inv, now)),
		dataEvent(hystrixCommand(rec, now)),
		dataEvent(hystrixCommand(reserveStock(k), now)),
		dataEvent(searchProducts(k, now)),
		dataEvent(auditLog(k, now)),
	}
	if k <= frameBeforeStep {
		// A command that Turbine stops reporting in the next frame.
		events = append(events, dataEvent(hystrixCommand(commandCounts{
			name: "RetiredCommand", group: "Old", pool: "Old", isolation: "THREAD", open: false,
			success: 5, windowMillis: 10000, timeoutMillis: 1000,
		}, now)))
	} else {
		events = append(events, dataEvent(jsonObject{
			{"type", "HystrixCommand"}, {"name", "RetiredCommand"}, {"deleteData", "true"},
		}))
	}
	events = append(events,
		dataEvent(hystrixThreadPool(poolCounts{
			name: "UserService", active: 2 + int64(k%3), core: userServiceLimit(k), executed: user.requests(),
			maxActive: 6, queueThreshold: 5,
		}, now).with("propertyValue_maximumSize", userServiceLimit(k)).with("propertyValue_adaptiveLimit", "vegas")),
		dataEvent(hystrixThreadPool(poolCounts{
			name: "PaymentService", active: 10, queued: 4 + int64(k%2), core: 10,
			executed: pay.requests() - pay.poolRejected, maxActive: 10, rejections: pay.poolRejected,
			queueThreshold: 5,
		}, now)),
		dataEvent(hystrixThreadPool(poolCounts{
			name: "InventoryService", core: 10, queueThreshold: 5,
		}, now)),
		dataEvent(hystrixThreadPool(poolCounts{
			name: "SearchService", active: 9, queued: 1, core: 30, executed: 3 * 180,
			maxActive: 24, rejections: 12, queueThreshold: 15,
		}, now).with("reportingHosts", 3).with("propertyValue_metricsRollingStatisticalWindowInMilliseconds", 30000)),
		dataEvent(hystrixCollapser("UserBatch", 40+int64(k%4), 320+int64(k), now)),
	)
	if k == frameBeforeStep {
		// What the page must ignore without stopping: a broken event and
		// an object of a kind it does not know.
		events = append(events,
			[]byte("data: {\"type\":\"HystrixCommand\",\"name\":\n\n"),
			dataEvent(jsonObject{{"type", "HystrixRequestEvents"}, {"name", "x"}}),
		)
	}
	return events
}

// scenarioHistory is frames 0 through frameBeforeStep, sent at once.
func scenarioHistory() [][]byte {
	var events [][]byte
	for k := 0; k <= frameBeforeStep; k++ {
		events = append(events, scenarioFrame(k)...)
	}
	return events
}

// commas formats n as the page does: 1,234.
func commas(n int64) string {
	s := strconv.FormatInt(n, 10)
	if n < 0 {
		return "-" + commas(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
