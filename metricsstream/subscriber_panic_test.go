package metricsstream

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/rxhystrix/rxhystrix/observable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// panicky is an observer that panics on every value and keeps the error
// that ends its subscription.
type panicky[T any] struct {
	values int
	err    chan error
}

func newPanicky[T any]() *panicky[T] { return &panicky[T]{err: make(chan error, 1)} }

func (p *panicky[T]) OnNext(T) {
	p.values++
	panic("subscriber bug")
}
func (p *panicky[T]) OnError(err error) { p.err <- err }
func (p *panicky[T]) OnCompleted()      {}

// ended waits for the subscription of p to end, and returns its error.
func (p *panicky[T]) ended(t *testing.T, sub observable.Subscription) error {
	t.Helper()
	select {
	case <-sub.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the panicking subscriber's subscription did not end")
	}
	return <-p.err
}

// assertPanicError checks that err is the error of a subscriber that
// panicked with "subscriber bug".
func assertPanicError(t *testing.T, err error) {
	t.Helper()
	var p *SubscriberPanicError
	require.ErrorAs(t, err, &p)
	assert.Equal(t, "subscriber bug", p.Value)
	assert.Contains(t, string(p.Stack), "OnNext", "the stack of the panic")
	assert.EqualError(t, err, "metricsstream: subscriber panicked: subscriber bug")
}

// A subscriber of a tick stream that panics, at a tick on the goroutine
// that fires the timer, is unsubscribed and counted; the other
// subscribers go on receiving every tick.
func TestPanickingTickSubscriberIsUnsubscribed(t *testing.T) {
	m, mc := newTestMetrics(t, Config{})
	record(m, Success)
	good, _ := collect(t, m.HealthStream())
	bad := newPanicky[HealthCounts]()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	first := true
	sub := m.HealthStream().Subscribe(ctx, observerFunc[HealthCounts]{
		next: func(h HealthCounts) {
			if first { // the value at subscription
				first = false
				return
			}
			bad.OnNext(h)
		},
		err: bad.OnError,
	})

	mc.Advance(healthBucket) // the first tick panics in bad
	assertPanicError(t, bad.ended(t, sub))
	assert.Equal(t, uint64(1), m.PanickedSubscribers())
	assert.Equal(t, 1, bad.values)
	assert.Equal(t, 1, m.subscribers(), "only the good subscriber is left")

	mc.Advance(2 * healthBucket)
	assert.Equal(t, []HealthCounts{{}, {Total: 1}, {Total: 1}, {Total: 1}}, good.get())
	assert.Equal(t, 1, bad.values, "nothing more for the subscriber that panicked")
	assert.Equal(t, uint64(1), m.PanickedSubscribers())
}

// A subscriber that panics on the value it receives at subscription,
// inside Subscribe, is unsubscribed at once; Subscribe returns.
func TestTickSubscriberPanickingAtSubscription(t *testing.T) {
	m, mc := newTestMetrics(t, Config{})
	record(m, Success)
	bad := newPanicky[EventTotals]()
	sub := m.RollingCountsStream().Subscribe(context.Background(), bad)
	assertPanicError(t, bad.ended(t, sub))
	assert.Equal(t, uint64(1), m.PanickedSubscribers())
	assert.Zero(t, m.subscribers())
	assert.Zero(t, mc.Pending(), "its timer stopped with the only subscriber")
}

// A Completions subscriber that panics on its first completion is
// unsubscribed, its goroutine ends, and the other subscriber receives
// every completion.
func TestPanickingCompletionsSubscriberIsUnsubscribed(t *testing.T) {
	m, _ := newTestMetrics(t, Config{})
	got := make(chan Completion, 10)
	good := m.Completions().SubscribeFunc(context.Background(), func(c Completion) { got <- c }, nil, nil)
	t.Cleanup(good.Unsubscribe)
	bad := newPanicky[Completion]()
	sub := m.Completions().Subscribe(context.Background(), bad)

	record(m, Success)
	assertPanicError(t, bad.ended(t, sub))
	assert.Equal(t, uint64(1), m.PanickedSubscribers())
	require.Eventually(t, func() bool { return m.subscribers() == 1 }, 10*time.Second, time.Millisecond,
		"the panicking subscriber leaves the stream")

	record(m, Failure, FallbackSuccess)
	record(m, Timeout, FallbackSuccess)
	for _, want := range []EventType{Success, Failure, Timeout} {
		c := <-got
		assert.Equal(t, 1, c.Events.Count(want))
	}
	assert.Equal(t, 1, bad.values)
	assert.Equal(t, uint64(1), m.PanickedSubscribers())
}

// A panic whose value is an error is unwrapped to it.
func TestSubscriberPanicErrorUnwrapsAnError(t *testing.T) {
	boom := errors.New("boom")
	err := error(&SubscriberPanicError{Value: boom})
	assert.ErrorIs(t, err, boom)
	assert.NoError(t, errors.Unwrap(&SubscriberPanicError{Value: "text"}))
}

// observerFunc is an observer made of functions.
type observerFunc[T any] struct {
	next func(T)
	err  func(error)
}

func (o observerFunc[T]) OnNext(v T)        { o.next(v) }
func (o observerFunc[T]) OnError(err error) { o.err(err) }
func (o observerFunc[T]) OnCompleted()      {}
