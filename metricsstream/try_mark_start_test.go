package metricsstream

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The concurrent execution count doubles as a semaphore: at most limit
// starts succeed, a refused start leaves no trace, and each completion
// gives its permit back.
func TestTryMarkStartAtAdmitsUpToTheLimit(t *testing.T) {
	m, mc := newTestMetrics(t, Config{})
	var started []int64
	for range 3 {
		n, ok := m.TryMarkStartAt(mc.Now().UnixNano(), 2)
		if ok {
			started = append(started, n)
		}
	}
	require.Equal(t, []int64{1, 2}, started)
	assert.Equal(t, int64(2), m.ConcurrentExecutions())

	c := successCompletion(started[1], time.Time{}, time.Millisecond)
	m.MarkCompletion(&c)
	assert.Equal(t, int64(1), m.ConcurrentExecutions())
	n, ok := m.TryMarkStartAt(mc.Now().UnixNano(), 2)
	assert.True(t, ok)
	assert.Equal(t, int64(2), n)

	mc.Advance(time.Second)
	assert.Equal(t, int64(2), m.RollingMaxConcurrentExecutions(), "a refused start is not counted")
}

func TestTryMarkStartAtHoldsUnderContention(t *testing.T) {
	m, mc := newTestMetrics(t, Config{})
	const limit = 3
	var running, most atomic.Int64
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for range 500 {
				n, ok := m.TryMarkStartAt(mc.Now().UnixNano(), limit)
				if !ok {
					continue
				}
				r := running.Add(1)
				storeMax(&most, r)
				running.Add(-1)
				c := successCompletion(n, mc.Now(), time.Millisecond)
				m.MarkCompletion(&c)
			}
		})
	}
	wg.Wait()
	assert.LessOrEqual(t, most.Load(), int64(limit))
	assert.Zero(t, m.ConcurrentExecutions())
}
