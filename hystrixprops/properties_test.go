package hystrixprops

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/rxhystrix/rxhystrix/breaker"
	"github.com/rxhystrix/rxhystrix/command"
	"github.com/rxhystrix/rxhystrix/metricsstream"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func mustFromMap(t *testing.T, m map[string]string) *Properties {
	t.Helper()
	p, err := FromMap(m)
	require.NoError(t, err)
	return p
}

// Each field is the key's own property, else the code's value, else the
// default property, else Hystrix's default (zero), as Hystrix's chained
// properties resolve it.
func TestAFieldIsResolvedAsHystrixResolvesIt(t *testing.T) {
	const name = "circuitBreaker.errorThresholdPercentage"
	for _, tc := range []struct {
		what       string
		own, dflt  string
		code, want int
	}{
		{"the key's own beats the code's", "25", "75", 40, 25},
		{"the code's beats the default", "", "75", 40, 40},
		{"the default beats Hystrix's", "", "75", 0, 75},
		{"Hystrix's, when none is set", "", "", 0, 0},
		{"the key's own beats the default", "25", "75", 0, 25},
	} {
		t.Run(tc.what, func(t *testing.T) {
			m := map[string]string{}
			if tc.own != "" {
				m["hystrix.command.GetUser."+name] = tc.own
			}
			if tc.dflt != "" {
				m["hystrix.command.default."+name] = tc.dflt
			}
			cfg := mustFromMap(t, m).Command("GetUser", command.Config{Breaker: breaker.Config{ErrorThresholdPercentage: tc.code}})
			assert.Equal(t, tc.want, cfg.Breaker.ErrorThresholdPercentage)
		})
	}
}

// Every property of a command reaches its field, and the fields no
// property sets are the code's.
func TestEveryCommandPropertyReachesItsField(t *testing.T) {
	p := mustFromMap(t, map[string]string{
		"hystrix.command.GetUser.execution.isolation.strategy":                        "SEMAPHORE",
		"hystrix.command.GetUser.execution.isolation.thread.timeoutInMilliseconds":    "300",
		"hystrix.command.GetUser.execution.isolation.semaphore.maxConcurrentRequests": "30",
		"hystrix.command.GetUser.fallback.isolation.semaphore.maxConcurrentRequests":  "7",
		"hystrix.command.GetUser.fallback.enabled":                                    "false",
		"hystrix.command.GetUser.requestCache.enabled":                                "FALSE",
		"hystrix.command.GetUser.requestLog.enabled":                                  "false",
		"hystrix.command.GetUser.threadPoolKeyOverride":                               "Users",
		"hystrix.command.GetUser.circuitBreaker.enabled":                              "false",
		"hystrix.command.GetUser.circuitBreaker.requestVolumeThreshold":               "5",
		"hystrix.command.GetUser.circuitBreaker.sleepWindowInMilliseconds":            "8000",
		"hystrix.command.GetUser.circuitBreaker.errorThresholdPercentage":             "25",
		"hystrix.command.GetUser.circuitBreaker.forceOpen":                            "true",
		"hystrix.command.GetUser.circuitBreaker.forceClosed":                          "True",
		"hystrix.command.GetUser.metrics.rollingStats.timeInMilliseconds":             "20000",
		"hystrix.command.GetUser.metrics.rollingStats.numBuckets":                     "20",
		"hystrix.command.GetUser.metrics.rollingPercentile.enabled":                   "false",
		"hystrix.command.GetUser.metrics.rollingPercentile.timeInMilliseconds":        "30000",
		"hystrix.command.GetUser.metrics.rollingPercentile.numBuckets":                "3",
		"hystrix.command.GetUser.metrics.healthSnapshot.intervalInMilliseconds":       "250",
	})
	code := command.Config{Group: "Users", Retry: command.RetryConfig{MaxAttempts: 3}}
	got := p.Command("GetUser", code)
	assert.Equal(t, command.Config{
		Group:                         "Users",
		Pool:                          "Users",
		Isolation:                     command.SemaphoreIsolation,
		Timeout:                       300 * time.Millisecond,
		MaxConcurrentRequests:         30,
		FallbackMaxConcurrentRequests: 7,
		FallbackDisabled:              true,
		RequestCacheDisabled:          true,
		RequestLogDisabled:            true,
		Breaker: breaker.Config{Disabled: true, RequestVolumeThreshold: 5, SleepWindow: 8 * time.Second,
			ErrorThresholdPercentage: 25, ForceOpen: true, ForceClosed: true},
		Metrics: metricsstream.Config{RollingWindow: 20 * time.Second, Buckets: 20, PercentileDisabled: true,
			PercentileWindow: 30 * time.Second, PercentileBuckets: 3, HealthSnapshotInterval: 250 * time.Millisecond},
		Retry: command.RetryConfig{MaxAttempts: 3},
	}, got)
	assert.Equal(t, code, p.Command("GetOrder", code), "another key's properties")
	assert.NoError(t, got.Validate())
}

