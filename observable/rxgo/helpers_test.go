package rxgo_test

import (
	"context"
	"errors"
	"testing"
	"time"

	rx "github.com/reactivex/rxgo/v2"

	"github.com/rxhystrix/rxhystrix/observable"
)

var errBoom = errors.New("boom")

// drain reads every item of an rxgo observation.
func drain(ch <-chan rx.Item) (values []any, errs []error) {
	for item := range ch {
		if item.E != nil {
			errs = append(errs, item.E)
			continue
		}
		values = append(values, item.V)
	}
	return values, errs
}

// rxOf is an rxgo Observable of items as they are (rx.Just cannot emit
// nil).
func rxOf(items ...any) rx.Observable {
	return rx.Defer([]rx.Producer{func(ctx context.Context, next chan<- rx.Item) {
		for _, v := range items {
			rx.Of(v).SendContext(ctx, next)
		}
	}})
}

// endless returns a synchronous source that emits 0, 1, 2... for as long
// as its subscription's context is live, and a channel closed when it has
// stopped. It is for one subscription.
func endless() (observable.Observable[int], <-chan struct{}) {
	stopped := make(chan struct{})
	return observable.Create(func(ctx context.Context, o observable.Observer[int]) {
		defer close(stopped)
		for i := 0; ctx.Err() == nil; i++ {
			o.OnNext(i)
		}
	}), stopped
}

// async returns a source that emits vs from a goroutine of its own and
// then waits for its subscription's context to be done, and a channel
// closed when it has seen it done. It is for one subscription.
func async(vs ...int) (observable.Observable[int], <-chan struct{}) {
	stopped := make(chan struct{})
	return observable.Create(func(ctx context.Context, o observable.Observer[int]) {
		go func() {
			defer close(stopped)
			for _, v := range vs {
				o.OnNext(v)
			}
			<-ctx.Done()
		}()
	}), stopped
}

// waitClosed fails the test unless c is closed within a generous bound:
// it is for what should already have happened.
func waitClosed(t *testing.T, c <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-c:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: not done", what)
	}
}
