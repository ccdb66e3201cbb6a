package hystrixprops

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// valueKind is what a property's value must be.
type valueKind int

const (
	positive    valueKind = iota // an integer of at least 1
	nonNegative                  // an integer of at least 0
	integer                      // any integer
	boolean                      // true or false (or Archaius's yes, on, ...), in any case
	percentage                   // an integer from 1 to 100
	isolation                    // THREAD or SEMAPHORE
	name                         // a pool key: any text but empty
)

// property is one of Hystrix's properties that a file may set.
type property struct {
	kind valueKind
	// instanceOnly is set for a property without a default level
	// (threadPoolKeyOverride).
	instanceOnly bool
	// ignored says why a property has no effect here; empty for one
	// that does.
	ignored string
}

// collapserMetrics says why a collapser's metrics properties are ignored.
const collapserMetrics = "a collapser's metrics windows are its batch command's (command.WithConfig's Metrics)"

// The properties of hystrix.command.<key>., hystrix.collapser.<key>. and
// hystrix.threadpool.<key>., by name (HystrixCommandProperties,
// HystrixCollapserProperties, HystrixThreadPoolProperties).
var (
	commandProperties = map[string]property{
		"execution.isolation.strategy":                        {kind: isolation},
		"execution.isolation.thread.timeoutInMilliseconds":    {kind: positive},
		"execution.timeout.enabled":                           {kind: boolean},
		"execution.isolation.thread.interruptOnTimeout":       {kind: boolean, ignored: "a run's context always ends at its timeout"},
		"execution.isolation.thread.interruptOnFutureCancel":  {kind: boolean, ignored: "a run's context always ends when its caller leaves"},
		"execution.isolation.semaphore.maxConcurrentRequests": {kind: positive},
		"fallback.isolation.semaphore.maxConcurrentRequests":  {kind: positive},
		"fallback.enabled":                                    {kind: boolean},
		"circuitBreaker.enabled":                              {kind: boolean},
		"circuitBreaker.requestVolumeThreshold":               {kind: positive},
		"circuitBreaker.sleepWindowInMilliseconds":            {kind: positive},
		"circuitBreaker.errorThresholdPercentage":             {kind: percentage},
		"circuitBreaker.forceOpen":                            {kind: boolean},
		"circuitBreaker.forceClosed":                          {kind: boolean},
		"metrics.rollingStats.timeInMilliseconds":             {kind: positive},
		"metrics.rollingStats.numBuckets":                     {kind: positive},
		"metrics.rollingPercentile.enabled":                   {kind: boolean},
		"metrics.rollingPercentile.timeInMilliseconds":        {kind: positive},
		"metrics.rollingPercentile.numBuckets":                {kind: positive},
		"metrics.rollingPercentile.bucketSize":                {kind: positive, ignored: "a latency distribution keeps every value of its window"},
		"metrics.healthSnapshot.intervalInMilliseconds":       {kind: positive},
		"requestCache.enabled":                                {kind: boolean},
		"requestLog.enabled":                                  {kind: boolean},
		"threadPoolKeyOverride":                               {kind: name, instanceOnly: true},
	}
	collapserProperties = map[string]property{
		"maxRequestsInBatch":                           {kind: positive},
		"timerDelayInMilliseconds":                     {kind: positive},
		"requestCache.enabled":                         {kind: boolean},
		"metrics.rollingStats.timeInMilliseconds":      {kind: positive, ignored: collapserMetrics},
		"metrics.rollingStats.numBuckets":              {kind: positive, ignored: collapserMetrics},
		"metrics.rollingPercentile.enabled":            {kind: boolean, ignored: collapserMetrics},
		"metrics.rollingPercentile.timeInMilliseconds": {kind: positive, ignored: collapserMetrics},
		"metrics.rollingPercentile.numBuckets":         {kind: positive, ignored: collapserMetrics},
		"metrics.rollingPercentile.bucketSize":         {kind: positive, ignored: collapserMetrics},
	}
	poolProperties = map[string]property{
		"coreSize":                                {kind: positive},
		"maximumSize":                             {kind: positive},
		"allowMaximumSizeToDivergeFromCoreSize":   {kind: boolean},
		"keepAliveTimeMinutes":                    {kind: nonNegative, ignored: "workers are goroutines, started for each task"},
		"maxQueueSize":                            {kind: integer},
		"queueSizeRejectionThreshold":             {kind: positive},
		"metrics.rollingStats.timeInMilliseconds": {kind: positive, ignored: "a pool's metrics have Hystrix's default windows"},
		"metrics.rollingStats.numBuckets":         {kind: positive, ignored: "a pool's metrics have Hystrix's default windows"},
	}
)