// A boolean that turns something off in rxhystrix's Config is resolved
// like any: the key's "enabled=true" turns on what the code turned off.
func TestAnEnabledPropertyBeatsTheCodesDisabled(t *testing.T) {
	p := mustFromMap(t, map[string]string{
		"hystrix.command.default.fallback.enabled":       "false",
		"hystrix.command.GetUser.circuitBreaker.enabled": "true",
	})
	cfg := p.Command("GetUser", command.Config{Breaker: breaker.Config{Disabled: true}})
	assert.False(t, cfg.Breaker.Disabled)
	assert.True(t, cfg.FallbackDisabled, "the default's")
	assert.False(t, p.Command("GetUser", command.Config{}).Breaker.Disabled)
}

// A boolean reads as Archaius reads it for Hystrix, so a file that
// Hystrix took means the same here: yes, on, y and t are true, no, off,
// n and f false, in any case.
func TestBooleansReadAsArchaiusReadsThem(t *testing.T) {
	for value, want := range map[string]bool{
		"true": true, "TRUE": true, "t": true, "yes": true, "Y": true, "on": true,
		"false": false, "F": false, "no": false, "n": false, "Off": false,
	} {
		p := mustFromMap(t, map[string]string{"hystrix.command.GetUser.circuitBreaker.forceOpen": value})
		assert.Equal(t, want, p.Command("GetUser", command.Config{}).Breaker.ForceOpen, value)
	}
}

// The timeout is Hystrix's two properties: whether it is enabled, and its
// length, each resolved on its own.
func TestTheTimeoutIsEnabledAndLong(t *testing.T) {
	for _, tc := range []struct {
		what  string
		props map[string]string
		code  time.Duration
		want  time.Duration
	}{
		{"the default's length", map[string]string{"hystrix.command.default.execution.isolation.thread.timeoutInMilliseconds": "2000"}, 0, 2 * time.Second},
		{"the code's length beats the default's", map[string]string{"hystrix.command.default.execution.isolation.thread.timeoutInMilliseconds": "2000"}, 500 * time.Millisecond, 500 * time.Millisecond},
		{"disabled by default", map[string]string{"hystrix.command.default.execution.timeout.enabled": "false"}, 500 * time.Millisecond, -1},
		{"disabled by the code, whatever the length", map[string]string{"hystrix.command.GetUser.execution.isolation.thread.timeoutInMilliseconds": "300"}, -1, -1},
		{"enabled by the key against the default", map[string]string{
			"hystrix.command.default.execution.timeout.enabled":                        "false",
			"hystrix.command.GetUser.execution.timeout.enabled":                        "true",
			"hystrix.command.GetUser.execution.isolation.thread.timeoutInMilliseconds": "300",
		}, 0, 300 * time.Millisecond},
		{"enabled by the key against the code, at Hystrix's length", map[string]string{"hystrix.command.GetUser.execution.timeout.enabled": "true"}, -1, 0},
	} {
		t.Run(tc.what, func(t *testing.T) {
			assert.Equal(t, tc.want, mustFromMap(t, tc.props).Command("GetUser", command.Config{Timeout: tc.code}).Timeout)
		})
	}
}

