package metricsstream

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func newTestPool(t *testing.T) (*PoolMetrics, *Registry) {
	t.Helper()
	r := NewRegistry(newManual())
	return r.Pool("pool", Config{}), r
}

func TestPoolMetricsCounts(t *testing.T) {
	p, r := newTestPool(t)
	mc := r.clock.(interface{ Advance(time.Duration) })
	assert.Equal(t, int64(1), p.MarkStart())
	assert.Equal(t, int64(2), p.MarkStart())
	assert.Equal(t, int64(3), p.MarkStart())
	p.MarkDone()
	p.MarkRejected()
	p.MarkRejected()
	p.SetQueueSize(4)
	assert.Equal(t, int64(2), p.ActiveCount())
	assert.Equal(t, int64(4), p.QueueSize())
	assert.Equal(t, int64(3), p.LargestActiveCount())
	assert.Zero(t, p.RollingCount(PoolExecuted), "the bucket in progress is not counted")
	assert.Zero(t, p.CumulativeCount(PoolRejection))
	assert.Zero(t, p.RollingMaxActive())

	mc.Advance(time.Second)
	assert.Equal(t, int64(1), p.RollingCount(PoolExecuted))
	assert.Equal(t, int64(2), p.RollingCount(PoolRejection))
	assert.Equal(t, int64(3), p.RollingMaxActive())
	assert.Equal(t, int64(2), p.CumulativeCount(PoolRejection))
	assert.Zero(t, p.RollingCount(NumPoolEventTypes))
	assert.Zero(t, p.CumulativeCount(-1))

	p.MarkDone()
	p.MarkDone()
	mc.Advance(10 * time.Second)
	assert.Equal(t, int64(2), p.RollingCount(PoolExecuted), "the first bucket aged out")
	assert.Zero(t, p.RollingCount(PoolRejection))
	assert.Zero(t, p.RollingMaxActive(), "the starts aged out; finishing does not raise the max")
	assert.Equal(t, int64(3), p.CumulativeCount(PoolExecuted))
	assert.Equal(t, int64(0), p.ActiveCount())
	assert.Equal(t, int64(3), p.LargestActiveCount())
}

type fixedPoolStatus PoolStatus

func (s fixedPoolStatus) PoolStatus() PoolStatus { return PoolStatus(s) }

func TestPoolSnapshot(t *testing.T) {
	p, r := newTestPool(t)
	mc := r.clock.(interface{ Advance(time.Duration) })
	s := p.Snapshot()
	assert.False(t, s.HasStatus)
	assert.Equal(t, "pool", s.Key)

	st := PoolStatus{CoreSize: 10, MaximumSize: 10, PoolSize: 3, LargestPoolSize: 4, QueueSizeRejectionThreshold: 5}
	p.SetStatusProvider(fixedPoolStatus(st))
	p.MarkStart()
	p.MarkStart()
	p.MarkDone()
	p.MarkRejected()
	p.SetQueueSize(2)
	mc.Advance(time.Second)
	p.MarkStart() // in progress: not in the rolling values

	s = p.Snapshot()
	assert.True(t, s.HasStatus)
	assert.Equal(t, st, s.Status)
	assert.Equal(t, t0.Add(time.Second), s.Time)
	assert.Equal(t, int64(2), s.ActiveCount)
	assert.Equal(t, int64(2), s.QueueSize)
	assert.Equal(t, int64(2), s.LargestActiveCount)
	assert.Equal(t, int64(1), s.CompletedTaskCount)
	assert.Equal(t, int64(5), s.TaskCount)
	assert.Equal(t, [NumPoolEventTypes]int64{1, 1}, s.Rolling)
	assert.Equal(t, [NumPoolEventTypes]int64{1, 1}, s.Cumulative)
	assert.Equal(t, int64(2), s.RollingMaxActive)
	assert.Equal(t, 10*time.Second, s.Config.RollingWindow)

	p.SetStatusProvider(nil)
	_, ok := p.Status()
	assert.False(t, ok)
}

// A pool that counts its active commands itself: the metrics report its
// count, take the rolling maximum and the largest count from the counts
// it gives at each start, and count executions without a count of their
// own.
func TestPoolMetricsCountedByThePool(t *testing.T) {
	p, r := newTestPool(t)
	mc := r.clock.(interface{ Advance(time.Duration) })
	var running int64
	p.CountActiveWith(func() int64 { return running })
	now := r.clock.Now().UnixNano()
	running = 1
	assert.Equal(t, int64(1), p.MarkStartedAt(now, running))
	running = 2
	p.MarkStartedAt(now, running)
	assert.Equal(t, int64(2), p.ActiveCount(), "the pool's count")
	running = 1
	p.MarkExecutedAt(now)
	assert.Equal(t, int64(1), p.ActiveCount())
	assert.Equal(t, int64(2), p.LargestActiveCount())
	s := p.Snapshot()
	assert.Equal(t, int64(1), s.ActiveCount)
	assert.Equal(t, int64(2), s.TaskCount, "one executed, one active")

	mc.Advance(time.Second)
	assert.Equal(t, int64(1), p.RollingCount(PoolExecuted))
	assert.Equal(t, int64(2), p.RollingMaxActive())
	running = 0
	assert.Zero(t, p.ActiveCount())

	p.CountActiveWith(nil)
	p.MarkStart()
	assert.Equal(t, int64(1), p.ActiveCount(), "back to the metrics' own count")
}
