package command_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/breaker"
	"github.com/rxhystrix/rxhystrix/command"
	"github.com/rxhystrix/rxhystrix/internal/clock"
	"github.com/rxhystrix/rxhystrix/metricsstream"
)

var fuzzEpoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// invalidCommandField is the fuzz target's own statement of
// Config.Validate's rules: the name of the first field of c that is out
// of range, in Validate's order, or "".
func invalidCommandField(c command.Config) string {
	switch {
	case c.Isolation != command.DefaultIsolation && c.Isolation != command.PoolIsolation && c.Isolation != command.SemaphoreIsolation:
		return "Isolation"
	case c.MaxConcurrentRequests < 0:
		return "MaxConcurrentRequests"
	case c.FallbackMaxConcurrentRequests < 0:
		return "FallbackMaxConcurrentRequests"
	case c.Breaker.Validate() != nil:
		return "Breaker"
	case c.Metrics.Validate() != nil:
		return "Metrics"
	}
	return ""
}

// FuzzConfig feeds arbitrary command configurations to Config.Validate,
// New, Registry.Configure and Configure. An invalid one is refused by
// each, with a message that names the field; a valid one makes a command
// that runs, falls back, honours its force flags and reports the
// configuration in force with Hystrix's defaults filled in.
func FuzzConfig(f *testing.F) {
	f.Add(0, int64(0), 0, 0, false, false, false, false, 0, 0, int64(0), int64(0), 0)
	f.Add(1, int64(100*time.Millisecond), 5, 5, false, true, false, false, 20, 50, int64(5*time.Second), int64(10*time.Second), 10)
	f.Add(0, int64(-1), 1, 1, true, false, true, false, 1, 100, int64(time.Millisecond), int64(time.Second), 1)
	f.Add(1, int64(time.Hour), 0, 0, false, false, false, true, 0, 0, int64(0), int64(0), 0)
	f.Add(2, int64(0), 0, 0, false, false, false, false, 0, 0, int64(0), int64(0), 0)
	f.Add(3, int64(0), 0, 0, false, false, false, false, 0, 0, int64(0), int64(0), 0)
	f.Add(-1, int64(0), 0, 0, false, false, false, false, 0, 0, int64(0), int64(0), 0)
	f.Add(0, int64(0), -1, 0, false, false, false, false, 0, 0, int64(0), int64(0), 0)
	f.Add(0, int64(0), 0, -3, false, false, false, false, 0, 0, int64(0), int64(0), 0)
	f.Add(0, int64(0), 0, 0, false, false, false, false, -1, 0, int64(0), int64(0), 0)
	f.Add(0, int64(0), 0, 0, false, false, false, false, 0, 101, int64(0), int64(0), 0)
	f.Add(0, int64(0), 0, 0, false, false, false, false, 0, 0, int64(-5), int64(0), 0)
	f.Add(0, int64(0), 0, 0, false, false, false, false, 0, 0, int64(0), int64(-1), 0)
	f.Add(0, int64(0), 0, 0, false, false, false, false, 0, 0, int64(0), int64(5), 10)
	f.Add(1, int64(1<<62), 1<<40, 1<<40, true, true, true, true, 1<<40, 100, int64(1<<62), int64(time.Minute), 10_000)
	f.Add(0, int64(math.MaxInt64), 0, 0, false, false, false, false, 0, 0, int64(0), int64(0), 0)
	f.Add(1, int64(math.MaxInt64), 0, 0, false, false, false, false, 0, 0, int64(0), int64(0), 0)
	f.Add(0, int64(250*365*24*time.Hour), 0, 0, false, false, false, false, 0, 0, int64(0), int64(0), 0)

	var keys atomic.Int64
	f.Fuzz(func(t *testing.T, isolation int, timeout int64, maxConcurrent, fallbackMax int,
		fallbackDisabled, forceOpen, forceClosed, breakerDisabled bool,
		volume, errPct int, sleep, rolling int64, buckets int) {
		cfg := command.Config{
			Isolation:                     command.Isolation(isolation),
			Timeout:                       time.Duration(timeout),
			MaxConcurrentRequests:         maxConcurrent,
			FallbackMaxConcurrentRequests: fallbackMax,
			FallbackDisabled:              fallbackDisabled,
			Breaker: breaker.Config{
				Disabled:                 breakerDisabled,
				RequestVolumeThreshold:   volume,
				ErrorThresholdPercentage: errPct,
				SleepWindow:              time.Duration(sleep),
				ForceOpen:                forceOpen,
				ForceClosed:              forceClosed,
			},
			Metrics: metricsstream.Config{RollingWindow: time.Duration(rolling), Buckets: buckets},
		}
		key := fmt.Sprintf("fuzz-%d", keys.Add(1))
		r := command.NewRegistry(command.WithClock(clock.NewManual(fuzzEpoch)))
		defer r.Close()

		err := cfg.Validate()
		if field := invalidCommandField(cfg); field != "" {
			checkCommandConfigRefused(t, r, key, cfg, err, field)
			return
		}
		require.NoError(t, err, "a valid config")
		checkCommandConfigRuns(t, r, key, cfg)
	})
}

