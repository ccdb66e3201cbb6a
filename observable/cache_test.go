package observable

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCacheSubscribesOnceAndReplays(t *testing.T) {
	var subscriptions atomic.Int32
	o := Defer(func() Observable[int] {
		subscriptions.Add(1)
		return Just(1, 2, 3)
	}).Cache()
	assert.Zero(t, subscriptions.Load(), "lazy until the first subscription")
	for range 3 {
		got, err := o.ToSlice(context.Background())
		require.NoError(t, err)
		assert.Equal(t, []int{1, 2, 3}, got)
	}
	assert.Equal(t, int32(1), subscriptions.Load())
}

func TestCacheReplaysErrors(t *testing.T) {
	o := Concat(Just(1), Error[int](errBoom)).Cache()
	for range 2 {
		got, err := o.ToSlice(context.Background())
		assert.ErrorIs(t, err, errBoom)
		assert.Equal(t, []int{1}, got)
	}
}

func TestCacheConcurrentSubscribers(t *testing.T) {
	var subscriptions atomic.Int32
	ch := make(chan int)
	o := Defer(func() Observable[int] {
		subscriptions.Add(1)
		return FromChannel(ch)
	}).Cache()
	var wg sync.WaitGroup
	results := make([][]int, 8)
	for i := range results {
		wg.Go(func() {
			got, err := o.ToSlice(context.Background())
			assert.NoError(t, err)
			results[i] = got
		})
	}
	for i := range 100 {
		ch <- i
	}
	close(ch)
	wg.Wait()
	assert.Equal(t, int32(1), subscriptions.Load())
	for _, got := range results {
		assert.Equal(t, seq(0, 100), got)
	}
}

func TestCacheKeepsRunningWhenTheFirstSubscriberLeaves(t *testing.T) {
	g := newGate()
	o := g.observable(1, 2).Cache()
	sub := o.Subscribe(context.Background(), newRecorder[int]())
	sub.Unsubscribe()
	close(g.release)
	got, err := o.ToSlice(context.Background())
	require.NoError(t, err)
	assert.Equal(t, []int{1, 2}, got)
	waitDone(t, g.stopped, "source")
}

func TestCacheKeepsContextValues(t *testing.T) {
	type key struct{}
	var seen any
	o := Create(func(ctx context.Context, o Observer[int]) {
		seen = ctx.Value(key{})
		o.OnCompleted()
	}).Cache()
	_, err := o.ToSlice(context.WithValue(context.Background(), key{}, "request"))
	require.NoError(t, err)
	assert.Equal(t, "request", seen)
}
