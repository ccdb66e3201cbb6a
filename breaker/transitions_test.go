package breaker_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/breaker"
	"github.com/rxhystrix/rxhystrix/metricsstream"
)

func TestTransitions(t *testing.T) {
	b, h, clk := newBreaker(t, hystrixTestConfig, breaker.WithName("GetUser"))
	finish := collect(t, b)

	clk.Advance(time.Second)
	h.emit(health(10, 0, 0))
	trip := health(4, 4, 0)
	h.emit(trip) // +1s: CLOSED -> OPEN
	clk.Advance(afterSleepWindow)
	require.True(t, b.AttemptExecution()) // +1.25s: OPEN -> HALF_OPEN
	clk.Advance(10 * time.Millisecond)
	h.emit(health(0, 0, 0))
	b.MarkNonSuccess() // +1.26s: HALF_OPEN -> OPEN
	clk.Advance(afterSleepWindow)
	require.True(t, b.AttemptExecution()) // +1.51s: OPEN -> HALF_OPEN
	clk.Advance(10 * time.Millisecond)
	b.MarkSuccess() // +1.52s: HALF_OPEN -> CLOSED

	at := func(d time.Duration) time.Time { return epoch.Add(d) }
	want := []breaker.Transition{
		{Name: "GetUser", From: breaker.Closed, To: breaker.Open, Time: at(time.Second), Health: trip, SleepWindow: 200 * time.Millisecond},
		{Name: "GetUser", From: breaker.Open, To: breaker.HalfOpen, Time: at(1250 * time.Millisecond), Health: trip},
		{Name: "GetUser", From: breaker.HalfOpen, To: breaker.Open, Time: at(1260 * time.Millisecond), Health: health(0, 0, 0), SleepWindow: 200 * time.Millisecond},
		{Name: "GetUser", From: breaker.Open, To: breaker.HalfOpen, Time: at(1510 * time.Millisecond), Health: health(0, 0, 0)},
		{Name: "GetUser", From: breaker.HalfOpen, To: breaker.Closed, Time: at(1520 * time.Millisecond), Health: health(0, 0, 0)},
	}
	assert.Equal(t, want, finish())
	assert.Equal(t, "GetUser: CLOSED -> OPEN", want[0].String())
	assert.Equal(t, "OPEN -> HALF_OPEN", breaker.Transition{From: breaker.Open, To: breaker.HalfOpen}.String())
}

func TestTransitionsAfterCloseCarryFreshHealth(t *testing.T) {
	b, h, clk := tripped(t)
	finish := collect(t, b)
	clk.Advance(afterSleepWindow)
	require.True(t, b.AttemptExecution())
	b.MarkSuccess()
	trip := health(1, 9, 0)
	h.emit(trip)
	got := finish()
	require.Len(t, got, 3)
	assert.Equal(t, trip, got[2].Health)
	assert.Equal(t, breaker.Open, got[2].To)
}

func TestTransitionsIsHot(t *testing.T) {
	b, h, _ := newBreaker(t, hystrixTestConfig)
	h.emit(health(0, 4, 0)) // before anyone subscribed
	finish := collect(t, b)
	assert.Empty(t, finish(), "a subscriber sees only what happens after it subscribed")
}

func TestTransitionsSubscribersAreIndependent(t *testing.T) {
	b, h, clk := newBreaker(t, hystrixTestConfig)
	first := make(chan breaker.Transition, 8)
	sub1 := b.Transitions().SubscribeFunc(context.Background(), func(tr breaker.Transition) { first <- tr }, nil, nil)
	ctx, cancel := context.WithCancel(context.Background())
	second := make(chan breaker.Transition, 8)
	sub2 := b.Transitions().SubscribeFunc(ctx, func(tr breaker.Transition) { second <- tr }, nil, nil)

	h.emit(health(0, 4, 0))
	assert.Equal(t, breaker.Open, receive(t, first).To)
	assert.Equal(t, breaker.Open, receive(t, second).To)

	sub1.Unsubscribe()
	wait(t, sub1.Done())
	clk.Advance(afterSleepWindow)
	require.True(t, b.AttemptExecution())
	assert.Equal(t, breaker.HalfOpen, receive(t, second).To, "the other subscriber still receives")
	assert.Empty(t, first)

	cancel()
	wait(t, sub2.Done())
}

