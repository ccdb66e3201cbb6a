package command

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/rxhystrix/rxhystrix/observable"
)

// An execution that Observe or Queue handed over, whose context ended
// before anything started it, is CANCELLED, as it is when a subscriber or
// a Get with a context that can end starts it (core.subscribe): a waiter
// whose context cannot end, which would take the work over, must not make
// it vanish from the metrics instead.
func TestHandedOverExecutionCancelledBeforeItStartsIsCancelled(t *testing.T) {
	waits := []struct {
		name string
		ctx  func(t *testing.T) context.Context
	}{
		{"waiter that cannot end", func(*testing.T) context.Context { return context.Background() }},
		{"waiter that can end", func(t *testing.T) context.Context {
			ctx, cancel := context.WithCancel(context.Background())
			t.Cleanup(cancel)
			return ctx
		}},
	}
	for _, iso := range bothIsolations {
		for _, w := range waits {
			t.Run(iso.String()+"/Observe.First/"+w.name, func(t *testing.T) {
				holdStarts(t)
				h := newHarness(t)
				ran := make(chan struct{}, 4)
				c := New("GetUser", func(ctx context.Context, id int) (string, error) {
					ran <- struct{}{}
					return userName(id), nil
				}, WithRegistry(h.reg), WithConfig(Config{Isolation: iso, Timeout: -1}))
				ctx, cancel := context.WithCancel(context.Background())
				hot := c.Observe(ctx, 1)
				cancel()
				_, err := hot.First(w.ctx(t))
				assert.ErrorIs(t, err, context.Canceled)
				assert.Equal(t, evs("CANCELLED"), h.events())
				assert.Empty(t, ran, "run never started")
				h.assertReleased("GetUser")
				h.noMoreCompletions()
			})
		}
	}
}

// First of ToObservable whose context has ended, subscribed with a live
// one, runs nothing and fails with that context's error, as Execute does
// with it: a context that has ended is not one run may start under.
func TestFirstOfToObservableWhoseContextEndedRunsNothing(t *testing.T) {
	deadlined, cancelD := context.WithDeadline(context.Background(), harnessStart)
	defer cancelD()
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, cmdCtx := range []context.Context{cancelled, deadlined} {
		for _, iso := range bothIsolations {
			t.Run(iso.String()+"/"+cmdCtx.Err().Error(), func(t *testing.T) {
				h := newHarness(t)
				ran := make(chan struct{}, 4)
				c := New("GetUser", func(ctx context.Context, id int) (string, error) {
					ran <- struct{}{}
					return userName(id), nil
				}, WithRegistry(h.reg), WithConfig(Config{Isolation: iso}))
				_, err := c.Execute(cmdCtx, 1)
				assert.ErrorIs(t, err, cmdCtx.Err(), "Execute")
				_, err = c.ToObservable(cmdCtx, 1).First(context.Background())
				assert.ErrorIs(t, err, cmdCtx.Err(), "First")
				assert.Empty(t, ran, "run never started")
				h.noMoreCompletions()

				oc := NewObservable("Stream", func(ctx context.Context, id int) observable.Observable[string] {
					ran <- struct{}{}
					return observable.Just(userName(id))
				}, WithRegistry(h.reg), WithConfig(Config{Isolation: iso, Timeout: -1}))
				_, err = oc.ToObservable(cmdCtx, 1).First(context.Background())
				assert.ErrorIs(t, err, cmdCtx.Err(), "First of an ObservableCommand")
				assert.Empty(t, ran, "construct never called")
				h.noMoreCompletions()
			})
		}
	}
}