// checkCommandConfigRefused checks that Validate, New, Registry.Configure
// and Configure all refuse the invalid cfg, naming field: New panics, the
// others return the error.
func checkCommandConfigRefused(t *testing.T, r *command.Registry, key string, cfg command.Config, err error, field string) {
	t.Helper()
	require.Error(t, err, "field %s is invalid", field)
	assert.Contains(t, err.Error(), "command: Config."+field+":")
	assert.ErrorIs(t, err, command.ErrInvalidConfig)
	switch field {
	case "Breaker":
		assert.ErrorIs(t, err, breaker.ErrInvalidConfig)
	case "Metrics":
		assert.ErrorIs(t, err, metricsstream.ErrInvalidConfig)
	}

	msg := panicMessage(func() {
		command.New(key, func(context.Context, int) (int, error) { return 0, nil },
			command.WithRegistry(r), command.WithConfig(cfg))
	})
	assert.Contains(t, msg, fmt.Sprintf("New(%q)", key))
	assert.Contains(t, msg, "Config."+field)

	assert.Equal(t, err, r.Configure(key, cfg), "Registry.Configure returns Validate's error")
	_, known := r.Config(key)
	assert.False(t, known, "a refused Configure makes no key")

	assert.Equal(t, err, command.Configure(key, cfg), "the package-level Configure returns Validate's error")
}

// panicMessage returns what f panics with, as text, or "" if it returns.
func panicMessage(f func()) (msg string) {
	defer func() {
		if v := recover(); v != nil {
			msg = fmt.Sprint(v)
		}
	}()
	f()
	return ""
}

// checkCommandConfigRuns makes a command with the valid cfg and runs it
// through Execute and ToObservable.
func checkCommandConfigRuns(t *testing.T, r *command.Registry, key string, cfg command.Config) {
	t.Helper()
	fallback := func(_ context.Context, in int, err error) (int, error) {
		var cmdErr *command.Error
		if !errors.As(err, &cmdErr) {
			return 0, fmt.Errorf("fallback got %T %v, want *command.Error", err, err)
		}
		return -in, nil
	}
	c := command.New(key, func(_ context.Context, in int) (int, error) { return in + 1, nil }, command.WithRegistry(r), command.WithConfig(cfg)).WithFallback(fallback)

	got, ok := r.Config(key)
	require.True(t, ok)
	assert.Equal(t, key, got.Group, "Group defaults to the key")
	assert.Equal(t, key, got.Pool, "Pool defaults to the group")
	wantIsolation := cfg.Isolation
	if wantIsolation == command.DefaultIsolation {
		wantIsolation = command.PoolIsolation // a Command's default
	}
	assert.Equal(t, wantIsolation, got.Isolation)
	wantTimeout := cfg.Timeout
	if wantTimeout == 0 {
		wantTimeout = command.DefaultTimeout
	}
	assert.Equal(t, wantTimeout, got.Timeout)
	assert.Equal(t, orDefault(cfg.MaxConcurrentRequests, command.DefaultMaxConcurrentRequests), got.MaxConcurrentRequests)
	assert.Equal(t, orDefault(cfg.FallbackMaxConcurrentRequests, command.DefaultFallbackMaxConcurrentRequests), got.FallbackMaxConcurrentRequests)

	ctx := context.Background()
	shortCircuited := cfg.Breaker.ForceOpen && !cfg.Breaker.Disabled
	for _, execute := range []func() (int, error){
		func() (int, error) { return c.Execute(ctx, 41) },
		func() (int, error) { return c.ToObservable(ctx, 41).First(ctx) },
	} {
		v, err := execute()
		switch {
		case !shortCircuited:
			require.NoError(t, err)
			assert.Equal(t, 42, v, "run's value")
		case cfg.FallbackDisabled:
			assert.ErrorIs(t, err, command.ErrShortCircuited)
			assert.ErrorIs(t, err, command.ErrFallbackDisabled)
			assert.Zero(t, v)
		default:
			require.NoError(t, err)
			assert.Equal(t, -41, v, "the fallback's value when forced open")
		}
	}
	event := metricsstream.Success
	if shortCircuited {
		event = metricsstream.ShortCircuited
	}
	// ToObservable's subscriber may have its value before the execution is
	// recorded; it is once it no longer counts as running.
	require.Eventually(t, func() bool { return c.Metrics().ConcurrentExecutions() == 0 },
		10*time.Second, time.Millisecond)
	width := c.Metrics().Config().RollingWindow / time.Duration(c.Metrics().Config().Buckets)
	r.Clock().(*clock.Manual).Advance(width)
	assert.Equal(t, int64(2), c.Metrics().CumulativeCount(event), "%v once per execution", event)

	// The key's configuration can be replaced live by itself, and the
	// Config in force written back changes nothing.
	require.NoError(t, r.Configure(key, cfg))
	inForce, _ := r.Config(key)
	require.NoError(t, r.Configure(key, inForce))
	again, _ := r.Config(key)
	assert.Equal(t, inForce, again, "Configure with the Config read back changes nothing")
}

