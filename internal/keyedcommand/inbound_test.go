package keyedcommand

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/breaker"
	"github.com/rxhystrix/rxhystrix/command"
)

func TestInboundWaitsForARunningHandler(t *testing.T) {
	var c Inbound
	release := make(chan struct{})
	wrote := 0
	served := make(chan error)
	go func() { // the run, on a pool's worker
		served <- c.Serve(func() {
			<-release
			wrote = 1
		})
	}()
	require.Eventually(t, func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.running
	}, 5*time.Second, time.Millisecond, "the handler runs")
	seen := make(chan int)
	go func() { // the server's goroutine
		c.Wait()
		seen <- wrote
	}()
	require.Eventually(t, func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.answered
	}, 5*time.Second, time.Millisecond, "the server's goroutine is in Wait")
	close(release)
	assert.Equal(t, 1, <-seen, "Wait returned after the handler")
	assert.NoError(t, <-served)
}

func TestInboundNeverServesAfterWait(t *testing.T) {
	var c Inbound
	c.Wait() // returns at once: nothing runs
	called := false
	assert.ErrorIs(t, c.Serve(func() { called = true }), context.Canceled)
	assert.False(t, called)
}

func TestInboundWaitAfterServe(t *testing.T) {
	var c Inbound
	called := false
	require.NoError(t, c.Serve(func() { called = true }))
	assert.True(t, called)
	c.Wait() // returns at once
	assert.ErrorIs(t, c.Serve(func() {}), context.Canceled)
}

func TestInboundRaisesTheHandlersPanicInWait(t *testing.T) {
	var c Inbound
	assert.EqualError(t, c.Serve(func() { panic("boom") }), "the handler panicked: boom")
	assert.PanicsWithValue(t, "boom", c.Wait)
}

func TestGuardConfig(t *testing.T) {
	cfg := GuardConfig(nil, false)("k")
	assert.Equal(t, command.SemaphoreIsolation, cfg.Isolation)
	assert.True(t, cfg.Breaker.Disabled)

	cfg = GuardConfig(nil, true)("k")
	assert.False(t, cfg.Breaker.Disabled)

	var keys []string
	own := func(key string) command.Config {
		keys = append(keys, key)
		return command.Config{Isolation: command.PoolIsolation, MaxConcurrentRequests: 7, Breaker: breaker.Config{Disabled: true}}
	}
	cfg = GuardConfig(own, true)("k")
	assert.Equal(t, []string{"k"}, keys)
	assert.Equal(t, command.PoolIsolation, cfg.Isolation, "an isolation named holds")
	assert.Equal(t, 7, cfg.MaxConcurrentRequests)
	assert.True(t, cfg.Breaker.Disabled, "a breaker the Config turns off stays off")
}
