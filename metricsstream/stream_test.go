package metricsstream

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rxhystrix/rxhystrix/internal/clock"
	"github.com/rxhystrix/rxhystrix/observable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// collector gathers the values of a subscription.
type collector[T any] struct {
	mu     sync.Mutex
	values []T
}

func (c *collector[T]) add(v T) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.values = append(c.values, v)
}

func (c *collector[T]) get() []T {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]T(nil), c.values...)
}

func collect[T any](t *testing.T, o observable.Observable[T]) (*collector[T], observable.Subscription) {
	t.Helper()
	c := &collector[T]{}
	sub := o.SubscribeFunc(context.Background(), c.add, func(err error) { t.Errorf("unexpected error %v", err) }, nil)
	t.Cleanup(sub.Unsubscribe)
	return c, sub
}

func TestHealthStreamTicksOnlyWhileSubscribed(t *testing.T) {
	m, mc := newTestMetrics(t, Config{})
	recordN(m, 2, Success)
	mc.Advance(healthBucket)
	assert.Zero(t, mc.Pending(), "nobody subscribes: no timer")

	c, sub := collect(t, m.HealthStream())
	assert.Equal(t, []HealthCounts{{Total: 2}}, c.get(), "the current value at subscription")
	assert.Equal(t, 1, mc.Pending())

	record(m, Failure, FallbackSuccess)
	mc.Advance(healthBucket)
	record(m, Failure, FallbackSuccess)
	mc.Advance(healthBucket)
	assert.Equal(t, []HealthCounts{
		{Total: 2},
		{Total: 3, Errors: 1, ErrorPercentage: 33},
		{Total: 4, Errors: 2, ErrorPercentage: 50},
	}, c.get())

	sub.Unsubscribe()
	assert.Zero(t, mc.Pending(), "the last subscriber stopped the timer")
	mc.Advance(5 * healthBucket)
	assert.Len(t, c.get(), 3)
}

func TestStreamsShareOneTimerPerKind(t *testing.T) {
	m, mc := newTestMetrics(t, Config{})
	record(m, Success) // something for health to snapshot
	a, subA := collect(t, m.HealthStream())
	b, subB := collect(t, m.HealthStream())
	assert.Equal(t, 1, mc.Pending())
	_, subC := collect(t, m.RollingCountsStream())
	assert.Equal(t, 2, mc.Pending())

	mc.Advance(2 * healthBucket)
	assert.Len(t, a.get(), 3)
	assert.Len(t, b.get(), 3)

	subA.Unsubscribe()
	assert.Equal(t, 2, mc.Pending())
	mc.Advance(healthBucket)
	assert.Len(t, a.get(), 3)
	assert.Len(t, b.get(), 4)
	subB.Unsubscribe()
	subC.Unsubscribe()
	assert.Zero(t, mc.Pending())
	assert.Zero(t, m.subscribers())

	// Subscribing again starts again.
	_, sub := collect(t, m.HealthStream())
	assert.Equal(t, 1, mc.Pending())
	sub.Unsubscribe()
	assert.Zero(t, mc.Pending())
}

func TestStreamEndsWithItsContext(t *testing.T) {
	m, mc := newTestMetrics(t, Config{})
	ctx, cancel := context.WithCancel(context.Background())
	var n atomic.Int32
	m.MaxConcurrencyStream().SubscribeFunc(ctx, func(int64) { n.Add(1) }, nil, nil)
	require.Equal(t, 1, mc.Pending())
	cancel()
	// The subscription ends when the cancellation reaches it, on another
	// goroutine: then the timer stops, and nothing more is delivered.
	require.Eventually(t, func() bool { return mc.Pending() == 0 }, 5*time.Second, time.Millisecond)
	before := n.Load()
	mc.Advance(time.Minute)
	assert.Equal(t, before, n.Load())
}

