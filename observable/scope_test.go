package observable

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rxhystrix/rxhystrix/internal/clock"
	"github.com/rxhystrix/rxhystrix/internal/ctxend"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// holdContext is a source that hands its context out and never
// terminates.
func holdContext(got chan<- context.Context) Observable[int] {
	return Create(func(ctx context.Context, o Observer[int]) { got <- ctx })
}

func TestSubscriptionContextCarriesValues(t *testing.T) {
	type key struct{}
	got := make(chan context.Context, 1)
	sub := holdContext(got).Subscribe(context.WithValue(context.Background(), key{}, "v"), newRecorder[int]())
	defer sub.Unsubscribe()
	ctx := <-got
	assert.Equal(t, "v", ctx.Value(key{}))
	_, ok := ctx.Deadline()
	assert.False(t, ok)
	assert.NoError(t, ctx.Err())
}

func TestDerivedContextsFollowTheSubscription(t *testing.T) {
	got := make(chan context.Context, 1)
	sub := holdContext(got).Subscribe(context.Background(), newRecorder[int]())
	ctx := <-got
	derived, cancel := context.WithCancel(ctx)
	defer cancel()
	afterFunc := make(chan struct{})
	context.AfterFunc(ctx, func() { close(afterFunc) })
	stopped := context.AfterFunc(ctx, func() { t.Error("stopped AfterFunc ran") })
	require.True(t, stopped())

	sub.Unsubscribe()
	waitDone(t, derived.Done(), "derived context")
	assert.ErrorIs(t, derived.Err(), context.Canceled)
	assert.ErrorIs(t, ctx.Err(), context.Canceled)
	waitDone(t, afterFunc, "AfterFunc") // context.AfterFunc runs f on its own goroutine

	// Hooking into an ended subscription runs at once.
	late := make(chan struct{})
	context.AfterFunc(ctx, func() { close(late) })
	waitDone(t, late, "late AfterFunc")
	waitDone(t, ctx.Done(), "subscription context")
}

func TestSubscriptionContextEndsWithTheCallersContext(t *testing.T) {
	mc := clock.NewManual(epoch)
	parent, cancel := mc.WithTimeout(context.Background(), time.Second)
	defer cancel()
	got := make(chan context.Context, 1)
	sub := holdContext(got).Subscribe(parent, newRecorder[int]())
	ctx := <-got
	mc.Advance(time.Second)
	waitDone(t, sub.Done(), "subscription")
	assert.ErrorIs(t, ctx.Err(), context.DeadlineExceeded)
}

func TestNestedSubscriptionEndsWithTheOuterOne(t *testing.T) {
	inner := newProbe()
	innerResult := make(chan error, 1)
	outer := Create(func(ctx context.Context, o Observer[int]) {
		go func() {
			// A blocking call inside a source, given the source's ctx.
			_, err := Concat(inner.async(1), Never[int]()).Last(ctx)
			innerResult <- err
		}()
	})
	sub := outer.Subscribe(context.Background(), newRecorder[int]())
	waitDone(t, inner.subscribedSignal(), "inner subscription")
	sub.Unsubscribe()
	inner.requireStopped(t)
	assert.ErrorIs(t, <-innerResult, context.Canceled)
}

func TestChildScopeOfEndedParent(t *testing.T) {
	parent := newScope(context.Background())
	parent.cancel(context.DeadlineExceeded)
	child := newScope(parent)
	assert.False(t, child.live())
	assert.ErrorIs(t, child.Err(), context.DeadlineExceeded)
	waitDone(t, child.Done(), "child")
	var hooked hook
	hooked.target = funcEnder(func() { t.Error("hook on an ended scope ran") })
	assert.False(t, child.addHook(&hooked))
}

func TestScopeEndPropagatesToWatchedDescendants(t *testing.T) {
	root := newScope(context.Background())
	mid := newScope(root)
	leaf := newScope(mid)
	other := newScope(mid) // never watched: it sees the end by asking
	done := leaf.Done()
	root.cancel(context.Canceled)
	waitDone(t, done, "leaf")
	assert.False(t, other.live())
	assert.ErrorIs(t, other.Err(), context.Canceled)

	// A child that ends first leaves its parent's hooks.
	p := newScope(context.Background())
	c := newScope(p)
	_ = c.Done()
	c.cancel(context.Canceled)
	assert.Nil(t, firstHook(p))
}

func TestScopeRacesBetweenWatchingAndEnding(t *testing.T) {
	for range 200 {
		root := newScope(context.Background())
		var children []*scope
		for range 8 {
			children = append(children, newScope(newScope(root)))
		}
		var wg sync.WaitGroup
		for i, c := range children {
			wg.Go(func() { _ = c.Done() })
			if i%2 == 0 {
				wg.Go(func() { c.cancel(context.Canceled) })
			}
		}
		wg.Go(func() { root.cancel(context.DeadlineExceeded) })
		wg.Wait()
		for _, c := range children {
			waitDone(t, c.Done(), "child")
			assert.Error(t, c.Err())
		}
		assert.Nil(t, firstHook(root), "nothing is left hooked into an ended scope")
	}
}

