package observable

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// logObserver records every call, and the log's events, in one order.
type logObserver struct{ log *[]string }

func (l logObserver) OnNext(v int)      { *l.log = append(*l.log, fmt.Sprint("next ", v)) }
func (l logObserver) OnError(err error) { *l.log = append(*l.log, "error "+err.Error()) }
func (l logObserver) OnCompleted()      { *l.log = append(*l.log, "completed") }

func TestDoOperatorsRunBeforePassingOn(t *testing.T) {
	cases := []struct {
		name string
		o    func(log *[]string) Observable[int]
		want []string
	}{
		{"DoOnNext", func(log *[]string) Observable[int] {
			return Just(1, 2).DoOnNext(func(v int) { *log = append(*log, fmt.Sprint("tap ", v)) })
		}, []string{"tap 1", "next 1", "tap 2", "next 2", "completed"}},
		{"DoOnError", func(log *[]string) Observable[int] {
			return Error[int](errBoom).DoOnError(func(err error) { *log = append(*log, "tap "+err.Error()) })
		}, []string{"tap boom", "error boom"}},
		{"DoOnError on success", func(log *[]string) Observable[int] {
			return Just(1).DoOnError(func(error) { *log = append(*log, "tap") })
		}, []string{"next 1", "completed"}},
		{"DoOnCompleted", func(log *[]string) Observable[int] {
			return Just(1).DoOnCompleted(func() { *log = append(*log, "tap") })
		}, []string{"next 1", "tap", "completed"}},
		{"DoOnTerminate on completion", func(log *[]string) Observable[int] {
			return Just(1).DoOnTerminate(func() { *log = append(*log, "tap") })
		}, []string{"next 1", "tap", "completed"}},
		{"DoOnTerminate on error", func(log *[]string) Observable[int] {
			return Error[int](errBoom).DoOnTerminate(func() { *log = append(*log, "tap") })
		}, []string{"tap", "error boom"}},
		{"DoOnSubscribe", func(log *[]string) Observable[int] {
			return Defer(func() Observable[int] {
				*log = append(*log, "source")
				return Just(1)
			}).DoOnSubscribe(func() { *log = append(*log, "tap") })
		}, []string{"tap", "source", "next 1", "completed"}},
		{"Finally on completion", func(log *[]string) Observable[int] {
			return Just(1).Finally(func() { *log = append(*log, "finally") })
		}, []string{"next 1", "completed", "finally"}},
		{"Finally on error", func(log *[]string) Observable[int] {
			return Error[int](errBoom).Finally(func() { *log = append(*log, "finally") })
		}, []string{"error boom", "finally"}},
		{"DoOnUnsubscribe not after completion", func(log *[]string) Observable[int] {
			return Just(1).DoOnUnsubscribe(func() { *log = append(*log, "unsubscribed") })
		}, []string{"next 1", "completed"}},
		{"DoOnUnsubscribe not after error", func(log *[]string) Observable[int] {
			return Error[int](errBoom).DoOnUnsubscribe(func() { *log = append(*log, "unsubscribed") })
		}, []string{"error boom"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var log []string
			o := c.o(&log)
			o.Subscribe(context.Background(), logObserver{&log})
			assert.Equal(t, c.want, log)
			log = nil
			o.Subscribe(context.Background(), logObserver{&log})
			assert.Equal(t, c.want, log, "again")
		})
	}
}

func TestDoOnUnsubscribeRunsWhenCancelled(t *testing.T) {
	cases := []struct {
		name string
		run  func(o Observable[int])
	}{
		{"Unsubscribe", func(o Observable[int]) {
			o.Subscribe(context.Background(), newRecorder[int]()).Unsubscribe()
		}},
		{"caller context", func(o Observable[int]) {
			ctx, cancel := context.WithCancel(context.Background())
			sub := o.Subscribe(ctx, newRecorder[int]())
			cancel()
			<-sub.Done()
		}},
		{"Take downstream", func(o Observable[int]) { _, _ = o.Take(1).ToSlice(context.Background()) }},
		{"First", func(o Observable[int]) { _, _ = o.First(context.Background()) }},
		{"Future.Cancel", func(o Observable[int]) {
			f := o.ToFutureOn(context.Background(), Immediate)
			f.Cancel()
			<-f.Done()
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var unsubscribed, finally atomic.Int32
			p := newProbe()
			o := p.infinite()
			if c.name == "Unsubscribe" || c.name == "caller context" || c.name == "Future.Cancel" {
				o = Concat(Just(0), Never[int]())
			}
			o = o.DoOnUnsubscribe(func() { unsubscribed.Add(1) }).Finally(func() { finally.Add(1) })
			c.run(o)
			assert.Equal(t, int32(1), unsubscribed.Load(), "DoOnUnsubscribe")
			assert.Equal(t, int32(1), finally.Load(), "Finally")
		})
	}
}

// A subscription cancelled by its context is done only once the
// functions the cancellation runs have returned, though they run on a
// goroutine of their own.
func TestSubscriptionDoneAfterItsCancellationRan(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	o := Concat(Just(0), Never[int]()).DoOnUnsubscribe(func() {
		close(entered)
		<-release
	})
	ctx, cancel := context.WithCancel(context.Background())
	sub := o.Subscribe(ctx, newRecorder[int]())
	cancel()
	waitDone(t, entered, "DoOnUnsubscribe")
	select {
	case <-sub.Done():
		t.Fatal("done while DoOnUnsubscribe runs")
	default:
	}
	close(release)
	waitDone(t, sub.Done(), "subscription")
}

func TestDoOnUnsubscribeOnAnEndedContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var unsubscribed atomic.Bool
	sub := Never[int]().DoOnUnsubscribe(func() { unsubscribed.Store(true) }).Subscribe(ctx, newRecorder[int]())
	waitDone(t, sub.Done(), "subscription")
	// The source did not run at all, so there was nothing to cancel.
	assert.False(t, unsubscribed.Load())
}

func TestFinallyRunsOnceUnderRaces(t *testing.T) {
	for range 200 {
		var finally atomic.Int32
		subject := NewPublishSubject[int]()
		sub := subject.Observable().Finally(func() { finally.Add(1) }).Subscribe(context.Background(), newRecorder[int]())
		done := make(chan struct{})
		go func() {
			subject.OnCompleted()
			close(done)
		}()
		sub.Unsubscribe()
		<-done
		waitDone(t, sub.Done(), "subscription")
		require.Equal(t, int32(1), finally.Load())
	}
}