func TestHealthStreamTicksAtBucketBoundaries(t *testing.T) {
	m, mc := newTestMetrics(t, Config{})
	mc.Advance(300 * time.Millisecond)
	c, _ := collect(t, m.HealthStream())
	record(m, Success)
	mc.Advance(199 * time.Millisecond)
	assert.Len(t, c.get(), 1)
	mc.Advance(time.Millisecond) // 500ms: the first bucket closes
	assert.Equal(t, []HealthCounts{{}, {Total: 1}}, c.get())
}

// The breaker resets the stream when it closes; its subscription goes on,
// ticking at the boundaries of the new buckets.
func TestHealthStreamAfterResetStream(t *testing.T) {
	m, mc := newTestMetrics(t, Config{})
	c, _ := collect(t, m.HealthStream())
	recordN(m, 3, Failure, FallbackMissing)
	mc.Advance(700 * time.Millisecond) // tick at 500ms
	require.Equal(t, []HealthCounts{{}, {Total: 3, Errors: 3, ErrorPercentage: 100}}, c.get())

	m.ResetStream()
	assert.Equal(t, 1, mc.Pending())
	record(m, Success)
	mc.Advance(499 * time.Millisecond) // the old boundary at 1s is gone
	assert.Len(t, c.get(), 2)
	mc.Advance(time.Millisecond) // 1.2s: the first new bucket closes
	assert.Equal(t, HealthCounts{Total: 1}, c.get()[2])

	// A new subscriber (Hystrix's breaker resubscribes) starts from the
	// reset counts.
	d, _ := collect(t, m.HealthStream())
	assert.Equal(t, []HealthCounts{{Total: 1}}, d.get())
}

func TestRollingAndCumulativeCountsStreams(t *testing.T) {
	m, mc := newTestMetrics(t, Config{})
	rolling, _ := collect(t, m.RollingCountsStream())
	cumulative, _ := collect(t, m.CumulativeCountsStream())
	maxConc, _ := collect(t, m.MaxConcurrencyStream())
	assert.Equal(t, 3, mc.Pending())

	m.MarkStart()
	m.MarkStart()
	recordN(m, 2, Success)
	mc.Advance(time.Second)
	mc.Advance(10 * time.Second)

	r := rolling.get()
	require.Len(t, r, 12)
	assert.Equal(t, int64(0), r[0][Success])
	assert.Equal(t, int64(2), r[1][Success])
	assert.Equal(t, int64(2), r[10][Success])
	assert.Equal(t, int64(0), r[11][Success], "aged out")

	cu := cumulative.get()
	require.Len(t, cu, 12)
	assert.Equal(t, int64(0), cu[0][Success])
	assert.Equal(t, int64(2), cu[11][Success], "never ages out")

	mx := maxConc.get()
	require.Len(t, mx, 12)
	assert.Equal(t, []int64{0, 2}, mx[:2])
	assert.Equal(t, int64(0), mx[11])
}

func TestLatencyStream(t *testing.T) {
	m, mc := newTestMetrics(t, Config{})
	c, _ := collect(t, m.LatencyStream())
	recordLatency(m, 2*time.Millisecond, 3*time.Millisecond)
	mc.Advance(9 * time.Second)
	assert.Len(t, c.get(), 1)
	mc.Advance(time.Second)
	v := c.get()
	require.Len(t, v, 2)
	assert.Equal(t, int64(0), v[0].Execution.Count())
	assert.Equal(t, int64(1), v[1].Execution.Count())
	assert.Equal(t, 2*time.Millisecond, v[1].Execution.Percentile(0))
	assert.Equal(t, 3*time.Millisecond, v[1].Total.Percentile(0))
}

func TestSubscriberMayUnsubscribeFromOnNext(t *testing.T) {
	m, mc := newTestMetrics(t, Config{})
	record(m, Success)
	var sub observable.Subscription
	var got atomic.Int32
	sub = m.HealthStream().SubscribeFunc(context.Background(), func(HealthCounts) {
		if got.Add(1) == 2 {
			sub.Unsubscribe()
		}
	}, nil, nil)
	mc.Advance(10 * healthBucket)
	assert.Equal(t, int32(2), got.Load())
	assert.Zero(t, mc.Pending())
}