// A pool's properties resolve as a command's; maximumSize, when allowed
// to diverge and larger, is the pool's size.
func TestPoolProperties(t *testing.T) {
	p := mustFromMap(t, map[string]string{
		"hystrix.threadpool.default.coreSize":                             "20",
		"hystrix.threadpool.default.maxQueueSize":                         "50",
		"hystrix.threadpool.Users.queueSizeRejectionThreshold":            "40",
		"hystrix.threadpool.Orders.maximumSize":                           "30",
		"hystrix.threadpool.Orders.allowMaximumSizeToDivergeFromCoreSize": "true",
		"hystrix.threadpool.Orders.maxQueueSize":                          "-1", // a queue would keep it from growing
		"hystrix.threadpool.Search.maximumSize":                           "30",
	})
	assert.Equal(t, command.PoolConfig{CoreSize: 20, MaxQueueSize: 50, QueueSizeRejectionThreshold: 40},
		p.Pool("Users", command.PoolConfig{}))
	assert.Equal(t, command.PoolConfig{CoreSize: 8, MaxQueueSize: 50}, p.Pool("Mail", command.PoolConfig{CoreSize: 8}))
	assert.Equal(t, 30, p.Pool("Orders", command.PoolConfig{}).CoreSize)
	assert.Equal(t, 20, p.Pool("Search", command.PoolConfig{}).CoreSize, "maximumSize without allowMaximumSizeToDivergeFromCoreSize")
	p = mustFromMap(t, map[string]string{"hystrix.threadpool.default.allowMaximumSizeToDivergeFromCoreSize": "true",
		"hystrix.threadpool.Small.maximumSize": "5"})
	assert.Equal(t, 10, p.Pool("Mail", command.PoolConfig{CoreSize: 4}).CoreSize, "Hystrix's maximumSize, 10, unless set")
	assert.Equal(t, 12, p.Pool("Mail", command.PoolConfig{CoreSize: 12}).CoreSize, "the core size when larger")
	assert.Equal(t, 10, p.Pool("Small", command.PoolConfig{}).CoreSize, "Hystrix's core size, 10, when larger")
	assert.NoError(t, p.Pool("Orders", command.PoolConfig{}).Validate())
}

// A collapser's properties resolve as a command's.
func TestCollapserProperties(t *testing.T) {
	p := mustFromMap(t, map[string]string{
		"hystrix.collapser.default.timerDelayInMilliseconds": "20",
		"hystrix.collapser.GetUsers.maxRequestsInBatch":      "50",
		"hystrix.collapser.GetUsers.requestCache.enabled":    "false",
	})
	assert.Equal(t, command.CollapserConfig{MaxRequestsInBatch: 50, Delay: 20 * time.Millisecond, RequestCacheDisabled: true,
		Scope: command.GlobalScope}, p.Collapser("GetUsers", command.CollapserConfig{Scope: command.GlobalScope}))
	assert.Equal(t, command.CollapserConfig{Delay: 5 * time.Millisecond}, p.Collapser("GetOrders", command.CollapserConfig{Delay: 5 * time.Millisecond}))
	_, err := FromMap(map[string]string{"hystrix.collapser.default.timerDelayInMilliseconds": "0"})
	assert.EqualError(t, err, "hystrixprops: bad property hystrix.collapser.default.timerDelayInMilliseconds: 0 is not positive")
}

