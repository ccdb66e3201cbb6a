package turbine

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/clock"
)

// scriptedDiscovery hands each of its asks to the test, which answers it.
type scriptedDiscovery chan discoveryAsk

type discoveryAsk struct {
	ctx    context.Context
	answer chan<- discoveryAnswer
}

type discoveryAnswer struct {
	urls []string
	err  error
}

func (d scriptedDiscovery) Instances(ctx context.Context) ([]string, error) {
	answer := make(chan discoveryAnswer, 1)
	d <- discoveryAsk{ctx, answer}
	select {
	case a := <-answer:
		return a.urls, a.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// asked waits for the discovery's next ask.
func (d scriptedDiscovery) asked(t *testing.T) discoveryAsk {
	t.Helper()
	select {
	case ask := <-d:
		return ask
	case <-time.After(failAfter):
		t.Fatal("the discovery was not asked")
		return discoveryAsk{}
	}
}

// answered answers the discovery's next ask, and waits until the
// Aggregator has taken the answer in: its status has changed.
func (d scriptedDiscovery) answered(t *testing.T, a *Aggregator, urls []string, err error) DiscoveryStatus {
	t.Helper()
	before, _ := a.Discovery()
	d.asked(t).answer <- discoveryAnswer{urls, err}
	deadline := time.Now().Add(failAfter)
	for {
		s, _ := a.Discovery()
		if s.Failures != before.Failures || !s.Found.Equal(before.Found) {
			return s
		}
		require.False(t, time.Now().After(deadline), "the answer was not taken in")
		runtime.Gosched()
	}
}

func newDiscoveredAggregator(t *testing.T, d Discovery, interval time.Duration, instances ...string) (*Aggregator, *clock.Manual) {
	t.Helper()
	mc := clock.NewManual(t0)
	a, err := New(instances, WithClock(mc), WithDiscovery(d, interval))
	require.NoError(t, err)
	t.Cleanup(func() { a.Close() })
	return a, mc
}

// firstFailure waits until a has counted its discovery's first failure,
// and returns its status then.
func firstFailure(t *testing.T, a *Aggregator) DiscoveryStatus {
	t.Helper()
	deadline := time.Now().Add(failAfter)
	for {
		s, _ := a.Discovery()
		if s.Failures > 0 {
			return s
		}
		require.False(t, time.Now().After(deadline), "the failure was not counted")
		runtime.Gosched()
	}
}

func urlsOf(ins []Instance) []string {
	var urls []string
	for _, in := range ins {
		urls = append(urls, in.URL)
	}
	return urls
}

// blockUntil waits until n timers are armed on mc.
func blockUntil(t *testing.T, mc *clock.Manual, n int, what string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), failAfter)
	defer cancel()
	require.NoError(t, mc.BlockUntil(ctx, n), what)
}

func TestDiscoveryIsAskedAtOnceAndThenEveryInterval(t *testing.T) {
	d := make(scriptedDiscovery)
	a, mc := newDiscoveredAggregator(t, d, 30*time.Second, "http://127.0.0.1:1/hystrix.stream")
	s, ok := a.Discovery()
	require.True(t, ok)
	assert.Equal(t, DiscoveryStatus{Interval: 30 * time.Second}, s, "nothing found yet")
	assert.Equal(t, []string{"http://127.0.0.1:1/hystrix.stream"}, urlsOf(a.Instances()), "New's instances until the first answer")

	s = d.answered(t, a, []string{"http://127.0.0.1:3/hystrix.stream", "http://127.0.0.1:2/hystrix.stream"}, nil)
	assert.Equal(t, DiscoveryStatus{Interval: 30 * time.Second, Found: t0}, s)
	assert.Equal(t, []string{"http://127.0.0.1:2/hystrix.stream", "http://127.0.0.1:3/hystrix.stream"}, urlsOf(a.Instances()))

	// The instances' retry timers and the discovery's own.
	blockUntil(t, mc, 3, "the discovery's timer")
	mc.Advance(30*time.Second - time.Nanosecond)
	select {
	case <-d:
		t.Fatal("asked before the interval")
	default:
	}
	mc.Advance(time.Nanosecond)
	s = d.answered(t, a, []string{"http://127.0.0.1:3/hystrix.stream"}, nil)
	assert.Equal(t, t0.Add(30*time.Second), s.Found)
	assert.Equal(t, []string{"http://127.0.0.1:3/hystrix.stream"}, urlsOf(a.Instances()), "the instance gone is no longer read")
}

