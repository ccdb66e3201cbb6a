package observable

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// countingSingle counts how its work was done: by Call or by
// SubscribeSingle, and reports join as its Joinable.
type countingSingle struct {
	join              bool
	calls, subscribed atomic.Int32
}

func (s *countingSingle) Call(ctx context.Context) (int, error) {
	s.calls.Add(1)
	return 7, ctx.Err()
}

func (s *countingSingle) SubscribeSingle(ctx context.Context, r SingleObserver[int]) {
	s.subscribed.Add(1)
	r.OnResult(7, ctx.Err())
}

func (*countingSingle) Async() bool      { return false }
func (s *countingSingle) Joinable() bool { return s.join }

// oneProcessor runs the test on one processor: a goroutine that ToFuture
// starts then waits in the run queue until its starter blocks, so that a
// Get made at once finds its work unstarted.
func oneProcessor(t *testing.T) {
	prev := runtime.GOMAXPROCS(1)
	t.Cleanup(func() { runtime.GOMAXPROCS(prev) })
}

func TestGetTakesOverTheUnstartedWorkOfAJoinableSingle(t *testing.T) {
	oneProcessor(t)
	s := &countingSingle{join: true}
	v, err := FromSingle[int](s).ToFuture(context.Background()).Get(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 7, v)
	assert.Equal(t, int32(1), s.calls.Load(), "Get called the Single itself")
	runtime.Gosched() // the goroutine ToFuture started finds the work taken
	assert.Zero(t, s.subscribed.Load(), "the work ran once")
}

func TestGetLeavesTheWorkToTheGoroutine(t *testing.T) {
	cases := []struct {
		name   string
		join   bool
		getCtx context.Context
	}{
		{"a Single that is not joinable", false, context.Background()},
		{"a Get whose context can end", true, canceledLater(t)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			oneProcessor(t)
			s := &countingSingle{join: c.join}
			v, err := FromSingle[int](s).ToFuture(context.Background()).Get(c.getCtx)
			require.NoError(t, err)
			assert.Equal(t, 7, v)
			assert.Zero(t, s.calls.Load())
			assert.Equal(t, int32(1), s.subscribed.Load())
		})
	}
}

// canceledLater returns a context that can end, and ends with the test.
func canceledLater(t *testing.T) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	return ctx
}

func TestTheWorkRunsOnceWhoeverTakesIt(t *testing.T) {
	for range 1000 {
		s := &countingSingle{join: true}
		f := FromSingle[int](s).ToFuture(context.Background())
		v, err := f.Get(context.Background())
		require.NoError(t, err)
		assert.Equal(t, 7, v)
		<-f.Done()
		for s.calls.Load()+s.subscribed.Load() == 0 {
			runtime.Gosched()
		}
		assert.Equal(t, int32(1), s.calls.Load()+s.subscribed.Load())
	}
}

func TestFirstOfReplayNowTakesOverLikeGet(t *testing.T) {
	oneProcessor(t)
	s := &countingSingle{join: true}
	hot := FromSingle[int](s).SubscribeOn(NewGoroutine).ReplayNow(context.Background())
	v, err := hot.First(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 7, v)
	assert.Equal(t, int32(1), s.calls.Load())
	runtime.Gosched()
	assert.Zero(t, s.subscribed.Load())
	v, err = hot.First(context.Background()) // replayed, not run again
	require.NoError(t, err)
	assert.Equal(t, 7, v)
	assert.Equal(t, int32(1), s.calls.Load()+s.subscribed.Load())
}

func TestCancelEndsTheContextOfTakenOverWork(t *testing.T) {
	started := make(chan struct{})
	var f *Future[int]
	f = FromFunc(func(ctx context.Context) (int, error) {
		close(started)
		<-ctx.Done()
		return 0, ctx.Err()
	}).ToFutureOn(context.Background(), NewGoroutine)
	go func() {
		<-started
		f.Cancel()
	}()
	_, err := f.Get(context.Background())
	assert.ErrorIs(t, err, context.Canceled)
}
