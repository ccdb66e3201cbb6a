package hystrixprops

import (
	"context"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/command"
	"github.com/rxhystrix/rxhystrix/metricsstream"
)

// Configure makes a new key with the resolved Config, metrics windows
// included; on a key in use it changes the fields Hystrix's properties
// set, live, and leaves what was set at run time beside them.
func TestConfigurePutsThePropertiesInForce(t *testing.T) {
	r := command.NewRegistry()
	defer r.Close()
	code := command.Config{Isolation: command.SemaphoreIsolation, Timeout: 500 * time.Millisecond}
	p, err := Parse(strings.NewReader(`
hystrix.command.default.metrics.rollingStats.timeInMilliseconds=20000
hystrix.command.GetUser.circuitBreaker.errorThresholdPercentage=25
`))
	require.NoError(t, err)
	require.NoError(t, p.Configure(r, "GetUser", code))
	cfg, _ := r.Config("GetUser")
	assert.Equal(t, 20*time.Second, cfg.Metrics.RollingWindow)
	assert.Equal(t, 25, cfg.Breaker.ErrorThresholdPercentage)
	assert.Equal(t, 500*time.Millisecond, cfg.Timeout)
	assert.Equal(t, 25, r.Breaker("GetUser").Config().ErrorThresholdPercentage)

	// An operator injects faults; then the file changes.
	require.NoError(t, r.ConfigureFunc("GetUser", func(cfg *command.Config) {
		cfg.Faults = command.FaultConfig{Enabled: true, ErrorPercentage: 5}
	}))
	p, err = Parse(strings.NewReader(`
hystrix.command.default.metrics.rollingStats.timeInMilliseconds=5000
hystrix.command.GetUser.execution.isolation.thread.timeoutInMilliseconds=300
`))
	require.NoError(t, err)
	require.NoError(t, p.Configure(r, "GetUser", code))
	cfg, _ = r.Config("GetUser")
	assert.Equal(t, 300*time.Millisecond, cfg.Timeout)
	assert.Zero(t, cfg.Breaker.ErrorThresholdPercentage, "a property gone: the code's, else Hystrix's")
	assert.Equal(t, 50, r.Breaker("GetUser").Config().ErrorThresholdPercentage)
	assert.Equal(t, 5.0, cfg.Faults.ErrorPercentage, "the operator's faults stay")
	assert.Equal(t, 20*time.Second, cfg.Metrics.RollingWindow, "windows are read when the key is made")

	assert.Equal(t, 20*time.Second, r.Metrics().Command("GetUser", metricsstream.Config{}).Config().RollingWindow)
}

// ConfigurePool sizes a pool before it is made, and live.
func TestConfigurePoolSizesThePool(t *testing.T) {
	r := command.NewRegistry()
	defer r.Close()
	code := command.PoolConfig{MaxQueueSize: 10}
	p := mustFromMap(t, map[string]string{"hystrix.threadpool.Users.coreSize": "3"})
	require.NoError(t, p.ConfigurePool(r, "Users", code))
	getUser := command.New("GetUser", func(ctx context.Context, id int) (string, error) { return "Ada", nil },
		command.WithRegistry(r), command.WithConfig(command.Config{Pool: "Users"}))
	_, err := getUser.Execute(context.Background(), 1)
	require.NoError(t, err)
	status := func() metricsstream.PoolStatus {
		st, ok := r.Metrics().Pool("Users", metricsstream.Config{}).Status()
		require.True(t, ok)
		return st
	}
	assert.Equal(t, 3, status().CoreSize)
	assert.Equal(t, 10, status().MaxQueueSize)

	p = mustFromMap(t, map[string]string{"hystrix.threadpool.default.coreSize": "6", "hystrix.threadpool.default.queueSizeRejectionThreshold": "8"})
	require.NoError(t, p.ConfigurePool(r, "Users", code))
	assert.Equal(t, 6, status().CoreSize)
	assert.Equal(t, 8, status().QueueSizeRejectionThreshold)
}

// Configure on a key that a command makes meanwhile keeps the command's
// Config whole: ConfigureFunc gave the change the zero Config of a key
// not known yet, and the change must not set Hystrix's fields on it as on
// a known key's, which would put in force a Config without the code's
// Group (so another pool), Retry, Hedge, .... The window is short: the
// test runs the two at once many times, and stops at the first loss.
func TestConfigureRacingNewKeepsTheCodesConfig(t *testing.T) {
	p := mustFromMap(t, map[string]string{"hystrix.command.GetUser.circuitBreaker.errorThresholdPercentage": "25"})
	code := command.Config{Group: "Users", Retry: command.RetryConfig{MaxAttempts: 3}}
	resolved := p.Command("GetUser", code)
	var sink atomic.Int64
	for i := range 20000 {
		r := command.NewRegistry()
		var (
			wg    sync.WaitGroup
			ready atomic.Int32
		)
		together := func() {
			ready.Add(1)
			for ready.Load() < 2 {
				runtime.Gosched()
			}
		}
		wg.Add(2)
		go func() {
			defer wg.Done()
			together()
			n := int64(0)
			for j := range (i % 400) * 10 { // to meet New's at varied points
				n += int64(j)
			}
			sink.Add(n)
			assert.NoError(t, p.Configure(r, "GetUser", code))
		}()
		go func() {
			defer wg.Done()
			together()
			command.New("GetUser", succeed, command.WithRegistry(r), command.WithConfig(resolved))
		}()
		wg.Wait()
		cfg, _ := r.Config("GetUser")
		r.Close()
		require.Equal(t, "Users", cfg.Group, "iteration %d", i)
		require.Equal(t, 3, cfg.Retry.MaxAttempts, "iteration %d", i)
		require.Equal(t, 25, cfg.Breaker.ErrorThresholdPercentage, "iteration %d", i)
	}
}
