package metricsstream

import (
	"math"
	"strconv"
	"time"
	"unicode/utf8"
)

// The stream's JSON is written by hand, field by field, so that the
// fields come in Hystrix's order (SerialHystrixDashboardData's) and a
// frame is written into a reused buffer without allocating.

// jsonObject appends one JSON object to b. Field names are constants of
// this file and need no escaping, but for those of open.
type jsonObject struct {
	b      []byte
	fields int
}

func beginObject(b []byte) jsonObject { return jsonObject{b: append(b, '{')} }

func (o *jsonObject) end() []byte { return append(o.b, '}') }

func (o *jsonObject) key(name string) {
	if o.fields > 0 {
		o.b = append(o.b, ',')
	}
	o.fields++
	o.b = append(o.b, '"')
	o.b = append(o.b, name...)
	o.b = append(o.b, '"', ':')
}

func (o *jsonObject) int(name string, v int64) {
	o.key(name)
	o.b = strconv.AppendInt(o.b, v, 10)
}

func (o *jsonObject) bool(name string, v bool) {
	o.key(name)
	o.b = strconv.AppendBool(o.b, v)
}

func (o *jsonObject) string(name, v string) {
	o.key(name)
	o.b = appendJSONString(o.b, v)
}

// stringOrNull writes v, or null when v is empty.
func (o *jsonObject) stringOrNull(name, v string) {
	if v == "" {
		o.key(name)
		o.b = append(o.b, "null"...)
		return
	}
	o.string(name, v)
}

// open begins the object that is the value of field name; close ends
// it. name is escaped: it may be a key of the registry, which the
// configuration and utilization streams use as field names.
func (o *jsonObject) open(name string) jsonObject {
	o.escapedKey(name)
	return beginObject(o.b)
}

// escapedKey begins the field named name, escaped, as key does for the
// names that need no escaping.
func (o *jsonObject) escapedKey(name string) {
	if o.fields > 0 {
		o.b = append(o.b, ',')
	}
	o.fields++
	o.b = appendJSONString(o.b, name)
	o.b = append(o.b, ':')
}

// close ends inner, an object open returned, and continues o after it.
func (o *jsonObject) close(inner *jsonObject) { o.b = inner.end() }

// millis writes d in whole milliseconds, truncated, as Hystrix's int
// latencies and properties.
func (o *jsonObject) millis(name string, d time.Duration) { o.int(name, d.Milliseconds()) }

// float writes v as the shortest JSON number that reads back as v, and
// null for a NaN or an infinity, which JSON has no number for.
func (o *jsonObject) float(name string, v float64) {
	o.key(name)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		o.b = append(o.b, "null"...)
		return
	}
	o.b = strconv.AppendFloat(o.b, v, 'g', -1, 64)
}

// latencyKeys are the keys of the latencyExecute and latencyTotal objects,
// in Hystrix's order, with the percentiles they stand for.
var latencyKeys = [...]struct {
	key string
	p   float64
}{{"0", 0}, {"25", 25}, {"50", 50}, {"75", 75}, {"90", 90}, {"95", 95}, {"99", 99}, {"99.5", 99.5}, {"100", 100}}

// latency writes the "<name>_mean" field and the "<name>" object of
// percentiles of d, in milliseconds.
func (o *jsonObject) latency(name string, d Distribution) {
	o.key(name + "_mean")
	o.b = strconv.AppendInt(o.b, d.Mean().Milliseconds(), 10)
	p := o.open(name)
	for _, k := range latencyKeys {
		p.millis(k.key, d.Percentile(k.p))
	}
	o.close(&p)
}

// groupAndPool returns the group and the pool of the command key as its
// status reports them; without a status provider the group is the key
// and the pool is the group, the command package's defaults.
func (st *CommandStatus) groupAndPool(key string) (group, pool string) {
	group, pool = st.Group, st.Pool
	if group == "" {
		group = key
	}
	if pool == "" {
		pool = group
	}
	return group, pool
}

