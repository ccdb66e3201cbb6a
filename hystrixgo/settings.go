package hystrix

import (
	"math"
	"time"

	"github.com/rxhystrix/rxhystrix/breaker"
	"github.com/rxhystrix/rxhystrix/command"
	"github.com/rxhystrix/rxhystrix/metricsstream"
)

// The defaults a zero CommandConfig field takes. They are read when
// ConfigureCommand is called (or when a name is first used without
// configuration); changing them later does not change configured names.
var (
	// DefaultTimeout is how long a command may run, in milliseconds.
	DefaultTimeout = 1000
	// DefaultMaxConcurrent is how many commands of a name may run at once.
	DefaultMaxConcurrent = 10
	// DefaultVolumeThreshold is the least number of requests in the
	// rolling 10 s window that can open the circuit.
	DefaultVolumeThreshold = 20
	// DefaultSleepWindow is how long an open circuit waits before it lets
	// a trial through, in milliseconds.
	DefaultSleepWindow = 5000
	// DefaultErrorPercentThreshold is the error percentage that opens the
	// circuit.
	DefaultErrorPercentThreshold = 50
)

// CommandConfig configures a name. Timeout and SleepWindow are in
// milliseconds; a zero field takes its Default* value.
type CommandConfig struct {
	Timeout                int `json:"timeout"`
	MaxConcurrentRequests  int `json:"max_concurrent_requests"`
	RequestVolumeThreshold int `json:"request_volume_threshold"`
	SleepWindow            int `json:"sleep_window"`
	ErrorPercentThreshold  int `json:"error_percent_threshold"`
}

// Settings is the configuration in force for a name, in Go's units.
type Settings struct {
	Timeout                time.Duration
	MaxConcurrentRequests  int
	RequestVolumeThreshold uint64
	SleepWindow            time.Duration
	ErrorPercentThreshold  int
}

// Configure calls ConfigureCommand for each entry of cmds.
func Configure(cmds map[string]CommandConfig) {
	for name, cfg := range cmds {
		ConfigureCommand(name, cfg)
	}
}

// ConfigureCommand sets the configuration of name, live if its commands
// run already: the timeout, the concurrency limit and the circuit's
// thresholds apply to the next command. The values hystrix-go takes
// without a word mean here what they mean there: an ErrorPercentThreshold
// over 100 never trips the circuit (it is forced closed), a negative one
// trips it at the first error in a volume (hystrix-go's trips even
// without one), and a negative Timeout or SleepWindow is none at all (every
// command times out at once; the circuit tries a request at once). A
// negative MaxConcurrentRequests, on which hystrix-go panics, is logged
// and the previous configuration stays.
func ConfigureCommand(name string, config CommandConfig) {
	current().configure(name, settingsOf(config))
}

// GetCircuitSettings returns a copy of the settings of every configured
// name (and of every name used without configuration, which has the
// defaults).
func GetCircuitSettings() map[string]*Settings {
	e := current()
	e.settingsMu.RLock()
	defer e.settingsMu.RUnlock()
	m := make(map[string]*Settings, len(e.settings))
	for name, s := range e.settings {
		c := *s
		m[name] = &c
	}
	return m
}

// atLeastANanosecond is d, or a nanosecond for a negative d: hystrix-go's
// timer of a negative duration fires at once, where a negative duration
// here means none at all.
func atLeastANanosecond(d time.Duration) time.Duration { return max(d, time.Nanosecond) }

// orDefault returns v, or d when v is zero.
func orDefault(v, d int) int {
	if v == 0 {
		return d
	}
	return v
}

// settingsOf converts a CommandConfig, with the defaults of the moment.
func settingsOf(c CommandConfig) *Settings {
	return &Settings{
		Timeout:                time.Duration(orDefault(c.Timeout, DefaultTimeout)) * time.Millisecond,
		MaxConcurrentRequests:  orDefault(c.MaxConcurrentRequests, DefaultMaxConcurrent),
		RequestVolumeThreshold: uint64(orDefault(c.RequestVolumeThreshold, DefaultVolumeThreshold)),
		SleepWindow:            time.Duration(orDefault(c.SleepWindow, DefaultSleepWindow)) * time.Millisecond,
		ErrorPercentThreshold:  orDefault(c.ErrorPercentThreshold, DefaultErrorPercentThreshold),
	}
}

// healthInterval is how often a circuit's health is judged: hystrix-go
// judges it on every request, rxhystrix on snapshots, 500ms apart unless
// told otherwise. 250ms keeps the lag short (with 500ms, bench/peers'
// failing rxhystrix-hystrixgo rows were short-circuited a fifth as often
// as hystrix-go's, and cost 0.23× its time against 0.07×) without the
// memory of finer buckets (bench/memory: 100ms cost 2.5 KB more a name).
const healthInterval = 250 * time.Millisecond

// commandConfig is the rxhystrix configuration of a name with settings s:
// a pool of its own of MaxConcurrentRequests workers with no queue,
// fallbacks unbounded, as hystrix-go's are, and health judged every
// healthInterval.
func commandConfig(key string, s *Settings) (command.Config, command.PoolConfig) {
	threshold, forceClosed := s.ErrorPercentThreshold, false
	switch {
	case threshold > 100: // hystrix-go: never unhealthy
		threshold, forceClosed = 100, true
	case threshold < 0: // hystrix-go: never healthy; here, at the first error
		threshold = 1
	}
	return command.Config{
			Pool:                          key,
			Isolation:                     command.PoolIsolation,
			Timeout:                       atLeastANanosecond(s.Timeout),
			MaxConcurrentRequests:         s.MaxConcurrentRequests,
			FallbackMaxConcurrentRequests: math.MaxInt32,
			Breaker: breaker.Config{
				RequestVolumeThreshold:   int(min(s.RequestVolumeThreshold, math.MaxInt32)),
				ErrorThresholdPercentage: threshold,
				SleepWindow:              atLeastANanosecond(s.SleepWindow),
				ForceClosed:              forceClosed,
			},
			Metrics: metricsstream.Config{HealthSnapshotInterval: healthInterval},
		}, command.PoolConfig{
			CoreSize:     s.MaxConcurrentRequests,
			MaxQueueSize: 0,
		}
}
