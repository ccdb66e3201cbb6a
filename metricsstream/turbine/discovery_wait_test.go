package turbine

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// waitingScripted is a scriptedDiscovery that says it waits for changes.
type waitingScripted struct {
	scriptedDiscovery
	maxWait time.Duration
}

func (d waitingScripted) MaxWait() time.Duration { return d.maxWait }

// A WaitingDiscovery that answered is asked again after
// WaitingDiscoveryGap, not after the interval; one that failed, after the
// interval.
func TestWaitingDiscoveryIsAskedAgainAtOnce(t *testing.T) {
	d := waitingScripted{make(scriptedDiscovery), 5 * time.Minute}
	a, mc := newDiscoveredAggregator(t, d, 30*time.Second)
	s, _ := a.Discovery()
	assert.Equal(t, DiscoveryStatus{Interval: 30 * time.Second, MaxWait: 5 * time.Minute}, s)
	d.answered(t, a, []string{"http://127.0.0.1:2/hystrix.stream"}, nil)

	blockUntil(t, mc, 2, "the discovery's timer and the instance's retry")
	mc.Advance(WaitingDiscoveryGap - time.Nanosecond)
	select {
	case <-d.scriptedDiscovery:
		t.Fatal("asked before the gap")
	default:
	}
	mc.Advance(time.Nanosecond)
	s = d.answered(t, a, []string{"http://127.0.0.1:2/hystrix.stream", "http://127.0.0.1:3/hystrix.stream"}, nil)
	assert.Equal(t, t0.Add(WaitingDiscoveryGap), s.Found)
	assert.Equal(t, []string{"http://127.0.0.1:2/hystrix.stream", "http://127.0.0.1:3/hystrix.stream"}, urlsOf(a.Instances()))

	blockUntil(t, mc, 3, "the discovery's timer and the instances' retries")
	mc.Advance(WaitingDiscoveryGap)
	s = d.answered(t, a, nil, errors.New("the registry refused"))
	assert.Equal(t, int64(1), s.Failures)

	blockUntil(t, mc, 3, "the discovery's timer and the instances' retries")
	mc.Advance(30*time.Second - time.Nanosecond)
	select {
	case <-d.scriptedDiscovery:
		t.Fatal("asked again before the interval, after a failure")
	default:
	}
	mc.Advance(time.Nanosecond)
	d.answered(t, a, nil, nil)
}

// A WaitingDiscovery's question is overdue after the interval and its
// MaxWait, not after the interval alone.
func TestWaitingDiscoveryIsOverdueAfterItsMaxWait(t *testing.T) {
	d := waitingScripted{make(scriptedDiscovery), 5 * time.Minute}
	a, mc := newDiscoveredAggregator(t, d, 30*time.Second)
	ask := d.asked(t)
	blockUntil(t, mc, 1, "the ask's deadline")
	mc.Advance(30 * time.Second)
	assert.NoError(t, ask.ctx.Err(), "still waiting for a change after the interval")
	mc.Advance(5*time.Minute - time.Nanosecond)
	assert.NoError(t, ask.ctx.Err())
	mc.Advance(time.Nanosecond)
	<-ask.ctx.Done()
	s := firstFailure(t, a)
	assert.EqualError(t, s.Err, "turbine: the discovery gave no answer within its interval (5m30s)")
}
