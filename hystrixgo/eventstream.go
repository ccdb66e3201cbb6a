package hystrix

import (
	"bytes"
	"encoding/json"
	"math"
	"net/http"
	"sync"
	"time"

	"github.com/rxhystrix/rxhystrix/metricsstream"
)

// streamInterval is how often a StreamHandler sends its events.
const streamInterval = time.Second

// StreamHandler serves hystrix-go's event stream, which the Hystrix
// dashboard reads: every second, for each live circuit, one
// "HystrixCommand" and one "HystrixThreadPool" event, each written as
// "data:{json}\n\n". Start it before serving and Stop it when done.
//
// The same commands are on rxhystrix's own stream (metricsstream.Handler)
// with everything Hystrix 1.5 reports; this one keeps hystrix-go's field
// set: counts are integers, errorPercentage is rounded, and the counts are
// those of the circuit's health window.
//
// As hystrix-go's, the zero StreamHandler is ready to Start, and one
// stopped may be started again.
type StreamHandler struct {
	mu       sync.Mutex
	requests map[*http.Request]chan []byte // made by the first ServeHTTP
	done     chan struct{}                 // the running Start's, closed by Stop; nil while stopped
	wg       sync.WaitGroup
}

// NewStreamHandler returns a StreamHandler that is not started.
func NewStreamHandler() *StreamHandler { return &StreamHandler{} }

// Start starts sending events to the clients being served, unless it is
// sending them already.
func (sh *StreamHandler) Start() {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.done != nil {
		return
	}
	done := make(chan struct{})
	sh.done = done
	e := current()
	ticker := e.reg.Clock().NewTicker(streamInterval)
	sh.wg.Add(1)
	go func() {
		defer sh.wg.Done()
		defer ticker.Stop()
		for {
			select {
			case <-ticker.C():
				sh.publish(e)
			case <-done:
				return
			}
		}
	}()
}

// Stop stops sending events and ends every ServeHTTP that began while
// they were sent; it returns once the sending goroutine has ended.
func (sh *StreamHandler) Stop() {
	sh.mu.Lock()
	if sh.done != nil {
		close(sh.done)
		sh.done = nil
	}
	sh.mu.Unlock()
	sh.wg.Wait()
}

// ServeHTTP streams the events to one client until the client leaves or
// the handler is stopped.
func (sh *StreamHandler) ServeHTTP(rw http.ResponseWriter, req *http.Request) {
	events := make(chan []byte, 32)
	sh.mu.Lock()
	if sh.requests == nil {
		sh.requests = map[*http.Request]chan []byte{}
	}
	sh.requests[req] = events
	stopped := sh.done // nil before Start: only the client's leaving ends the stream
	sh.mu.Unlock()
	defer func() {
		sh.mu.Lock()
		delete(sh.requests, req)
		sh.mu.Unlock()
	}()

	h := rw.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	h.Set("Access-Control-Allow-Origin", "*")
	rc := http.NewResponseController(rw) // finds the Flusher behind a wrapping writer
	rw.WriteHeader(http.StatusOK)
	_ = rc.Flush()
	for {
		select {
		case ev := <-events:
			if _, err := rw.Write(ev); err != nil {
				return
			}
			_ = rc.Flush()
		case <-req.Context().Done():
			return
		case <-stopped:
			return
		}
	}
}

// publish sends the events of every live circuit to every client, all
// of a tick in one piece, so that a client's buffer holds whole ticks
// however many circuits there are; a client too slow to take them misses
// the tick.
func (sh *StreamHandler) publish(e *engine) {
	frames := streamFrames(e)
	if len(frames) == 0 {
		return
	}
	tick := bytes.Join(frames, nil)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	for _, ch := range sh.requests {
		select {
		case ch <- tick:
		default:
		}
	}
}

// streamFrames returns the events of every live circuit of e, each
// framed as "data:{json}\n\n".
func streamFrames(e *engine) [][]byte {
	var frames [][]byte
	now := e.reg.Clock().Now()
	e.circuits.Range(func(_, v any) bool {
		cb := v.(*CircuitBreaker)
		s := e.settingsFor(cb.Name)
		for _, ev := range []any{commandEvent(cb, s, now), poolEvent(e, cb, s)} {
			b, err := json.Marshal(ev)
			if err != nil {
				logf("hystrix: stream: %v", err)
				continue
			}
			frame := make([]byte, 0, len(b)+7)
			frame = append(append(append(frame, "data:"...), b...), "\n\n"...)
			frames = append(frames, frame)
		}
		return true
	})
	return frames
}

// streamCmdLatency and the two events are hystrix-go's JSON.
type streamCmdLatency struct {
	Timing0   uint32 `json:"0"`
	Timing25  uint32 `json:"25"`
	Timing50  uint32 `json:"50"`
	Timing75  uint32 `json:"75"`
	Timing90  uint32 `json:"90"`
	Timing95  uint32 `json:"95"`
	Timing99  uint32 `json:"99"`
	Timing995 uint32 `json:"99.5"`
	Timing100 uint32 `json:"100"`
}