func orDefault(v, d int) int {
	if v == 0 {
		return d
	}
	return v
}

// FuzzPoolConfig feeds arbitrary pool configurations to
// PoolConfig.Validate, Registry.ConfigurePool and ConfigurePool. An invalid
// one is refused naming the field; with a valid one the pool runs CoreSize
// calls at once, queues min(MaxQueueSize, QueueSizeRejectionThreshold)
// more (none when MaxQueueSize <= 0), and rejects the next, as Hystrix's
// thread pool does.
func FuzzPoolConfig(f *testing.F) {
	f.Add(0, 0, 0, int64(0))
	f.Add(1, 0, 0, int64(0))
	f.Add(2, 10, 3, int64(time.Second))
	f.Add(3, 2, 5, int64(-1))
	f.Add(1, -1, 1, int64(0))
	f.Add(4, 100, 0, int64(0))
	f.Add(-1, 0, 0, int64(0))
	f.Add(0, 0, -1, int64(0))
	f.Add(1<<40, 1<<40, 1<<40, int64(1<<62))

	var keys atomic.Int64
	f.Fuzz(func(t *testing.T, coreSize, maxQueue, threshold int, idle int64) {
		cfg := command.PoolConfig{CoreSize: coreSize, MaxQueueSize: maxQueue,
			QueueSizeRejectionThreshold: threshold, IdleTimeout: time.Duration(idle)}
		name := fmt.Sprintf("fuzz-pool-%d", keys.Add(1))
		r := command.NewRegistry()
		defer r.Close()

		err := cfg.Validate()
		var field string
		switch {
		case coreSize < 0:
			field = "CoreSize"
		case threshold < 0:
			field = "QueueSizeRejectionThreshold"
		}
		if field != "" {
			require.Error(t, err)
			assert.Contains(t, err.Error(), "command: PoolConfig."+field+":")
			assert.ErrorIs(t, err, command.ErrInvalidConfig)
			assert.Equal(t, err, r.ConfigurePool(name, cfg))
			assert.Equal(t, err, command.ConfigurePool(name, cfg), "the package-level ConfigurePool returns the same error")
			return
		}
		require.NoError(t, err)
		require.NoError(t, r.ConfigurePool(name, cfg))
		checkPoolLimits(t, r, name, cfg)
	})
}

// The largest pool whose limits FuzzPoolConfig fills; a larger one runs a
// single call.
const maxFilledPool = 64

