package rxgo_test

import (
	"context"
	"testing"

	rx "github.com/reactivex/rxgo/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/rxhystrix/rxhystrix/observable"
	"github.com/rxhystrix/rxhystrix/observable/rxgo"
)

func TestFromRx(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	got, err := rxgo.FromRx[int](rx.Just(1, 2, 3)()).ToSlice(context.Background())
	require.NoError(t, err)
	assert.Equal(t, []int{1, 2, 3}, got)

	got, err = rxgo.FromRx[int](rx.Just(1, errBoom, 3)()).ToSlice(context.Background())
	assert.ErrorIs(t, err, errBoom)
	assert.Equal(t, []int{1}, got)
}

func TestFromRxItemOfAnotherType(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	_, err := rxgo.FromRx[int](rx.Just("one")()).ToSlice(context.Background())
	require.ErrorIs(t, err, rxgo.ErrItemType)
	assert.Contains(t, err.Error(), "string")
	assert.Contains(t, err.Error(), "int")

	_, err = rxgo.FromRx[int](rxOf(nil)).First(context.Background())
	assert.ErrorIs(t, err, rxgo.ErrItemType, "nil is no int")

	p, err := rxgo.FromRx[*int](rxOf(nil)).First(context.Background())
	assert.NoError(t, err)
	assert.Nil(t, p, "nil is a nil *int")

	e, err := rxgo.FromRx[error](rxOf(nil)).First(context.Background())
	assert.NoError(t, err)
	assert.Nil(t, e)
}

func TestFromRxCancelsTheObservationWhenTheSubscriberStops(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	stopped := make(chan struct{})
	endless := rx.Defer([]rx.Producer{func(ctx context.Context, next chan<- rx.Item) {
		defer close(stopped)
		for i := 0; rx.Of(i).SendContext(ctx, next); i++ {
		}
	}})
	got, err := rxgo.FromRx[int](endless).Take(3).ToSlice(context.Background())
	require.NoError(t, err)
	assert.Equal(t, []int{0, 1, 2}, got)
	waitClosed(t, stopped, "rxgo producer")
}

func TestFromRxNil(t *testing.T) {
	assert.PanicsWithValue(t, "rxgo: FromRx with nil o", func() { rxgo.FromRx[int](nil) })
}

func TestRxRoundTrip(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	o := rxgo.ToRx(observable.Just(1, 2, 3, 4)).
		Filter(func(v any) bool { return v.(int)%2 == 0 }).
		Map(func(_ context.Context, v any) (any, error) { return v.(int) * 10, nil })
	got, err := rxgo.FromRx[int](o).ToSlice(context.Background())
	require.NoError(t, err)
	assert.Equal(t, []int{20, 40}, got)
}