// A key may hold dots: the property's name is the longest that ends it.
func TestAKeyWithDots(t *testing.T) {
	p := mustFromMap(t, map[string]string{"hystrix.command.users.GetUser.v2.circuitBreaker.forceOpen": "true"})
	assert.True(t, p.Command("users.GetUser.v2", command.Config{}).Breaker.ForceOpen)
}

// A Hystrix property that names nothing, or whose value cannot be read or
// meant, is refused, naming it; the program's own properties are left
// alone.
func TestBadPropertiesAreRefusedNamingThem(t *testing.T) {
	for _, tc := range []struct{ name, value, want string }{
		{"hystrix.command.GetUser.circuitBreaker.errorThresholdPercent", "50", "no such property"},
		{"hystrix.command.circuitBreaker.forceOpen", "true", "no such property"},
		{"hystrix.threadpool.Users.timeoutInMilliseconds", "5", "no such property"},
		{"hystrix.stream.dashboard.intervalInMillis", "500", "not a property of a command, a collapser or a pool, nor one of Hystrix's others"},
		{"hystrix.stream.dashboard.intervalInMilliseconds", "0", "0 is not positive"},
		{"hystrix.plugin.implementation", "x", "not a property of a command, a collapser or a pool, nor one of Hystrix's others"},
		{"hystrix.command.GetUser.execution.isolation.thread.timeoutInMilliseconds", "1s", `"1s" is not an integer`},
		{"hystrix.command.GetUser.execution.isolation.thread.timeoutInMilliseconds", "0", "0 is not positive"},
		{"hystrix.command.default.circuitBreaker.requestVolumeThreshold", "0", "0 is not positive"},
		{"hystrix.command.default.circuitBreaker.errorThresholdPercentage", "0", "0 is not within [1, 100]"},
		{"hystrix.command.default.circuitBreaker.errorThresholdPercentage", "101", "101 is not within [1, 100]"},
		{"hystrix.command.default.execution.isolation.strategy", "thread", `"thread" is neither THREAD nor SEMAPHORE`},
		{"hystrix.command.default.fallback.enabled", "maybe", `"maybe" is neither true nor false`},
		{"hystrix.command.default.fallback.enabled", "1", `"1" is neither true nor false`},
		{"hystrix.command.default.threadPoolKeyOverride", "Users", "has no default, only a command's own"},
		{"hystrix.command.GetUser.threadPoolKeyOverride", " ", "empty"},
		{"hystrix.threadpool.default.coreSize", "0", "0 is not positive"},
		{"hystrix.threadpool.default.keepAliveTimeMinutes", "-1", "-1 is negative"},
	} {
		_, err := FromMap(map[string]string{tc.name: tc.value, "server.port": "8080"})
		require.Error(t, err, tc.name)
		assert.True(t, errors.Is(err, ErrBadProperty), "%v", err)
		assert.Equal(t, "hystrixprops: bad property "+tc.name+": "+tc.want, err.Error())
	}
	p, err := FromMap(map[string]string{"server.port": "8080", "hystrixish": "x"})
	require.NoError(t, err)
	assert.Equal(t, command.Config{}, p.Command("GetUser", command.Config{}))
}

