package observable

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSubscribeOnImmediateRunsInline(t *testing.T) {
	r := newRecorder[int]()
	Just(1, 2).SubscribeOn(Immediate).Subscribe(context.Background(), r)
	require.True(t, r.terminated())
	r.check(t, []int{1, 2}, nil, true)
}

func TestSubscribeOnNewGoroutine(t *testing.T) {
	release := make(chan struct{})
	o := Defer(func() Observable[int] {
		<-release // were this the subscribing goroutine, Subscribe would never return
		return Just(1, 2)
	}).SubscribeOn(NewGoroutine)
	r := newRecorder[int]()
	sub := o.Subscribe(context.Background(), r)
	close(release)
	r.wait(t)
	waitDone(t, sub.Done(), "subscription")
	r.check(t, []int{1, 2}, nil, true)
}

func TestSubscribeOnRefusal(t *testing.T) {
	errFull := errors.New("pool full")
	var ran atomic.Bool
	refuse := SchedulerFunc(func(context.Context, func()) error { return errFull })
	_, err := Defer(func() Observable[int] {
		ran.Store(true)
		return Just(1)
	}).SubscribeOn(refuse).First(context.Background())
	assert.ErrorIs(t, err, errFull)
	assert.False(t, ran.Load())
}

func TestSubscribeOnSeesTheSubscriptionContext(t *testing.T) {
	var seen context.Context
	sch := SchedulerFunc(func(ctx context.Context, task func()) error {
		seen = ctx
		task()
		return nil
	})
	_, err := Just(1).SubscribeOn(sch).First(context.Background())
	require.NoError(t, err)
	require.NotNil(t, seen)
	assert.ErrorIs(t, seen.Err(), context.Canceled, "the subscription has ended")
}

// A Scheduler "may drop a task whose ctx is done before it starts", and
// a Single's SubscribeSingle hands its observer "the result, or ctx's
// error if ctx ended before it", exactly once. SubscribeOn of a Single
// on such a scheduler told nothing when its task was dropped: a
// ReplayNowOn whose every subscriber left before the task started never
// had a result, and a later subscriber, which ReplayNow says receives
// context.Canceled, waited for ever.
func TestSubscribeOnASchedulerThatDropsADoneTask(t *testing.T) {
	type task struct {
		ctx context.Context
		f   func()
	}
	var queued []task
	sch := SchedulerFunc(func(ctx context.Context, f func()) error {
		queued = append(queued, task{ctx, f})
		return nil
	})
	runQueued := func() {
		for _, q := range queued {
			if q.ctx.Err() == nil { // a done task is dropped, as the Scheduler's doc allows
				q.f()
			}
		}
		queued = nil
	}

	o := FromFunc(answer).ReplayNowOn(context.Background(), sch)
	r := newRecorder[int]()
	sub := o.Subscribe(context.Background(), r)
	sub.Unsubscribe() // the only subscriber leaves before the work started
	runQueued()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second) // a safety net, not a timing
	defer cancel()
	_, err := o.First(ctx)
	assert.ErrorIs(t, err, context.Canceled, "a subscriber after every other left")

	// The Single's own contract: told once, with ctx's error.
	one, ok := FromFunc(answer).SubscribeOn(sch).AsSingle()
	require.True(t, ok)
	sctx, scancel := context.WithCancel(context.Background())
	told := make(chan error, 2)
	one.SubscribeSingle(sctx, singleFunc[int](func(_ int, err error) { told <- err }))
	scancel()
	runQueued()
	select {
	case err := <-told:
		assert.ErrorIs(t, err, context.Canceled)
	case <-time.After(10 * time.Second):
		t.Fatal("SubscribeSingle never told its observer")
	}
}

type singleFunc[T any] func(T, error)

func (f singleFunc[T]) OnResult(v T, err error) { f(v, err) }

// SubscribeOn passes a Single's value on unchanged, so a value of a
// Discarder Single that comes once the subscription has ended still goes
// back to that Single, as it does without SubscribeOn
// (TestSubscribeHandsAValueThatComesAfterTheEndToTheSingle).
func TestSubscribeOnKeepsTheSinglesDiscarder(t *testing.T) {
	late := &ownedSingle{v: 6, async: true, answer: make(chan struct{})}
	sub := FromSingle[int](late).SubscribeOn(NewGoroutine).Subscribe(context.Background(), funcObserver[int]{
		next: func(v int) { t.Errorf("OnNext(%d) once the subscription had ended", v) },
	})
	sub.Unsubscribe()
	close(late.answer)
	assert.Equal(t, []string{"6"}, late.awaitDiscards(t, 1))
}

// First of SubscribeOn of a Discarder Single (fused: scheduledSingle.Call)
// hands back a value that comes once its context ended, as the
// subscription does.
func TestFirstOfSubscribeOnDiscardsALateValue(t *testing.T) {
	late := &ownedSingle{v: 7, async: true, answer: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	late.onSubscribe = func(context.Context) { cancel() }
	_, err := FromSingle[int](late).SubscribeOn(NewGoroutine).First(ctx)
	require.ErrorIs(t, err, context.Canceled)
	close(late.answer)
	assert.Equal(t, []string{"7"}, late.awaitDiscards(t, 1))
}