// firstHook returns the first hook waiting on s, if any.
func firstHook(s *scope) *hook {
	w := s.w.Load()
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.hooks.head
}

// customContext is a context whose error is neither Canceled nor
// DeadlineExceeded.
type customContext struct {
	context.Context
	done chan struct{}
	err  error
}

var errShutdown = errors.New("shutting down")

func (c *customContext) Done() <-chan struct{} { return c.done }
func (c *customContext) Err() error {
	select {
	case <-c.done:
		return c.err
	default:
		return nil
	}
}

func TestSubscriptionEndsWithTheParentsOwnError(t *testing.T) {
	parent := &customContext{Context: context.Background(), done: make(chan struct{}), err: errShutdown}
	got := make(chan context.Context, 1)
	sub := holdContext(got).Subscribe(parent, newRecorder[int]())
	ctx := <-got
	close(parent.done)
	waitDone(t, sub.Done(), "subscription")
	assert.ErrorIs(t, ctx.Err(), errShutdown)

	child := newScope(ctx)
	assert.ErrorIs(t, child.Err(), errShutdown, "the reason reaches scopes below")
}

// endingContext is a context that has ended whose Done has not yet
// closed: what a scope sees of a parent between its end and the
// goroutine context.AfterFunc starts for it.
type endingContext struct {
	context.Context
	done chan struct{}
	err  atomic.Pointer[error]
}

func (c *endingContext) Done() <-chan struct{} { return c.done }
func (c *endingContext) Err() error {
	if err := c.err.Load(); err != nil {
		return *err
	}
	return nil
}

func TestLeftErrSeesTheOutermostParentBeforeItsEndArrives(t *testing.T) {
	parent := &endingContext{Context: context.Background(), done: make(chan struct{})}
	defer close(parent.done)
	root := newScope(parent)
	child := newScope(root)
	assert.NoError(t, child.leftErr(), "nothing has ended")
	parent.err.Store(&errShutdown)
	assert.NoError(t, root.Err(), "the end has not reached the scopes")
	assert.ErrorIs(t, child.leftErr(), errShutdown, "from a scope under a scope")
	assert.ErrorIs(t, root.leftErr(), errShutdown)
}

func TestScopeAfterFunc(t *testing.T) {
	s := newScope(context.Background())
	stop := s.AfterFunc(func() { t.Error("stopped") })
	assert.True(t, stop())
	assert.False(t, stop())
	ran := make(chan struct{})
	s.AfterFunc(func() { close(ran) })
	s.cancel(context.Canceled)
	waitDone(t, ran, "AfterFunc")

	late := make(chan struct{})
	stop = s.AfterFunc(func() { close(late) })
	waitDone(t, late, "AfterFunc on an ended scope")
	assert.False(t, stop())
}

// A subscription's context tells its end to one function without being
// watched (ctxend.Notifier): the function runs on the goroutine that ends
// it, once; a stopped one never runs; the slot holds one function at a
// time; an ended context, or one below another scope, takes none.
func TestSubscriptionContextNotifiesOneFunctionOfItsEnd(t *testing.T) {
	got := make(chan context.Context, 1)
	sub := holdContext(got).Subscribe(context.Background(), newRecorder[int]())
	n, ok := (<-got).(ctxend.Notifier)
	require.True(t, ok, "a subscription's context is a ctxend.Notifier")

	stopped := func() { t.Error("a stopped function ran") }
	other := func() {}
	require.True(t, n.NotifyEnd(&stopped))
	assert.False(t, n.NotifyEnd(&other), "a second function while the first is held")
	assert.False(t, n.StopNotify(&other), "a function it does not hold")
	require.True(t, n.StopNotify(&stopped))
	assert.False(t, n.StopNotify(&stopped), "stopped twice")

	calls := 0
	count := func() { calls++ }
	require.True(t, n.NotifyEnd(&count))
	sub.Unsubscribe()
	assert.Equal(t, 1, calls, "the function ran as the subscription was unsubscribed")
	assert.False(t, n.StopNotify(&count), "the function has run")
	assert.False(t, n.NotifyEnd(&other), "an ended context takes no function")
	sub.Unsubscribe()
	assert.Equal(t, 1, calls)

	// A scope below another learns of the up scope's end only once
	// watched: it takes no function.
	up := newScope(context.Background())
	below := newScope(up)
	assert.False(t, below.NotifyEnd(&other))
	up.cancel(context.Canceled)
}
