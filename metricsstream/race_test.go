package metricsstream

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Recorders, readers, subscribers and the clock all move at once; at the
// end nothing recorded is lost. Run with -race.
func TestConcurrentRecordingLosesNothing(t *testing.T) {
	m, mc := newTestMetrics(t, Config{
		SlowCallDuration:  5 * time.Millisecond,
		PercentileWindow:  6 * time.Second,
		PercentileBuckets: 6,
	})
	const recorders, perRecorder = 8, 2000

	var delivered atomic.Int64
	sub := m.Completions().SubscribeFunc(context.Background(), func(Completion) { delivered.Add(1) }, nil, nil)

	stop := make(chan struct{})
	var background sync.WaitGroup
	background.Go(func() { // the clock, 2s in 10ms steps
		for range 200 {
			mc.Advance(10 * time.Millisecond)
		}
	})
	background.Go(func() { // readers and short-lived subscribers
		for {
			select {
			case <-stop:
				return
			default:
			}
			s := m.Snapshot()
			assert.GreaterOrEqual(t, s.Health.Total, int64(0))
			h := m.HealthStream().SubscribeFunc(context.Background(), nil, nil, nil)
			l := m.LatencyStream().SubscribeFunc(context.Background(), nil, nil, nil)
			h.Unsubscribe()
			l.Unsubscribe()
		}
	})

	var wg sync.WaitGroup
	for i := range recorders {
		wg.Go(func() {
			for j := range perRecorder {
				c := Completion{ConcurrencyAtStart: m.MarkStart(), Executed: true}
				c.ExecutionLatency = time.Duration(j%10) * time.Millisecond
				c.TotalLatency = c.ExecutionLatency + time.Millisecond
				if (i+j)%4 == 0 {
					c.Events.Add(Failure, 1)
					c.Events.Add(FallbackMissing, 1)
				} else {
					c.Events.Add(Emit, 2)
					c.Events.Add(Success, 1)
				}
				m.MarkCompletion(&c)
			}
		})
	}
	wg.Wait()
	close(stop)
	background.Wait()

	const total = recorders * perRecorder
	mc.Advance(time.Second) // close the last bucket
	assert.Equal(t, int64(0), m.ConcurrentExecutions())
	assert.LessOrEqual(t, m.RollingMaxConcurrentExecutions(), int64(recorders))
	assert.GreaterOrEqual(t, m.RollingMaxConcurrentExecutions(), int64(1))

	s := m.Snapshot()
	assert.Equal(t, int64(total/4), s.Rolling[Failure])
	assert.Equal(t, int64(total*3/4), s.Rolling[Success])
	assert.Equal(t, int64(total*3/2), s.Rolling[Emit])
	assert.Equal(t, int64(total/4), s.Rolling[ExceptionThrown])
	assert.Equal(t, s.Rolling, s.Cumulative)
	assert.Equal(t, HealthCounts{Total: total, Errors: total / 4, ErrorPercentage: 25, Slow: total / 2}, s.Health)
	assert.Equal(t, int64(total), s.Latency.Execution.Count())
	assert.Equal(t, 9007*time.Microsecond, s.Latency.Execution.Max(), "9000µs is kept to 8µs")

	require.Eventually(t, func() bool { return delivered.Load()+m.DroppedNotifications() == total },
		5*time.Second, time.Millisecond)
	sub.Unsubscribe()
}