func TestTransitionsCompleteOnClose(t *testing.T) {
	b, _, _ := newBreaker(t, hystrixTestConfig)
	completed := make(chan struct{})
	sub := b.Transitions().SubscribeFunc(context.Background(), nil, nil, func() { close(completed) })
	b.Close()
	wait(t, completed)
	wait(t, sub.Done())

	late := b.Transitions().SubscribeFunc(context.Background(), nil, nil, nil)
	wait(t, late.Done()) // completes at once
}

func TestSlowTransitionsSubscriberNeverBlocksTheBreaker(t *testing.T) {
	b, h, clk := newBreaker(t, hystrixTestConfig, breaker.WithTransitionBuffer(1))
	release := make(chan struct{})
	received := make(chan breaker.Transition, 16)
	sub := b.Transitions().SubscribeFunc(context.Background(), func(tr breaker.Transition) {
		received <- tr
		<-release
	}, nil, nil)

	h.emit(health(0, 4, 0)) // delivered; the observer now blocks
	require.Equal(t, breaker.Open, receive(t, received).To)
	for range 3 { // each window: OPEN -> HALF_OPEN -> OPEN
		clk.Advance(afterSleepWindow)
		require.True(t, b.AttemptExecution())
		b.MarkNonSuccess()
	}
	assert.Equal(t, breaker.Open, b.State(), "the breaker went on without waiting")
	assert.Equal(t, uint64(5), b.DroppedTransitions(), "6 transitions, 1 buffered")

	close(release)
	assert.Equal(t, breaker.HalfOpen, receive(t, received).To, "the buffered one comes next")
	sub.Unsubscribe()
	wait(t, sub.Done())
}

func receive(t *testing.T, ch <-chan breaker.Transition) breaker.Transition {
	t.Helper()
	select {
	case tr := <-ch:
		return tr
	case <-time.After(10 * time.Second):
		t.Fatal("no transition delivered")
		return breaker.Transition{}
	}
}

func wait(t *testing.T, done <-chan struct{}) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("not done")
	}
}

// A Transitions subscriber that panics on its first transition is
// unsubscribed and counted; the other subscriber and the breaker go on.
func TestPanickingTransitionsSubscriberIsUnsubscribed(t *testing.T) {
	b, _, clk := tripped(t)
	finish := collect(t, b)
	var got int
	errs := make(chan error, 1)
	bad := b.Transitions().SubscribeFunc(context.Background(), func(breaker.Transition) {
		got++
		panic("subscriber bug")
	}, func(err error) { errs <- err }, nil)

	clk.Advance(afterSleepWindow)
	require.True(t, b.AttemptExecution()) // OPEN -> HALF_OPEN: bad panics
	select {
	case <-bad.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the panicking subscriber's subscription did not end")
	}
	var p *metricsstream.SubscriberPanicError
	require.ErrorAs(t, <-errs, &p)
	assert.Equal(t, "subscriber bug", p.Value)
	assert.Equal(t, uint64(1), b.PanickedSubscribers())

	b.MarkSuccess() // HALF_OPEN -> CLOSED
	assert.Equal(t, breaker.Closed, b.State())
	transitions := finish()
	require.Len(t, transitions, 2, "the other subscriber received every transition")
	assert.Equal(t, breaker.Closed, transitions[1].To)
	assert.Equal(t, 1, got, "nothing more for the subscriber that panicked")
	assert.Equal(t, uint64(1), b.PanickedSubscribers())
}