func TestQueuedObserverDropsTheOldestWhenFull(t *testing.T) {
	var drops atomic.Int64
	var got []int
	q := &queuedObserver[int]{drops: &drops}
	q.o = funcObserver[int](func(v int) { got = append(got, v) })
	for i := range tickQueueLimit + 4 {
		q.push(i)
	}
	q.drain()
	assert.Equal(t, int64(4), drops.Load())
	require.Len(t, got, tickQueueLimit)
	assert.Equal(t, 4, got[0], "the oldest were dropped")
	assert.Equal(t, tickQueueLimit+3, got[len(got)-1])
}

// A busy subscriber does not hold back the others: values queue for it
// while another goroutine delivers to the rest.
func TestTickStreamDoesNotWaitForBusySubscriber(t *testing.T) {
	m, mc := newTestMetrics(t, Config{})
	record(m, Success)
	entered := make(chan struct{})
	release := make(chan struct{})
	var slow collector[HealthCounts]
	first := true
	m.HealthStream().SubscribeFunc(context.Background(), func(h HealthCounts) {
		if first {
			first = false // the value at subscription
		} else if len(slow.get()) == 1 {
			close(entered)
			<-release
		}
		slow.add(h)
	}, nil, nil)
	fast, _ := collect(t, m.HealthStream())

	// The first tick blocks in the slow subscriber, on another goroutine.
	done := make(chan struct{})
	go func() {
		defer close(done)
		mc.Advance(healthBucket)
	}()
	<-entered
	// More ticks, while the first one is stuck: queued for the slow one.
	s := m.streamSet().health
	s.mu.Lock()
	target := s.target
	s.mu.Unlock()
	for range tickQueueLimit + 2 {
		s.tick(target)
	}
	assert.Len(t, fast.get(), 2+tickQueueLimit+2, "the fast subscriber got every tick")
	close(release)
	<-done
	assert.Len(t, slow.get(), 2+tickQueueLimit, "the slow one lost the oldest two")
	assert.Equal(t, int64(2), m.DroppedNotifications())
}

type funcObserver[T any] func(T)

func (f funcObserver[T]) OnNext(v T)    { f(v) }
func (f funcObserver[T]) OnError(error) {}
func (f funcObserver[T]) OnCompleted()  {}

func TestCompletionsAreDeliveredOncePerExecution(t *testing.T) {
	m, _ := newTestMetrics(t, Config{})
	record(m, Success) // before anybody subscribes: not delivered

	type got struct {
		ch  chan Completion
		sub observable.Subscription
	}
	subscribe := func() got {
		ch := make(chan Completion, 100)
		sub := m.Completions().SubscribeFunc(context.Background(), func(c Completion) { ch <- c }, nil, nil)
		t.Cleanup(sub.Unsubscribe)
		return got{ch, sub}
	}
	a, b := subscribe(), subscribe()
	for i := range 10 {
		c := Completion{CommandKey: "cmd", ConcurrencyAtStart: int64(i + 1), Executed: true}
		c.Events.Add(Success, 1)
		m.MarkCompletion(&c)
	}
	for _, s := range []got{a, b} {
		for i := range 10 {
			c := <-s.ch
			assert.Equal(t, int64(i+1), c.ConcurrencyAtStart, "in order")
			assert.Equal(t, 1, c.Events.Count(Success))
		}
	}
	a.sub.Unsubscribe()
	record(m, Failure, FallbackSuccess)
	c := <-b.ch
	assert.Equal(t, 1, c.Events.Count(Failure))
	select {
	case c := <-a.ch:
		t.Fatalf("delivered after unsubscribe: %+v", c)
	default:
	}
	assert.Zero(t, m.DroppedNotifications())
}