// checkPoolLimits fills the pool named name, made with cfg, to its limits.
func checkPoolLimits(t *testing.T, r *command.Registry, name string, cfg command.PoolConfig) {
	t.Helper()
	core := orDefault(cfg.CoreSize, command.DefaultCoreSize)
	queue := 0
	if cfg.MaxQueueSize > 0 {
		queue = min(cfg.MaxQueueSize, orDefault(cfg.QueueSizeRejectionThreshold, command.DefaultQueueSizeRejectionThreshold))
	}
	var running atomic.Int64
	release := make(chan struct{})
	c := command.New(name, func(ctx context.Context, block bool) (bool, error) {
		if block {
			running.Add(1)
			<-release
		}
		return true, nil
	}, command.WithRegistry(r), command.WithConfig(command.Config{Pool: name, Timeout: -1}))
	ctx := context.Background()
	if core+queue > maxFilledPool {
		ok, err := c.Execute(ctx, false)
		require.NoError(t, err)
		assert.True(t, ok)
		return
	}

	var wg sync.WaitGroup
	errs := make(chan error, core+queue)
	defer func() {
		close(release)
		wg.Wait()
		close(errs)
		for err := range errs {
			assert.NoError(t, err, "a call that ran or waited in the queue")
		}
	}()
	for range core + queue {
		wg.Go(func() {
			if _, err := c.Execute(ctx, true); err != nil {
				errs <- err
			}
		})
	}
	require.Eventually(t, func() bool {
		pm, ok := r.Metrics().LookupPool(name)
		return ok && running.Load() == int64(core) && pm.QueueSize() == int64(queue)
	}, 10*time.Second, time.Millisecond, "%d calls run and %d wait", core, queue)

	_, err := c.Execute(ctx, false)
	assert.ErrorIs(t, err, command.ErrPoolRejected, "the call after CoreSize %d and a queue of %d", core, queue)
	assert.True(t, strings.HasPrefix(err.Error(), name+" could not be queued for execution"), err.Error())
}

// FuzzKeys feeds arbitrary command keys to New and Registry.Configure, and
// arbitrary pool keys to a WithPoolKey function. A key that is empty or not
// valid UTF-8 is refused naming it (New panics, Configure returns
// ErrInvalidKey); a pool key function returning one, or panicking, fails
// the execution as FAILURE with the fallback applied, and makes no pool.
// Any other key runs.
func FuzzKeys(f *testing.F) {
	for _, k := range []string{"GetUser", "", "bad-\xff", "\xfe", "π", "a b/c", "\x00"} {
		f.Add(k, k)
	}
	f.Add("GetUser", "\xffpanic")
	f.Fuzz(func(t *testing.T, key, poolKey string) {
		r := command.NewRegistry(command.WithClock(clock.NewManual(fuzzEpoch)))
		defer r.Close()
		validKey := key != "" && utf8.ValidString(key)
		run := func(_ context.Context, in int) (int, error) { return in + 1, nil }
		if !validKey {
			msg := panicMessage(func() { command.New(key, run, command.WithRegistry(r)) })
			assert.Contains(t, msg, "command: New: key")
			assert.ErrorIs(t, r.Configure(key, command.Config{}), command.ErrInvalidKey)
			assert.ErrorIs(t, r.ConfigurePool(key, command.PoolConfig{}), command.ErrInvalidKey)
			return
		}
		require.NoError(t, r.Configure(key, command.Config{}))
		// A pool key ending in "panic" makes the key function panic.
		panics := strings.HasSuffix(poolKey, "panic")
		poolKeyOf := func(int) string {
			if panics {
				panic("no pool key for " + poolKey)
			}
			return poolKey
		}
		c := command.New(key, run, command.WithRegistry(r)).WithPoolKey(poolKeyOf).WithFallback(func(context.Context, int, error) (int, error) { return -1, nil })
		v, err := c.Execute(context.Background(), 1)
		require.NoError(t, err)
		if !panics && poolKey != "" && utf8.ValidString(poolKey) {
			assert.Equal(t, 2, v, "run's value")
			assert.Equal(t, 1, r.PoolCount())
			return
		}
		assert.Equal(t, -1, v, "the fallback's value")
		assert.Equal(t, 0, r.PoolCount(), "no pool for an invalid pool key")
		_, err = command.New(key, run, command.WithRegistry(r)).WithPoolKey(poolKeyOf).
			Execute(context.Background(), 1)
		var kerr *command.KeyFuncError
		require.ErrorAs(t, err, &kerr)
		var perr *command.PanicError
		if panics {
			assert.ErrorAs(t, err, &perr, "a panicking key function's error holds the panic")
		} else {
			assert.ErrorIs(t, err, command.ErrInvalidKey)
		}
	})
}
