package metricsstream

import (
	"net/http"
	"time"
)

// DefaultConfigStreamInterval is how often [ConfigHandler]'s stream writes
// the configuration (hystrix.stream.config.intervalInMilliseconds).
const DefaultConfigStreamInterval = 5 * time.Second

// ConfigHandler returns the configuration stream of a [Registry], Hystrix
// 1.5's /hystrix/config.stream (HystrixConfigSseServlet): every interval
// (5s unless [WithInterval] or the request's ?delay= says otherwise) one
// event "data: " + a "HystrixConfig" object + "\n\n", then a ping.
//
//	mux.Handle("/hystrix/config.stream", metricsstream.ConfigHandler())
//
// The object holds, keyed by name, the settings of every command of the
// registry ("commands": "threadPoolKey", "groupKey", and the objects
// "execution", "metrics" and "circuitBreaker"), of every worker pool
// ("threadpools") and of every collapser ("collapsers", those of the
// registry then those of [WithCollapsers]), with Hystrix's field names,
// in Hystrix's order, times in whole milliseconds. What only the command
// package knows comes from each key's status provider, as on [Handler]'s
// stream; the live values (an adaptive limit's current limit among them)
// are read at each tick, so the stream shows a configuration changed live.
//
// Where it differs from Hystrix's:
//
//   - percentileBucketCount is the percentile window's bucket count and
//     isForcedClosed is ForceClosed; Hystrix writes the rolling counts'
//     bucket count and ForceOpen there.
//   - Every pool of the registry is listed, with the sizes its status
//     provider reports; maximumSize and actualMaximumSize are the most
//     workers that may run, keepAliveTimeInMinutes is 0 (a worker does
//     not outlive its run) and allowMaximumSizeToDivergeFromCoreSize is
//     false; maxQueueSize is -1 for a pool without a queue, as Hystrix's
//     default.
//   - A command or pool with an adaptive limit adds the field
//     "adaptiveLimit", the algorithm's name, after Hystrix's fields of
//     "execution" or of the pool; a command with partitions
//     (command.Config.Partitions) adds "partitions" after them, each
//     partition's name and share, in the order of its Config; a command
//     with a backlog (command.Config.Backlog) adds "backlog", its size,
//     timeoutInMilliseconds and order ("LIFO" or "FIFO"); a command that
//     injects faults (command.Config.Faults) adds "faults", its
//     delayPercentage, delayInMilliseconds, errorPercentage, markedOnly
//     and, when they end by themselves, until (RFC 3339, UTC); a command
//     whose sleep window grows (breaker.Config.MaxSleepWindow) adds
//     "maxSleepInMilliseconds" and "sleepMultiplier" after Hystrix's
//     fields of "circuitBreaker", one whose sleep window has a jitter
//     "sleepJitterInMilliseconds", one whose breaker trips on a run of
//     failures (breaker.Config.ConsecutiveFailures)
//     "consecutiveFailures", and one whose breaker throttles
//     (breaker.Config.ThrottleSuccessPercentage)
//     "throttleSuccessPercentage", "throttleAggression" and
//     "maxThrottlePercentage"; a command whose health counts its latest
//     calls (Config.HealthWindowCalls) adds "healthWindowCalls" after
//     Hystrix's fields of "metrics".
//   - A collapser of WithCollapsers has no metrics windows here: its
//     object leaves out "metrics".
//
// Transport, connection limit, ?delay=, shutdown and the options are as
// for [Handler]; the first event is written as soon as a client connects.
func ConfigHandler(opts ...HandlerOption) http.Handler {
	return newHandler("ConfigHandler", (*frame).appendConfig, DefaultConfigStreamInterval, opts)
}

// appendConfig appends the one "HystrixConfig" event of a frame.
func (f *frame) appendConfig(h *handler, b []byte) []byte {
	f.sortedKeys(h.registry)
	b = append(b, "data: "...)
	o := beginObject(b)
	o.string("type", "HystrixConfig")
	commands := o.open("commands")
	for _, m := range f.commands {
		appendCommandConfig(&commands, m)
	}
	o.close(&commands)
	pools := o.open("threadpools")
	for _, p := range f.pools {
		appendPoolConfig(&pools, p)
	}
	o.close(&pools)
	collapsers := o.open("collapsers")
	for _, c := range f.collapsers {
		st, _ := c.Status()
		cfg := c.Config()
		appendCollapserConfig(&collapsers, c.key, st, &cfg)
	}
	if h.collapsers != nil {
		for s := range h.collapsers.Collapsers() {
			st := CollapserStatus{RequestCacheEnabled: s.RequestCacheEnabled, MaxRequestsInBatch: s.MaxRequestsInBatch, TimerDelay: s.TimerDelay}
			appendCollapserConfig(&collapsers, s.Key, st, nil)
		}
	}
	o.close(&collapsers)
	b = o.end()
	return append(b, "\n\n"...)
}

