package observable

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A source of Zip2 that has completed, with values still waiting for
// their partners, has its context end with its own stream (Create's doc:
// "the stream terminated" is among the ends of ctx), as the sources of
// Concat and Merge do: the zip runs on until the other source has
// matched them, and whatever the completed source holds open until its
// context ends must not stay open that long.
func TestZip2SourceContextEndsWithItsOwnStream(t *testing.T) {
	var ctxErr error
	done := Create(func(ctx context.Context, o Observer[int]) {
		o.OnNext(1)
		o.OnNext(2)
		o.OnCompleted()
		ctxErr = ctx.Err()
	})
	slow := Concat(Just(10), Never[int]())
	add := func(a, b int) int { return a + b }
	t.Run("a", func(t *testing.T) {
		ctxErr = nil
		r := newRecorder[int]()
		sub := Zip2(done, slow, add).Subscribe(context.Background(), r)
		defer sub.Unsubscribe()
		require.False(t, r.terminated(), "2 waits for its partner")
		assert.ErrorIs(t, ctxErr, context.Canceled, "a's own stream terminated")
	})
	t.Run("b", func(t *testing.T) {
		ctxErr = nil
		r := newRecorder[int]()
		sub := Zip2(slow, done, add).Subscribe(context.Background(), r)
		defer sub.Unsubscribe()
		require.False(t, r.terminated(), "2 waits for its partner")
		assert.ErrorIs(t, ctxErr, context.Canceled, "b's own stream terminated")
	})
}

// A zip whose one source keeps one value ahead of the other holds one
// value at a time, and must not hold more memory the longer it runs: its
// queue never empties, so the slots of the values already paired must be
// reused rather than kept in front of the one waiting.
func TestZipQueueThatNeverEmptiesStaysSmall(t *testing.T) {
	var q queue[int]
	q.init()
	q.push(0)
	for i := 1; i <= 10000; i++ {
		q.push(i)
		require.Equal(t, i-1, q.pop())
		require.Equal(t, 1, q.len())
	}
	assert.LessOrEqual(t, cap(q.vs), 4, "one value waits, but the queue grew with every value paired")
}

// A value a Single gives once the subscriber of a Zip2 has left is
// "left without a partner ... the subscriber left before the pair was
// made (the pair is then not made)" (Discarder): it goes back to the
// Single, and the zip function is not called for a pair nobody wants.
func TestZip2DoesNotPairAValueThatComesAfterTheSubscriberLeft(t *testing.T) {
	late := &ownedSingle{v: 6, async: true, answer: make(chan struct{})}
	var zipped atomic.Int32
	r := newRecorder[int]()
	sub := Zip2(FromSingle[int](late), Just(7, 8), func(a, b int) int {
		zipped.Add(1)
		return a * b
	}).Subscribe(context.Background(), r)
	sub.Unsubscribe() // b's values wait for a partner; a has not answered
	close(late.answer)
	assert.Equal(t, []string{"6"}, late.awaitDiscards(t, 1), "a's late value")
	assert.Zero(t, zipped.Load(), "a pair was made after the subscriber left")
	r.check(t, nil, nil, false)
}