// appendCommandJSON appends the "HystrixCommand" object of s, every field
// in Hystrix's order. Without a status provider the group and the pool are
// the command key and the properties are zero.
func appendCommandJSON(b []byte, s *CommandSnapshot) []byte {
	group, pool := s.Status.groupAndPool(s.Key)
	r := &s.Rolling
	p := &s.Status.Properties
	o := beginObject(b)
	o.string("type", "HystrixCommand")
	o.string("name", s.Key)
	o.string("group", group)
	o.int("currentTime", s.Time.UnixMilli())
	o.bool("isCircuitBreakerOpen", s.Status.CircuitBreakerOpen)
	o.int("errorPercentage", int64(s.Health.ErrorPercentage))
	o.int("errorCount", s.Health.Errors)
	o.int("requestCount", s.Health.Total)
	o.int("rollingCountBadRequests", r[BadRequest])
	o.int("rollingCountCollapsedRequests", r[Collapsed])
	o.int("rollingCountEmit", r[Emit])
	o.int("rollingCountExceptionsThrown", r[ExceptionThrown])
	o.int("rollingCountFailure", r[Failure])
	o.int("rollingCountFallbackEmit", r[FallbackEmit])
	o.int("rollingCountFallbackFailure", r[FallbackFailure])
	o.int("rollingCountFallbackMissing", r[FallbackMissing])
	o.int("rollingCountFallbackRejection", r[FallbackRejection])
	o.int("rollingCountFallbackSuccess", r[FallbackSuccess])
	o.int("rollingCountResponsesFromCache", r[ResponseFromCache])
	o.int("rollingCountSemaphoreRejected", r[SemaphoreRejected])
	o.int("rollingCountShortCircuited", r[ShortCircuited])
	o.int("rollingCountSuccess", r[Success])
	o.int("rollingCountThreadPoolRejected", r[PoolRejected])
	o.int("rollingCountTimeout", r[Timeout])
	o.int("currentConcurrentExecutionCount", s.ConcurrentExecutions)
	o.int("rollingMaxConcurrentExecutionCount", s.RollingMaxConcurrentExecutions)
	o.latency("latencyExecute", s.Latency.Execution)
	o.latency("latencyTotal", s.Latency.Total)
	o.int("propertyValue_circuitBreakerRequestVolumeThreshold", int64(p.RequestVolumeThreshold))
	o.millis("propertyValue_circuitBreakerSleepWindowInMilliseconds", p.SleepWindow)
	o.int("propertyValue_circuitBreakerErrorThresholdPercentage", int64(p.ErrorThresholdPercentage))
	o.bool("propertyValue_circuitBreakerForceOpen", p.ForceOpen)
	o.bool("propertyValue_circuitBreakerForceClosed", p.ForceClosed)
	o.bool("propertyValue_circuitBreakerEnabled", p.CircuitBreakerEnabled)
	o.string("propertyValue_executionIsolationStrategy", p.Isolation)
	o.millis("propertyValue_executionIsolationThreadTimeoutInMilliseconds", p.Timeout)
	o.millis("propertyValue_executionTimeoutInMilliseconds", p.Timeout)
	o.bool("propertyValue_executionIsolationThreadInterruptOnTimeout", p.InterruptOnTimeout)
	o.stringOrNull("propertyValue_executionIsolationThreadPoolKeyOverride", p.PoolKeyOverride)
	o.int("propertyValue_executionIsolationSemaphoreMaxConcurrentRequests", int64(p.MaxConcurrentRequests))
	if p.AdaptiveLimit != "" {
		o.string("propertyValue_executionIsolationSemaphoreAdaptiveLimit", p.AdaptiveLimit)
	}
	o.int("propertyValue_fallbackIsolationSemaphoreMaxConcurrentRequests", int64(p.FallbackMaxConcurrentRequests))
	o.millis("propertyValue_metricsRollingStatisticalWindowInMilliseconds", s.Config.RollingWindow)
	o.bool("propertyValue_requestCacheEnabled", p.RequestCacheEnabled)
	o.bool("propertyValue_requestLogEnabled", p.RequestLogEnabled)
	o.int("reportingHosts", 1)
	o.string("threadPool", pool)
	// rxhystrix's own events, after every field of Hystrix's, which its
	// readers (the dashboard, Turbine) ignore.
	o.int("rollingCountRetried", r[Retried])
	o.int("rollingCountHedged", r[Hedged])
	o.int("rollingCountRetryBudgetExhausted", r[BudgetExhausted])
	o.int("rollingCountRateLimited", r[RateLimited])
	if st := s.Status.CircuitBreakerState; st != "" {
		o.string("circuitBreakerState", st)
	}
	if len(s.Status.Partitions) > 0 {
		o.partitions(s.Status.Partitions)
	}
	if b := &s.Status.Backlog; b.Size > 0 {
		o.int("backlogSize", int64(b.Size))
		o.int("backlogWaiting", b.Waiting)
		o.int("cumulativeCountBacklogAdmitted", b.Admitted)
		o.millis("cumulativeBacklogWaitTimeInMilliseconds", b.WaitTime)
		o.int("cumulativeCountBacklogFull", b.Full)
		o.int("cumulativeCountBacklogExpired", b.Expired)
	}
	if p.SleepWindowVaries() {
		o.millis("circuitBreakerSleepWindowInMilliseconds", s.Status.CircuitBreakerSleepWindow)
	}
	if p.Throttles() {
		o.float("circuitBreakerThrottlePercentage", 100*s.Status.CircuitBreakerThrottle)
	}
	if f := &s.Status.Faults; f.Shown() {
		o.bool("faultInjectionEnabled", f.Enabled)
		o.int("cumulativeCountFaultDelays", f.Delays)
		o.int("cumulativeCountFaultErrors", f.Errors)
		if f.Enabled && !f.Until.IsZero() {
			o.string("faultInjectionUntil", f.Until.UTC().Format(time.RFC3339))
		}
	}
	return o.end()
}

