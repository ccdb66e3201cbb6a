package observable

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

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
