package observable

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rxhystrix/rxhystrix/internal/startgrace"
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

// holdStarts stretches the starter's grace for the rest of the test:
// handed-over work waits until a waiter takes it over or starts it, and
// what is left starts once the test ends.
func holdStarts(t *testing.T) {
	t.Cleanup(startgrace.Hold())
}

// takenOver runs once a waiter's wait on a fresh countingSingle of join
// made by wait, and reports whether the waiter called it (rather than a
// goroutine subscribing), after checking that the work ran once.
func takenOver(t *testing.T, join bool, wait func(Single[int]) (int, error)) bool {
	t.Helper()
	s := &countingSingle{join: join}
	v, err := wait(s)
	require.NoError(t, err)
	require.Equal(t, 7, v)
	require.Equal(t, int32(1), s.calls.Load()+s.subscribed.Load(), "the work ran once")
	return s.calls.Load() == 1
}

// getOf waits for s's result with ToFuture and Get(ctx).
func getOf(ctx context.Context) func(Single[int]) (int, error) {
	return func(s Single[int]) (int, error) {
		return FromSingle[int](s).ToFuture(context.Background()).Get(ctx)
	}
}

func TestGetTakesOverTheUnstartedWorkOfAJoinableSingle(t *testing.T) {
	holdStarts(t)
	assert.True(t, takenOver(t, true, getOf(context.Background())))
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
			holdStarts(t) // the Get starts the work, or it never ends
			assert.False(t, takenOver(t, c.join, getOf(c.getCtx)))
		})
	}
}

// canceledLater returns a context that can end, and ends with the test
// (or after ten seconds, so that a Get that never gets its result fails
// rather than hangs).
func canceledLater(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestTheWorkRunsOnceWhoeverTakesIt(t *testing.T) {
	t.Cleanup(startgrace.Set(0)) // the starter races every Get
	for range 1000 {
		s := &countingSingle{join: true}
		v, err := FromSingle[int](s).ToFuture(context.Background()).Get(context.Background())
		require.NoError(t, err)
		require.Equal(t, 7, v)
		for s.calls.Load()+s.subscribed.Load() == 0 {
			runtime.Gosched() // the starter's goroutine has it: let it run
		}
		require.Equal(t, int32(1), s.calls.Load()+s.subscribed.Load(), "the work ran once")
	}
}

func TestFirstOfReplayNowTakesOverLikeGet(t *testing.T) {
	holdStarts(t)
	first := func(s Single[int]) (int, error) {
		hot := FromSingle[int](s).SubscribeOn(NewGoroutine).ReplayNow(context.Background())
		v, err := hot.First(context.Background())
		if err != nil {
			return v, err
		}
		again, err := hot.First(context.Background()) // replayed, not run again
		assert.Equal(t, v, again)
		return v, err
	}
	assert.True(t, takenOver(t, true, first))
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

// gatedSingle's work waits for release, then answers 7 with its
// context's error; it records whether a Call or a subscription did it.
type gatedSingle struct {
	started, release chan struct{}
	calls            atomic.Int32
}

func (s *gatedSingle) Call(ctx context.Context) (int, error) {
	s.calls.Add(1)
	close(s.started)
	<-s.release
	return 7, ctx.Err()
}

func (s *gatedSingle) SubscribeSingle(ctx context.Context, r SingleObserver[int]) {
	close(s.started)
	<-s.release
	r.OnResult(7, ctx.Err())
}

func (*gatedSingle) Async() bool    { return false }
func (*gatedSingle) Joinable() bool { return true }

// A First that runs the work itself still counts as a subscriber: another
// subscriber leaving meanwhile does not cancel the work it waits for.
func TestFirstThatTakesOverKeepsTheWorkAlive(t *testing.T) {
	holdStarts(t)
	s := &gatedSingle{started: make(chan struct{}), release: make(chan struct{})}
	hot := FromSingle[int](s).SubscribeOn(NewGoroutine).ReplayNow(context.Background())
	other, leave := context.WithCancel(context.Background())
	rec := newRecorder[int]()
	hot.Subscribe(other, rec)
	go func() {
		<-s.started
		leave()
		close(s.release)
	}()
	v, err := hot.First(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 7, v)
	assert.Equal(t, int32(1), s.calls.Load(), "the First called the Single")
	leave()
}

// joiningSingle is a countingSingle that is a Joiner: it counts its
// Joins apart from its Calls.
type joiningSingle struct {
	countingSingle
	joins atomic.Int32
}

func (s *joiningSingle) Join(ctx context.Context) (int, error) {
	s.joins.Add(1)
	return 7, ctx.Err()
}

// A waiter that takes a Joiner over calls Join, and First, which is no
// take-over, calls Call; a zip of two Joiners taken over joins both.
func TestAWaiterJoinsAJoiner(t *testing.T) {
	holdStarts(t)
	ctx := context.Background()
	waits := []struct {
		name string
		wait func(s Single[int]) (int, error)
	}{
		{"Get", getOf(ctx)},
		{"First of ReplayNowOn", func(s Single[int]) (int, error) {
			return FromSingle[int](s).ReplayNowOn(ctx, NewGoroutine).First(ctx)
		}},
		{"Get of Zip2", func(s Single[int]) (int, error) {
			sum := Zip2(FromSingle[int](s), FromSingle[int](s), func(a, b int) int { return a + b - 7 })
			return sum.ToFuture(ctx).Get(ctx)
		}},
	}
	for _, w := range waits {
		t.Run(w.name, func(t *testing.T) {
			s := &joiningSingle{countingSingle: countingSingle{join: true}}
			v, err := w.wait(s)
			require.NoError(t, err)
			assert.Equal(t, 7, v)
			assert.Zero(t, s.calls.Load()+s.subscribed.Load(), "Call or SubscribeSingle")
			assert.Positive(t, s.joins.Load())
		})
	}
	s := &joiningSingle{countingSingle: countingSingle{join: true}}
	v, err := FromSingle[int](s).First(ctx)
	require.NoError(t, err)
	assert.Equal(t, 7, v)
	assert.Equal(t, int32(1), s.calls.Load())
	assert.Zero(t, s.joins.Load())
}
