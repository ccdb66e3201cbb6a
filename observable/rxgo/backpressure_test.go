package rxgo_test

import (
	"context"
	"runtime"
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

// atOnce bounds how long an rxgo consumer may wait for values that a
// synchronous source has ready: the bound only turns a hang into a
// failure.
const atOnce = 3 * time.Second

// maxHeapGrowth is how much the live heap may grow while a consumer
// holds an observation of an endless or very long source open.
const maxHeapGrowth = 4 << 20

// heapAlloc returns the bytes of live heap objects.
func heapAlloc() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

func assertHeapBounded(t *testing.T, base int64) {
	t.Helper()
	growth := heapAlloc() - base
	assert.Less(t, growth, int64(maxHeapGrowth), "heap growth in bytes while the observation is open")
}

func TestToRxEndlessSynchronousSource(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	base := heapAlloc()
	for range 20 {
		ok := t.Run("First", func(t *testing.T) {
			src, stopped := endless()
			ctx, cancel := context.WithTimeout(context.Background(), atOnce)
			item, err := rxgo.ToRx(src).First().Get(rx.WithContext(ctx))
			require.NoError(t, err, "First returns at once")
			assert.Equal(t, 0, item.V)
			assertHeapBounded(t, base)
			cancel()
			waitClosed(t, stopped, "source")
			goleak.VerifyNone(t, ignore)
		})
		ok = ok && t.Run("Take", func(t *testing.T) {
			src, stopped := endless()
			ctx, cancel := context.WithTimeout(context.Background(), atOnce)
			values, errs := drain(rxgo.ToRx(src).Take(3).Observe(rx.WithContext(ctx)))
			require.NoError(t, ctx.Err(), "Take(3) returns at once")
			assert.Equal(t, []any{0, 1, 2}, values)
			assert.Empty(t, errs)
			assertHeapBounded(t, base)
			cancel()
			waitClosed(t, stopped, "source")
			goleak.VerifyNone(t, ignore)
		})
		if !ok {
			return
		}
	}
}

func TestToRxLongSynchronousSourceIsNotBuffered(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	const n = 1_000_000
	var emitted atomic.Int64
	long := observable.Create(func(ctx context.Context, o observable.Observer[int]) {
		for i := 0; i < n && ctx.Err() == nil; i++ {
			emitted.Add(1)
			o.OnNext(i)
		}
		o.OnCompleted()
	})
	base := heapAlloc()
	ctx, cancel := context.WithTimeout(context.Background(), atOnce)
	defer cancel()
	values, _ := drain(rxgo.ToRx(long).Take(3).Observe(rx.WithContext(ctx)))
	require.NoError(t, ctx.Err(), "Take(3) returns at once")
	assert.Equal(t, []any{0, 1, 2}, values)
	// rxgo's Take and channels may have taken a value or two more.
	assert.Less(t, emitted.Load(), int64(10), "values emitted before the consumer stopped")
	assertHeapBounded(t, base)
}

func TestToRxSubjectProducerWaitsForRxgo(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	s := observable.NewPublishSubject[int]()
	subscribed := make(chan struct{})
	hot := observable.Create(func(ctx context.Context, o observable.Observer[int]) {
		s.Observable().Subscribe(ctx, o)
		close(subscribed) // the Subject has the subscriber
	})
	ch := rxgo.ToRx(hot).Observe()
	waitClosed(t, subscribed, "subscription")

	var taken atomic.Int32
	done := make(chan []any)
	go func() {
		var values []any
		for item := range ch {
			values = append(values, item.V)
			taken.Add(1)
		}
		done <- values
	}()
	for i := range 10 {
		s.OnNext(i)
	}
	// Each OnNext returned once rxgo's consumer had received its value,
	// and the consumer counts a value before it receives the next.
	assert.GreaterOrEqual(t, taken.Load(), int32(9), "values taken when the last OnNext returned")
	s.OnCompleted()
	select {
	case values := <-done:
		assert.Equal(t, []any{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, values)
	case <-time.After(10 * time.Second):
		t.Fatal("the observation did not complete")
	}
}