// A subscriber that blocks takes one completion, fanoutBuffer more
// wait for it, and every later one is dropped and counted, exactly; the
// cumulative counts keep every completion.
func TestDroppedCompletionsCountsEveryCompletionNotDelivered(t *testing.T) {
	m, mc := newTestMetrics(t, Config{})
	entered := make(chan struct{})
	release := make(chan struct{})
	delivered := make(chan Completion, fanoutBuffer+1)
	first := true
	sub := m.Completions().SubscribeFunc(context.Background(), func(c Completion) {
		if first {
			first = false
			close(entered)
			<-release
		}
		delivered <- c
	}, nil, nil)
	defer sub.Unsubscribe()

	record(m, Success)
	<-entered // the subscriber holds the first completion; its buffer is empty
	const more = fanoutBuffer + 100
	recordN(m, more, Success)
	assert.Equal(t, uint64(100), m.DroppedCompletions(), "the buffer held fanoutBuffer of them")
	assert.Equal(t, int64(100), m.DroppedNotifications(), "completions are stream values too")

	close(release)
	for range 1 + fanoutBuffer {
		select {
		case <-delivered:
		case <-time.After(10 * time.Second):
			t.Fatal("a buffered completion was not delivered")
		}
	}
	assert.Equal(t, uint64(100), m.DroppedCompletions())
	mc.Advance(time.Second)
	require.Equal(t, int64(1+more), m.CumulativeCount(Success), "the exact total")
}

// On the real clock a subscription arms a real timer and Unsubscribe
// stops it; nothing is left running (goleak checks at the end).
func TestStreamsOnTheRealClock(t *testing.T) {
	m := NewRegistry(clock.Real).Command("real", Config{})
	record(m, Success)
	first := make(chan HealthCounts, 1)
	sub := m.HealthStream().SubscribeFunc(context.Background(), func(h HealthCounts) {
		select {
		case first <- h:
		default:
		}
	}, nil, nil)
	assert.Equal(t, HealthCounts{}, <-first, "delivered inside Subscribe")
	comp := m.Completions().SubscribeFunc(context.Background(), nil, nil, nil)
	assert.Equal(t, 2, m.subscribers())
	sub.Unsubscribe()
	comp.Unsubscribe()
	s := m.streamSet().health
	s.mu.Lock()
	defer s.mu.Unlock()
	assert.Nil(t, s.timer)
}

// MarkCompletion takes a zero End for "now" and does not retain c, so a
// caller may record one Completion value again and again. With a
// subscriber to Completions it used to write the first time into c.End,
// so every later recording of c counted at that first time: here in a
// bucket long gone from the window, so in no rolling or health count.
func TestReusedCompletionCountsAtEachRecording(t *testing.T) {
	m, mc := newTestMetrics(t, Config{})
	seen := make(chan Completion, 2)
	sub := m.Completions().SubscribeFunc(context.Background(), func(c Completion) { seen <- c }, nil, nil)
	defer sub.Unsubscribe()

	var c Completion
	c.Events.Add(Success, 1)
	m.MarkCompletion(&c)
	assert.True(t, c.End.IsZero(), "MarkCompletion changed the caller's Completion: End %v", c.End)
	mc.Advance(20 * time.Second)
	m.MarkCompletion(&c)
	mc.Advance(time.Second)
	assert.Equal(t, int64(1), m.RollingCount(Success), "the second recording counts at its own time")
	assert.Equal(t, HealthCounts{Total: 1}, m.HealthCounts())
	assert.Equal(t, int64(2), m.CumulativeCount(Success))

	first, second := <-seen, <-seen
	assert.True(t, first.End.Equal(t0), "a subscriber sees End filled in: %v", first.End)
	assert.True(t, second.End.Equal(t0.Add(20*time.Second)), "a subscriber sees End filled in: %v", second.End)
}
