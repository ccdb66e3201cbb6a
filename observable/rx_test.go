package observable

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reactivex/rxgo/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// drain reads every item of an rxgo observation.
func drain(ch <-chan rxgo.Item) (values []any, errs []error) {
	for item := range ch {
		if item.E != nil {
			errs = append(errs, item.E)
			continue
		}
		values = append(values, item.V)
	}
	return values, errs
}

// rxOf is an rxgo Observable of items as they are (rxgo.Just cannot emit
// nil).
func rxOf(items ...any) rxgo.Observable {
	return rxgo.Defer([]rxgo.Producer{func(ctx context.Context, next chan<- rxgo.Item) {
		for _, v := range items {
			rxgo.Of(v).SendContext(ctx, next)
		}
	}})
}

func TestToRx(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	values, errs := drain(ToRx(Just(1, 2, 3)).Observe())
	assert.Equal(t, []any{1, 2, 3}, values)
	assert.Empty(t, errs)

	values, errs = drain(ToRx(Concat(Just(1), Error[int](errBoom))).Observe())
	assert.Equal(t, []any{1}, values)
	require.Len(t, errs, 1)
	assert.ErrorIs(t, errs[0], errBoom)
}

func TestToRxIsLazyAndColdPerObservation(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	var subscriptions atomic.Int32
	rx := ToRx(Defer(func() Observable[int32] { return Just(subscriptions.Add(1)) }))
	assert.Zero(t, subscriptions.Load(), "nothing runs before an observation")
	for want := int32(1); want <= 2; want++ {
		values, _ := drain(rx.Observe())
		assert.Equal(t, []any{want}, values)
	}
}

func TestToRxAsynchronousSource(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	s := NewReplaySubject[int](0)
	ch := ToRx(s.Observable()).Observe()
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

func TestToRxConsumerThatStopsEarlyLeaksNothing(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())

	t.Run("cancelled observation", func(t *testing.T) {
		p := newProbe()
		ctx, cancel := context.WithCancel(context.Background())
		ch := ToRx(p.async(1, 2, 3)).Observe(rxgo.WithContext(ctx))
		<-ch // take one, then stop
		cancel()
		p.requireStopped(t) // the source saw its context done
	})
	t.Run("rxgo First", func(t *testing.T) {
		p := newProbe()
		ctx, cancel := context.WithCancel(context.Background())
		// A synchronous source runs to completion before ToRx hands
		// anything to rxgo; an endless one needs its own goroutine.
		item, err := ToRx(p.infinite().SubscribeOn(NewGoroutine)).First().Get(rxgo.WithContext(ctx))
		require.NoError(t, err)
		assert.Equal(t, 0, item.V)
		cancel()
		p.requireStopped(t)
	})
	t.Run("rxgo Take", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		values, _ := drain(ToRx(Interval(time.Microsecond)).Take(3).Observe(rxgo.WithContext(ctx)))
		cancel()
		assert.Equal(t, []any{int64(0), int64(1), int64(2)}, values)
	})
}

func TestFromRx(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	got, err := FromRx[int](rxgo.Just(1, 2, 3)()).ToSlice(context.Background())
	require.NoError(t, err)
	assert.Equal(t, []int{1, 2, 3}, got)

	got, err = FromRx[int](rxgo.Just(1, errBoom, 3)()).ToSlice(context.Background())
	assert.ErrorIs(t, err, errBoom)
	assert.Equal(t, []int{1}, got)
}

func TestFromRxItemOfAnotherType(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	_, err := FromRx[int](rxgo.Just("one")()).ToSlice(context.Background())
	require.ErrorIs(t, err, ErrItemType)
	assert.Contains(t, err.Error(), "string")
	assert.Contains(t, err.Error(), "int")

	_, err = FromRx[int](rxOf(nil)).First(context.Background())
	assert.ErrorIs(t, err, ErrItemType, "nil is no int")

	p, err := FromRx[*int](rxOf(nil)).First(context.Background())
	assert.NoError(t, err)
	assert.Nil(t, p, "nil is a nil *int")

	e, err := FromRx[error](rxOf(nil)).First(context.Background())
	assert.NoError(t, err)
	assert.Nil(t, e)
}

func TestFromRxCancelsTheObservationWhenTheSubscriberStops(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	stopped := make(chan struct{})
	endless := rxgo.Defer([]rxgo.Producer{func(ctx context.Context, next chan<- rxgo.Item) {
		defer close(stopped)
		for i := 0; rxgo.Of(i).SendContext(ctx, next); i++ {
		}
	}})
	got, err := FromRx[int](endless).Take(3).ToSlice(context.Background())
	require.NoError(t, err)
	assert.Equal(t, []int{0, 1, 2}, got)
	waitDone(t, stopped, "rxgo producer")
}

func TestRxRoundTrip(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	rx := ToRx(Just(1, 2, 3, 4)).
		Filter(func(v any) bool { return v.(int)%2 == 0 }).
		Map(func(_ context.Context, v any) (any, error) { return v.(int) * 10, nil })
	got, err := FromRx[int](rx).ToSlice(context.Background())
	require.NoError(t, err)
	assert.Equal(t, []int{20, 40}, got)
}
