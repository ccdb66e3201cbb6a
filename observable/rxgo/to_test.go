package rxgo_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	rx "github.com/reactivex/rxgo/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/rxhystrix/rxhystrix/observable"
	"github.com/rxhystrix/rxhystrix/observable/rxgo"
)

func TestToRx(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	values, errs := drain(rxgo.ToRx(observable.Just(1, 2, 3)).Observe())
	assert.Equal(t, []any{1, 2, 3}, values)
	assert.Empty(t, errs)

	values, errs = drain(rxgo.ToRx(observable.Concat(observable.Just(1), observable.Error[int](errBoom))).Observe())
	assert.Equal(t, []any{1}, values)
	require.Len(t, errs, 1)
	assert.ErrorIs(t, errs[0], errBoom)
}

func TestToRxIsLazyAndColdPerObservation(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	var subscriptions atomic.Int32
	o := rxgo.ToRx(observable.Defer(func() observable.Observable[int32] {
		return observable.Just(subscriptions.Add(1))
	}))
	assert.Zero(t, subscriptions.Load(), "nothing runs before an observation")
	for want := int32(1); want <= 2; want++ {
		values, _ := drain(o.Observe())
		assert.Equal(t, []any{want}, values)
	}
}

func TestToRxAsynchronousSource(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	s := observable.NewReplaySubject[int](0)
	ch := rxgo.ToRx(s.Observable()).Observe()
	go func() {
		for i := range 100 {
			s.OnNext(i)
		}
		s.OnCompleted()
	}()
	values, errs := drain(ch)
	assert.Len(t, values, 100)
	assert.Empty(t, errs)
}

func TestToRxAsynchronousSourceThatFails(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	failing := observable.Concat(observable.Just(1, 2), observable.Error[int](errBoom))
	values, errs := drain(rxgo.ToRx(failing.SubscribeOn(observable.NewGoroutine)).Observe())
	assert.Equal(t, []any{1, 2}, values)
	require.Len(t, errs, 1, "the error is handed over before the producer returns")
	assert.ErrorIs(t, errs[0], errBoom)
}

func TestToRxConsumerThatStopsEarlyLeaksNothing(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())

	t.Run("cancelled observation", func(t *testing.T) {
		src, stopped := async(1, 2, 3)
		ctx, cancel := context.WithCancel(context.Background())
		ch := rxgo.ToRx(src).Observe(rx.WithContext(ctx))
		<-ch // take one, then stop
		cancel()
		waitClosed(t, stopped, "source") // it saw its context done
	})
	t.Run("rxgo First of an asynchronous source", func(t *testing.T) {
		src, stopped := endless()
		ctx, cancel := context.WithCancel(context.Background())
		item, err := rxgo.ToRx(src.SubscribeOn(observable.NewGoroutine)).First().Get(rx.WithContext(ctx))
		require.NoError(t, err)
		assert.Equal(t, 0, item.V)
		cancel()
		waitClosed(t, stopped, "source")
	})
	t.Run("rxgo Take", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		values, _ := drain(rxgo.ToRx(observable.Interval(time.Microsecond)).Take(3).Observe(rx.WithContext(ctx)))
		cancel()
		assert.Equal(t, []any{int64(0), int64(1), int64(2)}, values)
	})
}

// lateCtx is a context whose end reaches the functions registered with
// context.AfterFunc only when deliver is called: it stands for the
// goroutine context.AfterFunc starts, which may not have run yet when a
// value comes.
type lateCtx struct {
	context.Context
	done chan struct{}

	mu sync.Mutex
	fs []func()
}

func newLateCtx() *lateCtx {
	return &lateCtx{Context: context.Background(), done: make(chan struct{})}
}

func (c *lateCtx) Done() <-chan struct{} { return c.done }

func (c *lateCtx) Err() error {
	select {
	case <-c.done:
		return context.Canceled
	default:
		return nil
	}
}

// AfterFunc is the method context.AfterFunc looks for.
func (c *lateCtx) AfterFunc(f func()) func() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fs = append(c.fs, f)
	return func() bool { return false }
}

func (c *lateCtx) cancel() { close(c.done) }

// deliver runs what context.AfterFunc registered.
func (c *lateCtx) deliver() {
	c.mu.Lock()
	fs := c.fs
	c.fs = nil
	c.mu.Unlock()
	for _, f := range fs {
		f()
	}
}

// ownedSingle is a synchronous Single of v whose values must be released
// when nobody receives them; a subscription waits for answer first.
type ownedSingle struct {
	v          int
	subscribed chan struct{}
	answer     chan struct{}
	discarded  chan int
}

func (s *ownedSingle) Call(context.Context) (int, error) { return s.v, nil }

func (s *ownedSingle) SubscribeSingle(ctx context.Context, r observable.SingleObserver[int]) {
	close(s.subscribed)
	<-s.answer
	r.OnResult(s.v, nil)
}

func (s *ownedSingle) Async() bool { return false }

func (s *ownedSingle) Discard(v int) { s.discarded <- v }

// A value ToRx took from a Discarder Single and could not hand to rxgo,
// whose observation ended first, goes back to the Single's Discard, as
// package observable's operators give back what they drop (a command's
// WithDiscard releasing a response body, say).
func TestToRxDiscardsAValueRxgoNeverTook(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	s := &ownedSingle{v: 7, subscribed: make(chan struct{}), answer: make(chan struct{}), discarded: make(chan int, 1)}
	ctx := newLateCtx()
	ch := rxgo.ToRx(observable.FromSingle[int](s)).Observe(rx.WithContext(ctx))
	waitClosed(t, s.subscribed, "subscription")
	ctx.cancel() // the consumer leaves before it takes the value
	close(s.answer)
	values, errs := drain(ch)
	ctx.deliver()
	assert.Empty(t, values)
	assert.Empty(t, errs)
	select {
	case v := <-s.discarded:
		assert.Equal(t, 7, v)
	default:
		t.Fatal("the value rxgo never took was dropped, not discarded")
	}
}