// The prefixes of Hystrix's properties, and the key of their default
// level.
const (
	commandPrefix   = "hystrix.command."
	poolPrefix      = "hystrix.threadpool."
	collapserPrefix = "hystrix.collapser."
	defaultKey      = "default"
)

// split splits the rest of a property's name after its prefix into the
// key and the name of a property of known, the longest that ends it, so
// that a key may hold dots ("GetUser.v2").
func split(rest string, known map[string]property) (key, prop string, ok bool) {
	for name := range known {
		if k, found := strings.CutSuffix(rest, "."+name); found && k != "" && len(name) > len(prop) {
			key, prop, ok = k, name, true
		}
	}
	return key, prop, ok
}

// check reports whether value is a value of kind, with an error that says
// what is wrong.
func check(kind valueKind, value string) error {
	switch kind {
	case boolean:
		if _, err := parseBool(value); err != nil {
			return err
		}
	case isolation:
		if value != "THREAD" && value != "SEMAPHORE" {
			return fmt.Errorf("%q is neither THREAD nor SEMAPHORE", value)
		}
	case name:
		if value == "" {
			return fmt.Errorf("empty")
		}
	default:
		// Hystrix's properties are Java ints: a value beyond one is
		// refused, as a number of milliseconds beyond one could also
		// wrap around into a negative time.Duration.
		n64, err := strconv.ParseInt(value, 10, 32)
		switch {
		case errors.Is(err, strconv.ErrRange):
			return fmt.Errorf("%q is beyond a Java int", value)
		case err != nil:
			return fmt.Errorf("%q is not an integer", value)
		}
		n := int(n64)
		switch {
		case kind == positive && n < 1:
			return fmt.Errorf("%d is not positive", n)
		case kind == nonNegative && n < 0:
			return fmt.Errorf("%d is negative", n)
		case kind == percentage && (n < 1 || n > 100):
			return fmt.Errorf("%d is not within [1, 100]", n)
		}
	}
	return nil
}

// parseBool reads a boolean as Archaius, through which Hystrix reads its
// properties, does: true, t, yes, y or on, false, f, no, n or off,
// whatever their case. Another value is an error, where Archaius logs it
// and uses the default.
func parseBool(value string) (bool, error) {
	switch strings.ToLower(value) {
	case "true", "t", "yes", "y", "on":
		return true, nil
	case "false", "f", "no", "n", "off":
		return false, nil
	}
	return false, fmt.Errorf("%q is neither true nor false", value)
}

// globalProperties are Hystrix's properties of no command, pool or
// collapser (HystrixTimerThreadPoolProperties, the metrics streams): a
// file moved from a Hystrix service may set them, and they are taken,
// checked, and named among the ignored, with what does their work here.
var globalProperties = map[string]property{
	"hystrix.timer.threadpool.default.coreSize":         {kind: positive, ignored: "timeouts run on the registry's timer lists, not a thread pool"},
	"hystrix.stream.dashboard.intervalInMilliseconds":   {kind: positive, ignored: streamInterval},
	"hystrix.stream.utilization.intervalInMilliseconds": {kind: positive, ignored: streamInterval},
	"hystrix.stream.config.intervalInMilliseconds":      {kind: positive, ignored: streamInterval},
	"hystrix.config.stream.maxConcurrentConnections":    {kind: positive, ignored: "a stream's connections are bounded by metricsstream.WithMaxConnections"},
}

// streamInterval says why a stream's interval property is ignored.
const streamInterval = "a stream's interval is metricsstream.WithInterval's, or its client's ?delay"

// pluginPrefix begins Hystrix's plugin properties,
// hystrix.plugin.<PluginSimpleName>.implementation: a Java class name.
const pluginPrefix = "hystrix.plugin."

// pluginIgnored says why a plugin property is ignored.
const pluginIgnored = "plugins are Go values: hooks, a Tracer, metricsstream's registry (command.Registry's options)"