type streamCmdEvent struct {
	Type           string `json:"type"`
	Name           string `json:"name"`
	Group          string `json:"group"`
	Time           int64  `json:"currentTime"`
	ReportingHosts uint32 `json:"reportingHosts"`

	RequestCount       uint32 `json:"requestCount"`
	ErrorCount         uint32 `json:"errorCount"`
	ErrorPct           uint32 `json:"errorPercentage"`
	CircuitBreakerOpen bool   `json:"isCircuitBreakerOpen"`

	RollingCountCollapsedRequests  uint32 `json:"rollingCountCollapsedRequests"`
	RollingCountExceptionsThrown   uint32 `json:"rollingCountExceptionsThrown"`
	RollingCountFailure            uint32 `json:"rollingCountFailure"`
	RollingCountFallbackFailure    uint32 `json:"rollingCountFallbackFailure"`
	RollingCountFallbackRejection  uint32 `json:"rollingCountFallbackRejection"`
	RollingCountFallbackSuccess    uint32 `json:"rollingCountFallbackSuccess"`
	RollingCountResponsesFromCache uint32 `json:"rollingCountResponsesFromCache"`
	RollingCountSemaphoreRejected  uint32 `json:"rollingCountSemaphoreRejected"`
	RollingCountShortCircuited     uint32 `json:"rollingCountShortCircuited"`
	RollingCountSuccess            uint32 `json:"rollingCountSuccess"`
	RollingCountThreadPoolRejected uint32 `json:"rollingCountThreadPoolRejected"`
	RollingCountTimeout            uint32 `json:"rollingCountTimeout"`

	CurrentConcurrentExecutionCount uint32 `json:"currentConcurrentExecutionCount"`

	LatencyExecuteMean uint32           `json:"latencyExecute_mean"`
	LatencyExecute     streamCmdLatency `json:"latencyExecute"`
	LatencyTotalMean   uint32           `json:"latencyTotal_mean"`
	LatencyTotal       streamCmdLatency `json:"latencyTotal"`

	CircuitBreakerRequestVolumeThreshold             uint32 `json:"propertyValue_circuitBreakerRequestVolumeThreshold"`
	CircuitBreakerSleepWindow                        uint32 `json:"propertyValue_circuitBreakerSleepWindowInMilliseconds"`
	CircuitBreakerErrorThresholdPercent              uint32 `json:"propertyValue_circuitBreakerErrorThresholdPercentage"`
	CircuitBreakerForceOpen                          bool   `json:"propertyValue_circuitBreakerForceOpen"`
	CircuitBreakerForceClosed                        bool   `json:"propertyValue_circuitBreakerForceClosed"`
	CircuitBreakerEnabled                            bool   `json:"propertyValue_circuitBreakerEnabled"`
	ExecutionIsolationStrategy                       string `json:"propertyValue_executionIsolationStrategy"`
	ExecutionIsolationThreadTimeout                  uint32 `json:"propertyValue_executionIsolationThreadTimeoutInMilliseconds"`
	ExecutionIsolationThreadInterruptOnTimeout       bool   `json:"propertyValue_executionIsolationThreadInterruptOnTimeout"`
	ExecutionIsolationThreadPoolKeyOverride          string `json:"propertyValue_executionIsolationThreadPoolKeyOverride"`
	ExecutionIsolationSemaphoreMaxConcurrentRequests uint32 `json:"propertyValue_executionIsolationSemaphoreMaxConcurrentRequests"`
	FallbackIsolationSemaphoreMaxConcurrentRequests  uint32 `json:"propertyValue_fallbackIsolationSemaphoreMaxConcurrentRequests"`
	RollingStatsWindow                               uint32 `json:"propertyValue_metricsRollingStatisticalWindowInMilliseconds"`
	RequestCacheEnabled                              bool   `json:"propertyValue_requestCacheEnabled"`
	RequestLogEnabled                                bool   `json:"propertyValue_requestLogEnabled"`
}

type streamPoolEvent struct {
	Type           string `json:"type"`
	Name           string `json:"name"`
	ReportingHosts uint32 `json:"reportingHosts"`

	CurrentActiveCount        uint32 `json:"currentActiveCount"`
	CurrentCompletedTaskCount uint32 `json:"currentCompletedTaskCount"`
	CurrentCorePoolSize       uint32 `json:"currentCorePoolSize"`
	CurrentLargestPoolSize    uint32 `json:"currentLargestPoolSize"`
	CurrentMaximumPoolSize    uint32 `json:"currentMaximumPoolSize"`
	CurrentPoolSize           uint32 `json:"currentPoolSize"`
	CurrentQueueSize          uint32 `json:"currentQueueSize"`
	CurrentTaskCount          uint32 `json:"currentTaskCount"`

	RollingMaxActiveThreads     uint32 `json:"rollingMaxActiveThreads"`
	RollingCountThreadsExecuted uint32 `json:"rollingCountThreadsExecuted"`

	RollingStatsWindow          uint32 `json:"propertyValue_metricsRollingStatisticalWindowInMilliseconds"`
	QueueSizeRejectionThreshold uint32 `json:"propertyValue_queueSizeRejectionThreshold"`
}

