package command

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/internal/clock"
	"github.com/rxhystrix/rxhystrix/metricsstream"
)

// blockingTask holds its worker until release is closed.
type blockingTask struct{ release chan struct{} }

func (t blockingTask) runTask(p *pool, _ int64) {
	<-t.release
	p.ran(unread)
}

// The queue size a pool reports is the size of its queue once the
// submitters are done, however their submits interleave: a submitter that
// recorded the size it saw after another had recorded a larger one left
// the dashboard showing a queue one short until the queue next changed.
func TestPoolReportsItsQueueSizeAfterConcurrentSubmits(t *testing.T) {
	const queued = 32
	mc := clock.NewManual(time.Unix(0, 0))
	metrics := metricsstream.NewRegistry(mc)
	for round := range 200 {
		pm := metrics.Pool("p", metricsstream.Config{})
		p := newPool("p", PoolConfig{CoreSize: 1, MaxQueueSize: queued, QueueSizeRejectionThreshold: queued}, false, mc, pm)
		release := make(chan struct{})
		var wg sync.WaitGroup
		for range queued + 1 {
			wg.Go(func() {
				assert.Equal(t, submitAccepted, p.submit(blockingTask{release}, time.Now().UnixNano()), "a submit within CoreSize and the queue")
			})
		}
		wg.Wait()
		running, waiting := p.size()
		require.Equal(t, 1, running)
		require.Equal(t, queued, waiting)
		require.Equal(t, int64(queued), pm.QueueSize(), "round %d", round)
		close(release)
		require.Eventually(t, p.idle, 10*time.Second, time.Millisecond)
		assert.Equal(t, int64(0), pm.QueueSize())
	}
}

// doneTask frees its slot at once and says it ran.
type doneTask struct{ done chan struct{} }

func (t doneTask) runTask(p *pool, _ int64) {
	p.ran(unread)
	close(t.done)
}

// A task queued just as the last worker leaves still runs: the worker
// freed its slot and found the queue empty, so the submitter that then
// queues its task must start it itself. Submitters racing one worker of
// a one-slot pool meet that moment many times over.
func TestPoolRunsATaskQueuedAsTheLastWorkerLeaves(t *testing.T) {
	const submitters, each = 8, 10000
	mc := clock.NewManual(time.Unix(0, 0))
	pm := metricsstream.NewRegistry(mc).Pool("p", metricsstream.Config{})
	p := newPool("p", PoolConfig{CoreSize: 1, MaxQueueSize: submitters, QueueSizeRejectionThreshold: submitters}, false, mc, pm)
	var wg sync.WaitGroup
	for range submitters {
		wg.Go(func() {
			for i := range each {
				task := doneTask{make(chan struct{})}
				if !assert.Equal(t, submitAccepted, p.submit(task, unread), "the queue holds every submitter") {
					return
				}
				select {
				case <-task.done:
				case <-time.After(stuckAfter):
					t.Errorf("task %d was accepted and never ran", i)
					return
				}
			}
		})
	}
	wg.Wait()
	require.Eventually(t, p.idle, stuckAfter, time.Millisecond)
}
