package observable

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// countingProducer emits 1, 2, 3 when subscribed and knows its first value
// is 1; it counts how it was asked.
type countingProducer struct {
	produced, producedFirst int
	firstCtx                context.Context
}

func (p *countingProducer) Produce(ctx context.Context, o Observer[int]) {
	p.produced++
	for v := 1; v <= 3; v++ {
		o.OnNext(v)
	}
	o.OnCompleted()
	o.OnNext(4) // after the terminal event: dropped
}

func (p *countingProducer) ProduceFirst(ctx context.Context) (int, error) {
	p.producedFirst++
	p.firstCtx = ctx
	return 1, nil
}

// Subscriptions of a FirstProducer's Observable run Produce, kept to the
// Rx grammar as Create's function is; First asks ProduceFirst alone.
func TestFirstOfAFirstProducerAsksItForTheFirstValue(t *testing.T) {
	p := new(countingProducer)
	o := FromProducer[int](p)

	vs, err := o.ToSlice(context.Background())
	require.NoError(t, err)
	assert.Equal(t, []int{1, 2, 3}, vs)
	assert.Equal(t, 1, p.produced)

	type key struct{}
	ctx := context.WithValue(context.Background(), key{}, "request")
	v, err := o.First(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, v)
	assert.Equal(t, 1, p.producedFirst)
	assert.Equal(t, 1, p.produced, "First subscribed")
	assert.Equal(t, "request", p.firstCtx.Value(key{}), "ProduceFirst has First's context")

	v, err = o.First(nil) //nolint:staticcheck // a nil context is Background
	require.NoError(t, err)
	assert.Equal(t, 1, v)
	assert.NotNil(t, p.firstCtx)

	// Operators downstream subscribe: only First itself is fused.
	v, err = Map(o, func(v int) int { return v * 10 }).First(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 10, v)
	assert.Equal(t, 2, p.produced)
	assert.Equal(t, 2, p.producedFirst)
}

// ProduceFirst is not asked once First's context is done.
func TestFirstOfAFirstProducerWithADoneContext(t *testing.T) {
	p := new(countingProducer)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := FromProducer[int](p).First(ctx)
	assert.ErrorIs(t, err, context.Canceled)
	assert.Zero(t, p.producedFirst+p.produced)
}

// plainProducer is a Producer that is no FirstProducer.
type plainProducer func(ctx context.Context, o Observer[int])

func (f plainProducer) Produce(ctx context.Context, o Observer[int]) { f(ctx, o) }

// First of a plain Producer's Observable subscribes and ends the
// subscription at the first value, as First of Create's does.
func TestFirstOfAPlainProducerSubscribes(t *testing.T) {
	var left bool
	o := FromProducer[int](plainProducer(func(ctx context.Context, o Observer[int]) {
		o.OnNext(5)
		left = ctx.Err() != nil
		o.OnNext(6)
	}))
	v, err := o.First(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 5, v)
	assert.True(t, left, "the subscription went on after the first value")
}

func TestFromProducerPanicsOnNil(t *testing.T) {
	assert.PanicsWithValue(t, "observable: FromProducer with nil p", func() { FromProducer[int](nil) })
}

// Error is a Single, which every consumer sees fail.
func TestErrorIsASingle(t *testing.T) {
	boom := errors.New("boom")
	o := Error[int](boom)
	s, ok := o.AsSingle()
	require.True(t, ok)
	assert.False(t, s.Async())
	_, err := s.Call(context.Background())
	assert.Equal(t, boom, err)
	_, err = o.First(context.Background())
	assert.Equal(t, boom, err)
	vs, err := o.ToSlice(context.Background())
	assert.Nil(t, vs)
	assert.Equal(t, boom, err)
	_, err = o.ToFuture(context.Background()).Get(context.Background())
	assert.Equal(t, boom, err)
	_, err = Map(o, func(v int) int { return v }).First(context.Background())
	assert.Equal(t, boom, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = s.Call(ctx)
	assert.ErrorIs(t, err, context.Canceled, "a caller that left has its own error")
}