// The properties that mean nothing here are named, with why; a file
// with none has none.
func TestIgnoredPropertiesAreNamed(t *testing.T) {
	p := mustFromMap(t, map[string]string{
		"hystrix.command.default.execution.isolation.thread.interruptOnTimeout": "false",
		"hystrix.threadpool.Users.keepAliveTimeMinutes":                         "2",
		"hystrix.collapser.default.metrics.rollingStats.numBuckets":             "20",
		"hystrix.command.GetUser.circuitBreaker.forceOpen":                      "false",
		// Hystrix's others, which a file moved from a Hystrix service may set.
		"hystrix.timer.threadpool.default.coreSize":          "8",
		"hystrix.stream.dashboard.intervalInMilliseconds":    "500",
		"hystrix.config.stream.maxConcurrentConnections":     "5",
		"hystrix.plugin.HystrixEventNotifier.implementation": "com.example.Notifier",
	})
	assert.Equal(t, []string{
		"hystrix.collapser.default.metrics.rollingStats.numBuckets: a collapser's metrics windows are its batch command's (command.WithConfig's Metrics)",
		"hystrix.command.default.execution.isolation.thread.interruptOnTimeout: a run's context always ends at its timeout",
		"hystrix.config.stream.maxConcurrentConnections: a stream's connections are bounded by metricsstream.WithMaxConnections",
		"hystrix.plugin.HystrixEventNotifier.implementation: plugins are Go values: hooks, a Tracer, metricsstream's registry (command.Registry's options)",
		"hystrix.stream.dashboard.intervalInMilliseconds: a stream's interval is metricsstream.WithInterval's, or its client's ?delay",
		"hystrix.threadpool.Users.keepAliveTimeMinutes: workers are goroutines, started for each task",
		"hystrix.timer.threadpool.default.coreSize: timeouts run on the registry's timer lists, not a thread pool",
	}, p.Ignored())
	assert.Empty(t, mustFromMap(t, nil).Ignored())
}

// Parse reads the .properties format: comments, the three separators,
// spaces around, continued lines but for a comment's; and refuses a property given twice or
// a line without a value.
func TestParse(t *testing.T) {
	p, err := Parse(strings.NewReader(`# Hystrix; a comment goes on no line \
hystrix.command.default.execution.isolation.thread.timeoutInMilliseconds = 2000
! also a comment
hystrix.command.GetUser.circuitBreaker.errorThresholdPercentage: 25

   hystrix.threadpool.Users.coreSize 20
hystrix.command.GetUser.circuitBreaker.\
    requestVolumeThreshold=5
server.port=8080
`))
	require.NoError(t, err)
	cfg := p.Command("GetUser", command.Config{})
	assert.Equal(t, 2*time.Second, cfg.Timeout)
	assert.Equal(t, 25, cfg.Breaker.ErrorThresholdPercentage)
	assert.Equal(t, 5, cfg.Breaker.RequestVolumeThreshold)
	assert.Equal(t, 20, p.Pool("Users", command.PoolConfig{}).CoreSize)

	for text, want := range map[string]string{
		"a=1\nhystrix.threadpool.Users.coreSize=2\nhystrix.threadpool.Users.coreSize=3\n": "hystrixprops: bad property: line 3: hystrix.threadpool.Users.coreSize is set on line 2 too",
		"\nhystrix.threadpool.Users.coreSize\n":                                           `hystrixprops: bad property: line 2: "hystrix.threadpool.Users.coreSize" has no value`,
		"hystrix.threadpool.Users.coreSize=ten\n":                                         `hystrixprops: bad property hystrix.threadpool.Users.coreSize: "ten" is not an integer`,
	} {
		_, err := Parse(strings.NewReader(text))
		assert.True(t, errors.Is(err, ErrBadProperty), "%v", err)
		assert.EqualError(t, err, want)
	}
}

// A number of milliseconds too large for a time.Duration (Hystrix's
// properties are Java ints) is refused, not wrapped around into a negative
// duration: a timeout of -1 would turn the timeout off, silently.
func TestMillisecondsThatOverflowADurationAreRefused(t *testing.T) {
	const name = "hystrix.command.GetUser.execution.isolation.thread.timeoutInMilliseconds"
	p, err := FromMap(map[string]string{name: "9300000000000"})
	if err == nil {
		assert.Positive(t, p.Command("GetUser", command.Config{}).Timeout, "the timeout wrapped around")
	}
	assert.ErrorIs(t, err, ErrBadProperty)
	_, err = FromMap(map[string]string{"hystrix.threadpool.Users.coreSize": "2147483648"})
	assert.ErrorIs(t, err, ErrBadProperty, "over Java's Integer.MAX_VALUE")
	_, err = FromMap(map[string]string{"hystrix.threadpool.Users.coreSize": "2147483647"})
	assert.NoError(t, err)
}

