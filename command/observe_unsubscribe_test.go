package command

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/rxhystrix/rxhystrix/observable"
)

type ignore[T any] struct{}

func (ignore[T]) OnNext(T)      {}
func (ignore[T]) OnError(error) {}
func (ignore[T]) OnCompleted()  {}

// When the only subscriber of an Observe result unsubscribes before the
// result, the execution is cancelled at once, as Hystrix's observe does:
// CANCELLED, the execution permit back, run's context cancelled. It used
// to run on, holding its permit, and record SUCCESS when run returned.
func TestObserveUnsubscribedCancelsTheExecution(t *testing.T) {
	t.Run("pool", func(t *testing.T) {
		h := newHarness(t)
		g := newGate()
		defer g.release()
		c := New("observed", func(ctx context.Context, id int) (string, error) {
			return userName(id), g.wait(ctx, true)
		}, WithRegistry(h.reg), WithConfig(Config{Isolation: PoolIsolation}))
		hot := c.Observe(context.Background(), 1)
		runCtx := g.arrived(t)
		sub := hot.Subscribe(context.Background(), ignore[string]{})
		sub.Unsubscribe()
		assert.Zero(t, h.execPermits("observed"), "the permit came back when the subscriber left")
		recv(t, runCtx.Done(), "run's context to be cancelled")
		assert.Equal(t, evs("CANCELLED"), eventNames(h.completion().Events))
		h.noMoreCompletions()
		_, err := hot.First(context.Background())
		assert.ErrorIs(t, err, context.Canceled, "a later subscriber learns it was cancelled")
	})

	t.Run("semaphore", func(t *testing.T) {
		h := newHarness(t)
		runCtxs := make(chan context.Context, 1)
		c := NewObservable("observed", func(ctx context.Context, id int) observable.Observable[string] {
			return observable.Create(func(sctx context.Context, o observable.Observer[string]) {
				runCtxs <- sctx // emits nothing until it is cancelled
			})
		}, WithRegistry(h.reg), WithConfig(Config{Isolation: SemaphoreIsolation, Timeout: -1}))
		hot := c.Observe(context.Background(), 1)
		runCtx := recv(t, runCtxs, "the user's Observable to be subscribed")
		sub := hot.Subscribe(context.Background(), ignore[string]{})
		sub.Unsubscribe()
		assert.Zero(t, h.execPermits("observed"), "the permit came back when the subscriber left")
		recv(t, runCtx.Done(), "the user's Observable to be cancelled")
		assert.Equal(t, evs("CANCELLED"), eventNames(h.completion().Events))
	})

	t.Run("one of two subscribers", func(t *testing.T) {
		h := newHarness(t)
		g := newGate()
		defer g.release()
		c := New("observed", func(ctx context.Context, id int) (string, error) {
			return userName(id), g.wait(ctx, true)
		}, WithRegistry(h.reg))
		hot := c.Observe(context.Background(), 1)
		g.arrived(t)
		leaving := hot.Subscribe(context.Background(), ignore[string]{})
		staying := subscribeAll(context.Background(), hot)
		leaving.Unsubscribe()
		g.release()
		vs, err := staying.wait(t)
		assert.NoError(t, err)
		assert.Equal(t, []string{userName(1)}, vs)
		assert.Equal(t, evs("SUCCESS"), eventNames(h.completion().Events))
	})
}

// A collapsed request observed with Observe whose subscriber leaves before
// the batch starts leaves the batch: the batch serves only the others.
func TestCollapserObserveUnsubscribedLeavesTheBatch(t *testing.T) {
	r, mc := newManualRegistry(t)
	b := &batches{}
	c := NewCollapser("GetUser", b.getUsers, WithRegistry(r))
	ctx := WithRequestContext(context.Background())

	left := c.Observe(ctx, 1)
	stays := c.Observe(ctx, 2)
	left.Subscribe(ctx, ignore[string]{}).Unsubscribe()
	got := subscribeAll(ctx, stays)
	mc.Advance(DefaultCollapserDelay)
	vs, err := got.wait(t)
	assert.NoError(t, err)
	assert.Equal(t, []string{"user2"}, vs)
	assert.Equal(t, [][]int{{2}}, b.all())
	assert.Equal(t, []int{1}, collapsedCounts(RequestLogFrom(ctx)), "COLLAPSED counts only the request that stayed")
}

// Observe returns at once in either isolation, while run is still
// running; Hystrix's observe runs a semaphore-isolated command on the
// calling thread, and Observe used to, too.
func TestObserveNeverBlocksItsCaller(t *testing.T) {
	for _, iso := range bothIsolations {
		t.Run(iso.String(), func(t *testing.T) {
			h := newHarness(t)
			g := newGate()
			defer g.release()
			c := New("observed", func(ctx context.Context, id int) (string, error) {
				return userName(id), g.wait(ctx, false)
			}, WithRegistry(h.reg), WithConfig(Config{Isolation: iso, Timeout: -1}))
			observed := make(chan observable.Observable[string], 1)
			go func() { observed <- c.Observe(context.Background(), 1) }()
			hot := recv(t, observed, "Observe to return while run runs")
			g.arrived(t)
			g.release()
			v, err := hot.Last(context.Background())
			assert.NoError(t, err)
			assert.Equal(t, userName(1), v)
			assert.Equal(t, evs("SUCCESS"), eventNames(h.completion().Events))
		})
	}
}
