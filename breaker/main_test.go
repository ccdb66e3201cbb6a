package breaker_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/rxhystrix/rxhystrix/breaker"
	"github.com/rxhystrix/rxhystrix/internal/clock"
	"github.com/rxhystrix/rxhystrix/metricsstream"
	"github.com/rxhystrix/rxhystrix/observable"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// fakeHealth is a HealthSource whose snapshots the test chooses. It
// records subscriptions and ResetStream calls.
type fakeHealth struct {
	mu          sync.Mutex
	observers   map[int]fakeSubscriber
	next        int
	subscribes  int
	resets      int
	onReset     func() // called by ResetStream, without the lock
	onSubscribe func(o observable.Observer[metricsstream.HealthCounts])
}

func newFakeHealth() *fakeHealth {
	return &fakeHealth{observers: make(map[int]fakeSubscriber)}
}

type fakeSubscriber struct {
	ctx context.Context
	o   observable.Observer[metricsstream.HealthCounts]
}

func (f *fakeHealth) HealthStream() observable.Observable[metricsstream.HealthCounts] {
	return observable.Create(func(ctx context.Context, o observable.Observer[metricsstream.HealthCounts]) {
		f.mu.Lock()
		id := f.next
		f.next++
		f.subscribes++
		f.observers[id] = fakeSubscriber{ctx, o}
		hook := f.onSubscribe
		f.mu.Unlock()
		context.AfterFunc(ctx, func() {
			f.mu.Lock()
			delete(f.observers, id)
			f.mu.Unlock()
		})
		if hook != nil {
			hook(o)
		}
	})
}

func (f *fakeHealth) ResetStream() {
	f.mu.Lock()
	f.resets++
	hook := f.onReset
	f.mu.Unlock()
	if hook != nil {
		hook()
	}
}

// emit sends hc to every live subscriber, as a health-snapshot tick.
func (f *fakeHealth) emit(hc metricsstream.HealthCounts) {
	f.mu.Lock()
	obs := make([]observable.Observer[metricsstream.HealthCounts], 0, len(f.observers))
	for _, s := range f.observers {
		obs = append(obs, s.o)
	}
	f.mu.Unlock()
	for _, o := range obs {
		o.OnNext(hc)
	}
}

// live returns how many subscriptions have not ended.
func (f *fakeHealth) live() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, s := range f.observers {
		if s.ctx.Err() == nil {
			n++
		}
	}
	return n
}

func (f *fakeHealth) resetCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.resets
}

func (f *fakeHealth) subscribeCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.subscribes
}

// health returns the snapshot of a window holding the given outcomes,
// computed as Hystrix's HealthCounts does: successes, failures and
// timeouts count toward Total; failures and timeouts are errors; the
// percentage is rounded down.
func health(successes, failures, timeouts int) metricsstream.HealthCounts {
	total := int64(successes + failures + timeouts)
	errs := int64(failures + timeouts)
	pct := 0
	if total > 0 {
		pct = int(float64(errs) / float64(total) * 100)
	}
	return metricsstream.HealthCounts{Total: total, Errors: errs, ErrorPercentage: pct}
}

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// newBreaker returns a breaker on a manual clock fed by a fakeHealth; it
// is closed when the test ends.
func newBreaker(t testing.TB, cfg breaker.Config, opts ...breaker.Option) (*breaker.Breaker, *fakeHealth, *clock.Manual) {
	t.Helper()
	clk := clock.NewManual(epoch)
	h := newFakeHealth()
	b := breaker.New(cfg, h, append([]breaker.Option{breaker.WithClock(clk)}, opts...)...)
	t.Cleanup(b.Close)
	return b, h, clk
}

// hystrixTestConfig is the configuration of Hystrix's
// HystrixCircuitBreakerTest: volume threshold 1, error threshold 40%,
// sleep window 200ms.
var hystrixTestConfig = breaker.Config{
	RequestVolumeThreshold:   1,
	ErrorThresholdPercentage: 40,
	SleepWindow:              200 * time.Millisecond,
}

// collect subscribes to b's transitions and returns a function that
// closes b and returns every transition it published.
func collect(t testing.TB, b *breaker.Breaker) func() []breaker.Transition {
	t.Helper()
	var (
		mu  sync.Mutex
		got []breaker.Transition
	)
	sub := b.Transitions().SubscribeFunc(context.Background(), func(tr breaker.Transition) {
		mu.Lock()
		got = append(got, tr)
		mu.Unlock()
	}, nil, nil)
	return func() []breaker.Transition {
		b.Close()
		select {
		case <-sub.Done():
		case <-time.After(10 * time.Second):
			t.Fatal("transitions did not complete after Close")
		}
		mu.Lock()
		defer mu.Unlock()
		return got
	}
}