func TestDiscoveryThatFailsKeepsTheInstancesFoundBefore(t *testing.T) {
	d := make(scriptedDiscovery)
	a, mc := newDiscoveredAggregator(t, d, time.Minute)
	found := []string{"http://127.0.0.1:2/hystrix.stream"}
	d.answered(t, a, found, nil)

	refused := errors.New("the registry refused")
	for i, answer := range []discoveryAnswer{
		{err: refused},
		{urls: []string{"ftp://10.0.0.4/hystrix.stream"}},
		{urls: []string{"http://127.0.0.1:4/hystrix.stream", "http://127.0.0.1:4/hystrix.stream"}},
	} {
		blockUntil(t, mc, 2, "the discovery's timer and the instance's retry")
		mc.Advance(time.Minute)
		s := d.answered(t, a, answer.urls, answer.err)
		assert.Equal(t, int64(i+1), s.Failures)
		assert.Equal(t, t0, s.Found, "found only by the first")
		assert.Equal(t, found, urlsOf(a.Instances()), "answer %d changes nothing", i)
		if answer.err != nil {
			assert.ErrorIs(t, s.Err, refused)
		} else {
			assert.ErrorIs(t, s.Err, ErrBadInstance)
		}
	}

	blockUntil(t, mc, 2, "the discovery's timer and the instance's retry")
	mc.Advance(time.Minute)
	s := d.answered(t, a, nil, nil)
	assert.NoError(t, s.Err, "found again: no instance")
	assert.Equal(t, t0.Add(4*time.Minute), s.Found)
	assert.Empty(t, a.Instances())
}

func TestDiscoveryThatDoesNotAnswerWithinItsIntervalFails(t *testing.T) {
	d := make(scriptedDiscovery)
	a, mc := newDiscoveredAggregator(t, d, time.Minute)
	ask := d.asked(t)
	blockUntil(t, mc, 1, "the ask's deadline")
	mc.Advance(time.Minute)
	<-ask.ctx.Done()
	s := firstFailure(t, a)
	assert.ErrorIs(t, s.Err, ErrDiscoveryOverdue)
	assert.EqualError(t, s.Err, "turbine: the discovery gave no answer within its interval (1m0s)")

	blockUntil(t, mc, 1, "the discovery's timer")
	mc.Advance(time.Minute)
	d.answered(t, a, nil, nil) // asked again an interval later
}

func TestCloseEndsADiscoveryBeingAsked(t *testing.T) {
	d := make(scriptedDiscovery)
	mc := clock.NewManual(t0)
	a, err := New(nil, WithClock(mc), WithDiscovery(d, time.Minute))
	require.NoError(t, err)
	ask := d.asked(t)
	require.NoError(t, a.Close())
	assert.Error(t, ask.ctx.Err(), "the ask's context ends with Close")
	s, _ := a.Discovery()
	assert.Equal(t, DiscoveryStatus{Interval: time.Minute}, s, "the cancelled ask is not a failure")
}

func TestAggregatorWithoutDiscovery(t *testing.T) {
	a, _ := newAggregator(t)
	_, ok := a.Discovery()
	assert.False(t, ok)
}

func TestDiscoveredInstancesAreSummed(t *testing.T) {
	i1, i2 := newFakeInstance(t), newFakeInstance(t)
	d := make(scriptedDiscovery)
	a, mc := newDiscoveredAggregator(t, d, 5*time.Second)
	d.answered(t, a, []string{i1.url()}, nil)
	i1.send(t, commandObject("GetUser", 3, false))
	waitSum(t, a, mc, "the instance found is summed", func(s sum) bool { return num(s["HystrixCommand GetUser"]["rollingCountSuccess"]) == "3" })

	blockUntil(t, mc, 2, "the stream's idle timer and the discovery's")
	mc.Advance(5 * time.Second)
	d.answered(t, a, []string{i2.url()}, nil)
	i2.send(t, commandObject("GetUser", 4, false))
	waitSum(t, a, mc, "only the instance found now is summed", func(s sum) bool {
		return num(s["HystrixCommand GetUser"]["rollingCountSuccess"]) == "4" && num(s["HystrixCommand GetUser"]["reportingHosts"]) == "1"
	})
}

func TestWithDiscoveryPanicsOnBadArguments(t *testing.T) {
	d := DiscoveryFunc(func(context.Context) ([]string, error) { return nil, nil })
	assert.PanicsWithValue(t, "turbine: WithDiscovery with nil Discovery", func() { WithDiscovery(nil, time.Second) })
	assert.PanicsWithValue(t, "turbine: WithDiscovery: interval 0s is not positive", func() { WithDiscovery(d, 0) })
}