// u32 clamps a count into hystrix-go's uint32.
func u32[T int | int64 | uint64](v T) uint32 {
	if v <= 0 {
		return 0
	}
	return uint32(min(uint64(v), math.MaxUint32))
}

func ms(d time.Duration) uint32 { return u32(d.Milliseconds()) }

func latency(d metricsstream.Distribution) streamCmdLatency {
	p := func(q float64) uint32 { return ms(d.Percentile(q)) }
	return streamCmdLatency{p(0), p(25), p(50), p(75), p(90), p(95), p(99), p(99.5), p(100)}
}

// errorPercentage is hystrix-go's: rounded to the nearest integer.
func errorPercentage(errs, total int64) uint32 {
	if total <= 0 {
		return 0
	}
	return uint32(math.Round(float64(errs) / float64(total) * 100))
}

func commandEvent(cb *CircuitBreaker, s *Settings, now time.Time) streamCmdEvent {
	snap := cb.core.metrics.Snapshot()
	r := snap.Rolling
	window := snap.Config.RollingWindow
	if window == 0 {
		window = 10 * time.Second
	}
	return streamCmdEvent{
		Type:           "HystrixCommand",
		Name:           cb.Name,
		Group:          cb.Name,
		Time:           now.UnixMilli(),
		ReportingHosts: 1,

		RequestCount:       u32(snap.Health.Total),
		ErrorCount:         u32(snap.Health.Errors),
		ErrorPct:           errorPercentage(snap.Health.Errors, snap.Health.Total),
		CircuitBreakerOpen: cb.core.breaker.IsOpen(),

		RollingCountExceptionsThrown:   u32(r[metricsstream.ExceptionThrown]),
		RollingCountFailure:            u32(r[metricsstream.Failure]),
		RollingCountFallbackFailure:    u32(r[metricsstream.FallbackFailure]),
		RollingCountFallbackSuccess:    u32(r[metricsstream.FallbackSuccess]),
		RollingCountSemaphoreRejected:  u32(r[metricsstream.SemaphoreRejected]),
		RollingCountShortCircuited:     u32(r[metricsstream.ShortCircuited]),
		RollingCountSuccess:            u32(r[metricsstream.Success]),
		RollingCountThreadPoolRejected: u32(r[metricsstream.PoolRejected]),
		RollingCountTimeout:            u32(r[metricsstream.Timeout]),

		CurrentConcurrentExecutionCount: u32(snap.ConcurrentExecutions),

		LatencyExecuteMean: ms(snap.Latency.Execution.Mean()),
		LatencyExecute:     latency(snap.Latency.Execution),
		LatencyTotalMean:   ms(snap.Latency.Total.Mean()),
		LatencyTotal:       latency(snap.Latency.Total),

		CircuitBreakerRequestVolumeThreshold:             u32(s.RequestVolumeThreshold),
		CircuitBreakerSleepWindow:                        ms(s.SleepWindow),
		CircuitBreakerErrorThresholdPercent:              u32(s.ErrorPercentThreshold),
		CircuitBreakerEnabled:                            true,
		ExecutionIsolationStrategy:                       "THREAD",
		ExecutionIsolationThreadTimeout:                  ms(s.Timeout),
		ExecutionIsolationThreadInterruptOnTimeout:       true,
		ExecutionIsolationSemaphoreMaxConcurrentRequests: u32(s.MaxConcurrentRequests),
		FallbackIsolationSemaphoreMaxConcurrentRequests:  u32(s.MaxConcurrentRequests),
		RollingStatsWindow:                               ms(window),
	}
}

func poolEvent(e *engine, cb *CircuitBreaker, s *Settings) streamPoolEvent {
	size := u32(s.MaxConcurrentRequests)
	ev := streamPoolEvent{
		Type:                   "HystrixThreadPool",
		Name:                   cb.Name,
		ReportingHosts:         1,
		CurrentCorePoolSize:    size,
		CurrentMaximumPoolSize: size,
		CurrentPoolSize:        size,
		RollingStatsWindow:     10000,
		// The pool has no queue: it rejects beyond its size at once, and
		// hystrix-go sends 0, which the dashboard shows as "Queue Size".
		QueueSizeRejectionThreshold: 0,
	}
	if p, ok := e.reg.Metrics().LookupPool(cb.core.key); ok {
		snap := p.Snapshot()
		ev.CurrentActiveCount = u32(snap.ActiveCount)
		ev.CurrentCompletedTaskCount = u32(snap.CompletedTaskCount)
		ev.CurrentLargestPoolSize = u32(snap.LargestActiveCount)
		ev.CurrentQueueSize = u32(snap.QueueSize)
		ev.CurrentTaskCount = u32(snap.TaskCount)
		ev.RollingMaxActiveThreads = u32(snap.RollingMaxActive)
		ev.RollingCountThreadsExecuted = u32(snap.Rolling[metricsstream.PoolExecuted])
		if w := snap.Config.RollingWindow; w > 0 {
			ev.RollingStatsWindow = ms(w)
		}
	}
	return ev
}
