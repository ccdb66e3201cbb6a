package command

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/breaker"
	"github.com/rxhystrix/rxhystrix/observable"
)

// leaveOnStart is a hook that makes the subscriber of the next execution
// leave while the execution is being set up: at its Start, before the
// breaker and the permits are asked, it cancels the subscriber's context
// and waits until the subscription has ended.
type leaveOnStart struct {
	NoOpHook
	armed  atomic.Bool
	cancel context.CancelFunc
	left   chan struct{}
}

func (l *leaveOnStart) Start(string) {
	if l.armed.CompareAndSwap(true, false) {
		l.cancel()
		<-l.left
	}
}

// leave executes c through its Observable with a subscriber that leaves
// during the setup, and returns what the subscriber got.
func (l *leaveOnStart) leave(t *testing.T, c *Command[int, string]) error {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	l.cancel, l.left = cancel, make(chan struct{})
	l.armed.Store(true)
	o := c.ToObservable(ctx, 1).DoOnUnsubscribe(func() { close(l.left) })
	_, err := o.First(ctx)
	require.False(t, l.armed.Load(), "the hook did not run")
	return err
}

// A subscriber that leaves while the pipeline takes the breaker's
// permission, the execution permit or the fallback permit ends the
// execution it began: one CANCELLED Completion, every permit back, and a
// half-open breaker whose trial it was opens again. The pipeline used to
// take them and then, finding its subscription ended, never install the
// stages that give them back.
func TestSubscriberLeavingDuringSetupEndsTheExecution(t *testing.T) {
	t.Run("execution permit", func(t *testing.T) {
		h := newHarness(t)
		l := &leaveOnStart{}
		h.reg.AddKeyHook("setup", l)
		c := New("setup", succeedRun, WithRegistry(h.reg),
			WithConfig(Config{Isolation: SemaphoreIsolation, MaxConcurrentRequests: 1}))
		assert.ErrorIs(t, l.leave(t, c), context.Canceled)
		assert.Equal(t, evs("CANCELLED"), eventNames(h.completion().Events))
		h.assertReleased("setup")

		v, err := c.ToObservable(context.Background(), 2).First(context.Background())
		require.NoError(t, err, "the only permit was given back")
		assert.Equal(t, userName(2), v)
		assert.Equal(t, evs("SUCCESS"), eventNames(h.completion().Events))
		h.noMoreCompletions()
	})

	t.Run("fallback permit", func(t *testing.T) {
		h := newHarness(t)
		l := &leaveOnStart{}
		h.reg.AddKeyHook("setup", l)
		c := New("setup", succeedRun, WithRegistry(h.reg), WithConfig(Config{FallbackMaxConcurrentRequests: 1, Breaker: breaker.Config{ForceOpen: true}})).WithFallback(fallbackName)
		assert.ErrorIs(t, l.leave(t, c), context.Canceled)
		h.completion()
		h.assertReleased("setup")

		v, err := c.ToObservable(context.Background(), 2).First(context.Background())
		require.NoError(t, err, "the only fallback permit was given back")
		assert.Equal(t, "anonymous", v)
		assert.Equal(t, evs("SHORT_CIRCUITED", "FALLBACK_SUCCESS"), eventNames(h.completion().Events))
		h.noMoreCompletions()
	})

	t.Run("half-open trial", func(t *testing.T) {
		h := newHarness(t)
		l := &leaveOnStart{}
		h.reg.AddKeyHook("setup", l)
		fail := New("setup", failRun, WithRegistry(h.reg),
			WithConfig(Config{Isolation: SemaphoreIsolation, Breaker: breaker.Config{RequestVolumeThreshold: 2}}))
		h.openBreaker(func() { _, _ = fail.Execute(context.Background(), 1) }, 2, "setup")
		h.clock.Advance(h.reg.Breaker("setup").Config().SleepWindow + time.Millisecond)

		pass := New("setup", succeedRun, WithRegistry(h.reg))
		assert.ErrorIs(t, l.leave(t, pass), context.Canceled)
		assert.Equal(t, evs("CANCELLED"), eventNames(h.completion().Events))
		h.assertReleased("setup")
		assert.Equal(t, breaker.Open, h.reg.Breaker("setup").State(),
			"the breaker is not left half-open with no trial in flight")
	})
}

// An ObservableCommand's subscriber that leaves during the setup ends
// the execution too.
func TestObservableSubscriberLeavingDuringSetupEndsTheExecution(t *testing.T) {
	h := newHarness(t)
	l := &leaveOnStart{}
	h.reg.AddKeyHook("setup", l)
	c := NewObservable("setup", func(ctx context.Context, n int) observable.Observable[int] {
		return observable.Just(n)
	}, WithRegistry(h.reg), WithConfig(Config{MaxConcurrentRequests: 1}))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	l.cancel, l.left = cancel, make(chan struct{})
	l.armed.Store(true)
	_, err := c.ToObservable(ctx, 1).DoOnUnsubscribe(func() { close(l.left) }).First(ctx)
	assert.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, evs("CANCELLED"), eventNames(h.completion().Events))
	h.assertReleased("setup")

	vs, err := c.Execute(context.Background(), 2)
	require.NoError(t, err, "the only permit was given back")
	assert.Equal(t, []int{2}, vs)
}