// A command keyed by host and port, as httpcommand.Host keys a request
// to "https://api.example.com:8443", is configured from a file whose
// name escapes the colon, as java.util.Properties writes and reads it.
func TestParseConfiguresAKeyWithAColon(t *testing.T) {
	p, err := Parse(strings.NewReader(`hystrix.command.api.example.com\:8443.circuitBreaker.forceOpen=true` + "\n"))
	require.NoError(t, err)
	assert.True(t, p.Command("api.example.com:8443", command.Config{}).Breaker.ForceOpen)
}

// A pool key in threadPoolKeyOverride's value is read with its escapes,
// as the same key in a hystrix.threadpool name is: a command keyed by
// host and port sends its runs to the pool the same file sizes, not to
// one whose name holds a backslash.
func TestThreadPoolKeyOverrideReadsItsEscapes(t *testing.T) {
	p, err := Parse(strings.NewReader(`hystrix.command.GetUser.threadPoolKeyOverride=api.example.com\:8443
hystrix.threadpool.api.example.com\:8443.coreSize=3
`))
	require.NoError(t, err)
	cfg := p.Command("GetUser", command.Config{})
	assert.Equal(t, "api.example.com:8443", cfg.Pool)
	assert.Equal(t, 3, p.Pool(cfg.Pool, command.PoolConfig{}).CoreSize)
}

// A file saved with a byte order mark (a Windows editor's UTF-8) is read
// as without: its first property, misspelt, is refused, and spelt right,
// is in force, rather than passed over as the program's own.
func TestParseReadsPastAByteOrderMark(t *testing.T) {
	_, err := Parse(strings.NewReader("\ufeffhystrix.command.GetUser.circuitBreaker.forceOpn=true\n"))
	assert.ErrorIs(t, err, ErrBadProperty)
	p, err := Parse(strings.NewReader("\ufeffhystrix.command.GetUser.circuitBreaker.forceOpen=true\r\n"))
	require.NoError(t, err)
	assert.True(t, p.Command("GetUser", command.Config{}).Breaker.ForceOpen)
}

// With a queue, Hystrix's pool grows past coreSize only when the queue is
// full, and queueSizeRejectionThreshold rejects before it is unless the
// threshold is larger than maxQueueSize (Hystrix issue #1964): there
// maximumSize never takes effect, and the pool runs coreSize tasks at
// once, not maximumSize.
func TestMaximumSizeWithAQueueTheThresholdKeepsFromFilling(t *testing.T) {
	p := mustFromMap(t, map[string]string{
		"hystrix.threadpool.default.coreSize":                              "2",
		"hystrix.threadpool.default.maximumSize":                           "8",
		"hystrix.threadpool.default.allowMaximumSizeToDivergeFromCoreSize": "true",
		"hystrix.threadpool.Queued.maxQueueSize":                           "10",
		"hystrix.threadpool.Filling.maxQueueSize":                          "10",
		"hystrix.threadpool.Filling.queueSizeRejectionThreshold":           "11",
		"hystrix.threadpool.Full.maxQueueSize":                             "5",
	})
	assert.Equal(t, 2, p.Pool("Queued", command.PoolConfig{}).CoreSize, "the threshold, 5, rejects before the queue of 10 is full")
	assert.Equal(t, 2, p.Pool("Full", command.PoolConfig{}).CoreSize, "the threshold, 5, rejects when the queue of 5 is full")
	assert.Equal(t, 8, p.Pool("Filling", command.PoolConfig{}).CoreSize, "the queue fills: the pool grows")
	assert.Equal(t, 8, p.Pool("Direct", command.PoolConfig{}).CoreSize, "no queue")
	assert.Equal(t, 2, p.Pool("Direct", command.PoolConfig{MaxQueueSize: 10}).CoreSize, "the code's queue")
}
