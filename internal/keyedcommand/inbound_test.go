package keyedcommand

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestInboundWaitsForARunningHandler(t *testing.T) {
	var c Inbound
	require.True(t, c.Start())
	release := make(chan struct{})
	wrote := 0
	go func() { // the handler, on a pool's worker
		defer c.End()
		<-release
		wrote = 1
	}()
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
	assert.False(t, c.Start(), "no handler starts once the caller has answered")
}

func TestInboundNeverStartsAfterWait(t *testing.T) {
	var c Inbound
	c.Wait() // returns at once: nothing runs
	assert.False(t, c.Start())
}

func TestInboundWaitAfterEnd(t *testing.T) {
	var c Inbound
	assert.True(t, c.Start())
	c.End()
	c.Wait() // returns at once
	assert.False(t, c.Start())
}
