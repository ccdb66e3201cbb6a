package observable

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/rxhystrix/rxhystrix/internal/clock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFutureResults(t *testing.T) {
	cases := []struct {
		name string
		o    Observable[int]
		want int
		err  error
	}{
		{"value", Just(5), 5, nil},
		{"last value", Just(1, 2, 3), 3, nil},
		{"empty", Empty[int](), 0, ErrEmpty},
		{"error", Error[int](errBoom), 0, errBoom},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := c.o.ToFuture(context.Background())
			waitDone(t, f.Done(), "future")
			for range 2 { // Get can be called again
				v, err := f.Get(context.Background())
				assert.Equal(t, c.want, v)
				if c.err == nil {
					assert.NoError(t, err)
				} else {
					assert.ErrorIs(t, err, c.err)
				}
			}
		})
	}
}

func TestToFutureNeverBlocks(t *testing.T) {
	g := newGate()
	f := g.observable(42).ToFuture(context.Background())
	select {
	case <-f.Done():
		t.Fatal("done before the source emitted")
	default:
	}
	close(g.release)
	v, err := f.Get(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 42, v)
	waitDone(t, g.stopped, "source")
}

func TestFutureGetContextOnlyBoundsTheWait(t *testing.T) {
	g := newGate()
	f := g.observable(42).ToFuture(context.Background())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := f.Get(ctx)
	assert.ErrorIs(t, err, context.Canceled)

	mc := clock.NewManual(epoch)
	wctx, stop := mc.WithTimeout(context.Background(), time.Second)
	defer stop()
	got := make(chan error)
	go func() {
		_, err := f.Get(wctx)
		got <- err
	}()
	mc.Advance(time.Second)
	assert.ErrorIs(t, <-got, context.DeadlineExceeded)

	close(g.release)     // the work went on
	v, err := f.Get(nil) //nolint:staticcheck // a nil ctx means Background
	require.NoError(t, err)
	assert.Equal(t, 42, v)
}

func TestFutureCancelUnsubscribes(t *testing.T) {
	g := newGate()
	f := g.observable(42).ToFutureOn(context.Background(), Immediate)
	waitDone(t, g.started, "subscription")
	f.Cancel()
	waitDone(t, g.stopped, "source")
	_, err := f.Get(context.Background())
	assert.ErrorIs(t, err, context.Canceled)
	f.Cancel() // idempotent

	done := Just(1).ToFutureOn(context.Background(), Immediate)
	done.Cancel() // too late: the result stands
	v, err := done.Get(context.Background())
	assert.NoError(t, err)
	assert.Equal(t, 1, v)
}

func TestFutureContextEndsTheWork(t *testing.T) {
	g := newGate()
	ctx, cancel := context.WithCancel(context.Background())
	f := g.observable(42).ToFutureOn(ctx, Immediate)
	cancel()
	waitDone(t, g.stopped, "source")
	_, err := f.Get(context.Background())
	assert.ErrorIs(t, err, context.Canceled)

	_, err = Just(1).ToFuture(ctx).Get(context.Background())
	assert.ErrorIs(t, err, context.Canceled, "a done ctx fails the Future at once")
}

func TestToFutureOnRefusingScheduler(t *testing.T) {
	errFull := errors.New("pool full")
	refuse := SchedulerFunc(func(context.Context, func()) error { return errFull })
	_, err := Just(1).ToFutureOn(context.Background(), refuse).Get(context.Background())
	assert.ErrorIs(t, err, errFull)
}

// Gets that wait without a context that can end are all woken by the
// result, or by Cancel, however many wait.
func TestFutureGetsWaitingForTheResult(t *testing.T) {
	for _, cancel := range []bool{false, true} {
		g := newGate()
		f := g.observable(42).ToFuture(context.Background())
		waitDone(t, g.started, "source")
		const waiters = 3
		got := make(chan error, waiters)
		for range waiters {
			go func() {
				v, err := f.Get(context.Background())
				if err == nil && v != 42 {
					err = errors.New("wrong value")
				}
				got <- err
			}()
		}
		waitUntilWaiting(&f.c.scope)
		if cancel {
			f.Cancel()
		} else {
			close(g.release)
		}
		for range waiters {
			if cancel {
				assert.ErrorIs(t, <-got, context.Canceled)
			} else {
				assert.NoError(t, <-got)
			}
		}
		if cancel {
			close(g.release)
		}
		waitDone(t, g.stopped, "source")
	}
}

// waitUntilWaiting returns once a waiter waits in s.waitEnd.
func waitUntilWaiting(s *scope) {
	for {
		if w := s.w.Load(); w != nil {
			w.mu.Lock()
			waiting := w.waiting
			w.mu.Unlock()
			if waiting {
				return
			}
		}
		runtime.Gosched()
	}
}

// A Future of SubscribeOn of a Discarder Single discards a value that
// comes once it was cancelled, as a Future of the Single does
// (TestFutureDiscardsAValueThatComesOnceItEnded).
func TestFutureOfSubscribeOnDiscardsALateValue(t *testing.T) {
	late := &ownedSingle{v: 8, async: true, answer: make(chan struct{})}
	f := FromSingle[int](late).SubscribeOn(NewGoroutine).ToFuture(context.Background())
	f.Cancel()
	close(late.answer)
	assert.Equal(t, []string{"8"}, late.awaitDiscards(t, 1))
	_, err := f.Get(context.Background())
	assert.ErrorIs(t, err, context.Canceled)
}