// appendCommandConfig writes the field of command m into the "commands"
// object: SerialHystrixConfiguration's writeCommandConfigJson. Without a
// status provider the group and pool are the key and the settings zero,
// as on the dashboard stream.
func appendCommandConfig(commands *jsonObject, m *CommandMetrics) {
	st, _ := m.Status()
	group, pool := st.groupAndPool(m.key)
	p := &st.Properties
	cfg := m.Config()
	c := commands.open(m.key)
	c.string("threadPoolKey", pool)
	c.string("groupKey", group)
	e := c.open("execution")
	e.string("isolationStrategy", p.Isolation)
	e.stringOrNull("threadPoolKeyOverride", p.PoolKeyOverride)
	e.bool("requestCacheEnabled", p.RequestCacheEnabled)
	e.bool("requestLogEnabled", p.RequestLogEnabled)
	e.bool("timeoutEnabled", p.TimeoutEnabled)
	e.bool("fallbackEnabled", p.FallbackEnabled)
	e.millis("timeoutInMilliseconds", p.Timeout)
	e.int("semaphoreSize", int64(p.MaxConcurrentRequests))
	e.int("fallbackSemaphoreSize", int64(p.FallbackMaxConcurrentRequests))
	e.bool("threadInterruptOnTimeout", p.InterruptOnTimeout)
	if p.AdaptiveLimit != "" {
		e.string("adaptiveLimit", p.AdaptiveLimit)
	}
	if len(st.Partitions) > 0 {
		e.byPartition("partitions", st.Partitions, appendShare)
	}
	if b := &st.Backlog; b.Size > 0 {
		bo := e.open("backlog")
		bo.int("size", int64(b.Size))
		bo.millis("timeoutInMilliseconds", b.Timeout)
		bo.string("order", b.Order)
		e.close(&bo)
	}
	if f := &st.Faults; f.Enabled {
		fo := e.open("faults")
		fo.float("delayPercentage", f.DelayPercentage)
		fo.millis("delayInMilliseconds", f.Delay)
		fo.float("errorPercentage", f.ErrorPercentage)
		fo.bool("markedOnly", f.MarkedOnly)
		if !f.Until.IsZero() {
			fo.string("until", f.Until.UTC().Format(time.RFC3339Nano))
		}
		e.close(&fo)
	}
	c.close(&e)
	mo := c.open("metrics")
	mo.millis("healthBucketSizeInMs", cfg.HealthSnapshotInterval)
	appendWindows(&mo, &cfg)
	if cfg.HealthWindowCalls > 0 {
		mo.int("healthWindowCalls", int64(cfg.HealthWindowCalls))
	}
	c.close(&mo)
	cb := c.open("circuitBreaker")
	cb.bool("enabled", p.CircuitBreakerEnabled)
	cb.bool("isForcedOpen", p.ForceOpen)
	cb.bool("isForcedClosed", p.ForceClosed)
	cb.int("requestVolumeThreshold", int64(p.RequestVolumeThreshold))
	cb.int("errorPercentageThreshold", int64(p.ErrorThresholdPercentage))
	cb.millis("sleepInMilliseconds", p.SleepWindow)
	if p.MaxSleepWindow > 0 {
		cb.millis("maxSleepInMilliseconds", p.MaxSleepWindow)
		cb.float("sleepMultiplier", p.SleepWindowMultiplier)
	}
	if p.SleepWindowJitter > 0 {
		cb.millis("sleepJitterInMilliseconds", p.SleepWindowJitter)
	}
	if p.ConsecutiveFailures > 0 {
		cb.int("consecutiveFailures", int64(p.ConsecutiveFailures))
	}
	if p.Throttles() {
		cb.int("throttleSuccessPercentage", int64(p.ThrottleSuccessPercentage))
		cb.float("throttleAggression", p.ThrottleAggression)
		cb.int("maxThrottlePercentage", int64(p.MaxThrottlePercentage))
	}
	c.close(&cb)
	commands.close(&c)
}

// appendWindows writes the windows of cfg as Hystrix's metrics
// configuration of a command or collapser names them.
func appendWindows(o *jsonObject, cfg *Config) {
	o.millis("percentileBucketSizeInMilliseconds", cfg.percentileBucket())
	o.int("percentileBucketCount", int64(cfg.PercentileBuckets))
	o.bool("percentileEnabled", !cfg.PercentileDisabled)
	o.millis("counterBucketSizeInMilliseconds", cfg.rollingBucket())
	o.int("counterBucketCount", int64(cfg.Buckets))
}

// appendPoolConfig writes the field of pool p into the "threadpools"
// object: SerialHystrixConfiguration's writeThreadPoolConfigJson.
func appendPoolConfig(pools *jsonObject, p *PoolMetrics) {
	st, _ := p.Status()
	cfg := p.Config()
	maxQueue := int64(st.MaxQueueSize)
	if maxQueue <= 0 {
		maxQueue = -1
	}
	o := pools.open(p.key)
	o.int("coreSize", int64(st.CoreSize))
	o.int("maximumSize", int64(st.MaximumSize))
	o.int("actualMaximumSize", int64(st.MaximumSize))
	o.int("maxQueueSize", maxQueue)
	o.int("queueRejectionThreshold", int64(st.QueueSizeRejectionThreshold))
	o.int("keepAliveTimeInMinutes", 0)
	o.bool("allowMaximumSizeToDivergeFromCoreSize", false)
	o.millis("counterBucketSizeInMilliseconds", cfg.rollingBucket())
	o.int("counterBucketCount", int64(cfg.Buckets))
	if st.AdaptiveLimit != "" {
		o.string("adaptiveLimit", st.AdaptiveLimit)
	}
	pools.close(&o)
}

// appendCollapserConfig writes the field of collapser key into the
// "collapsers" object: SerialHystrixConfiguration's
// writeCollapserConfigJson, without "metrics" when cfg is nil.
func appendCollapserConfig(collapsers *jsonObject, key string, st CollapserStatus, cfg *Config) {
	o := collapsers.open(key)
	o.int("maxRequestsInBatch", int64(batchCap(st.MaxRequestsInBatch)))
	o.millis("timerDelayInMilliseconds", st.TimerDelay)
	o.bool("requestCacheEnabled", st.RequestCacheEnabled)
	if cfg != nil {
		mo := o.open("metrics")
		appendWindows(&mo, cfg)
		o.close(&mo)
	}
	collapsers.close(&o)
}