// partitions writes a command's partitions (command.Config.Partitions)
// as four objects keyed by partition name, in the order of its Config:
// partitionShare, partitionGuaranteed, partitionInFlight and
// partitionRejected (since the key was first used). Objects of numbers,
// like the latencies, are what Turbine sums member by member, so a
// cluster's stream carries the cluster's partitions.
func (o *jsonObject) partitions(ps []PartitionStatus) {
	o.byPartition("partitionShare", ps, appendShare)
	o.byPartition("partitionGuaranteed", ps, func(b []byte, p *PartitionStatus) []byte {
		return strconv.AppendInt(b, int64(p.Guaranteed), 10)
	})
	o.byPartition("partitionInFlight", ps, func(b []byte, p *PartitionStatus) []byte {
		return strconv.AppendInt(b, p.InFlight, 10)
	})
	o.byPartition("partitionRejected", ps, func(b []byte, p *PartitionStatus) []byte {
		return strconv.AppendUint(b, p.Rejected, 10)
	})
}

// appendShare appends a partition's share, null when it is not a
// number JSON can write, as jsonObject.float.
func appendShare(b []byte, p *PartitionStatus) []byte {
	if math.IsNaN(p.Share) || math.IsInf(p.Share, 0) {
		return append(b, "null"...)
	}
	return strconv.AppendFloat(b, p.Share, 'g', -1, 64)
}

// byPartition writes the object named name that maps each partition's
// name to the value appendValue appends.
func (o *jsonObject) byPartition(name string, ps []PartitionStatus, appendValue func([]byte, *PartitionStatus) []byte) {
	in := o.open(name)
	for i := range ps {
		in.escapedKey(ps[i].Name)
		in.b = appendValue(in.b, &ps[i])
	}
	o.close(&in)
}

// appendPoolJSON appends the "HystrixThreadPool" object of s, every field
// in Hystrix's order. Without a status provider the sizes are zero. A pool
// with an adaptive limit adds propertyValue_maximumSize, the limit now,
// and propertyValue_adaptiveLimit, its algorithm.
func appendPoolJSON(b []byte, s *PoolSnapshot) []byte {
	o := beginObject(b)
	o.string("type", "HystrixThreadPool")
	o.string("name", s.Key)
	o.int("currentTime", s.Time.UnixMilli())
	o.int("currentActiveCount", s.ActiveCount)
	o.int("currentCompletedTaskCount", s.CompletedTaskCount)
	o.int("currentCorePoolSize", int64(s.Status.CoreSize))
	o.int("currentLargestPoolSize", int64(s.Status.LargestPoolSize))
	o.int("currentMaximumPoolSize", int64(s.Status.MaximumSize))
	o.int("currentPoolSize", int64(s.Status.PoolSize))
	o.int("currentQueueSize", s.QueueSize)
	o.int("currentTaskCount", s.TaskCount)
	o.int("rollingCountThreadsExecuted", s.Rolling[PoolExecuted])
	o.int("rollingMaxActiveThreads", s.RollingMaxActive)
	o.int("rollingCountCommandRejections", s.Rolling[PoolRejection])
	o.int("propertyValue_queueSizeRejectionThreshold", int64(s.Status.QueueSizeRejectionThreshold))
	if s.Status.AdaptiveLimit != "" {
		// Not Hystrix's: the sizes above are an adaptive limit's.
		o.int("propertyValue_maximumSize", int64(s.Status.MaximumSize))
		o.string("propertyValue_adaptiveLimit", s.Status.AdaptiveLimit)
	}
	o.millis("propertyValue_metricsRollingStatisticalWindowInMilliseconds", s.Config.RollingWindow)
	o.int("reportingHosts", 1)
	return o.end()
}

// appendCollapserJSON appends the "HystrixCollapser" object of s, every
// field in Hystrix's order.
func appendCollapserJSON(b []byte, s *CollapserSnapshot) []byte {
	o := beginObject(b)
	o.string("type", "HystrixCollapser")
	o.string("name", s.Key)
	o.int("currentTime", s.Time.UnixMilli())
	o.int("rollingCountRequestsBatched", s.RequestsBatched)
	o.int("rollingCountBatches", s.Batches)
	o.int("rollingCountResponsesFromCache", s.ResponsesFromCache)
	o.int("batchSize_mean", s.BatchSizeMean)
	p := o.open("batchSize")
	for i, k := range collapserBatchKeys {
		p.int(k, s.BatchSizePercentiles[i])
	}
	o.close(&p)
	o.bool("propertyValue_requestCacheEnabled", s.RequestCacheEnabled)
	o.int("propertyValue_maxRequestsInBatch", int64(batchCap(s.MaxRequestsInBatch)))
	o.millis("propertyValue_timerDelayInMilliseconds", s.TimerDelay)
	o.int("reportingHosts", 1)
	return o.end()
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string, byte for byte as
// encoding/json writes it: quotes, backslashes and control characters
// escaped, and also <, > and & (so a name is never markup), U+2028 and
// U+2029; each byte of invalid UTF-8 becomes U+FFFD.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
