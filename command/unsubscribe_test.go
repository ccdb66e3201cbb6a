package command

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/observable"
)

// 47: unsubscribing while run runs records CANCELLED (and nothing else),
// cancels run's context, and gives back every permit and the
// concurrency. Under pool isolation Subscribe returns at once and the
// subscription is unsubscribed; under semaphore isolation it runs run on
// the subscribing goroutine, so the subscription's context is cancelled.
func TestEarlyUnsubscribeDuringExecutionViaToObservable(t *testing.T) {
	for _, iso := range bothIsolations {
		t.Run(iso.String(), func(t *testing.T) {
			h := newHarness(t)
			g := newGate()
			defer g.release()
			c := New("GetUser", g.runLate, WithRegistry(h.reg), WithConfig(Config{Isolation: iso})).WithFallback(fallbackName)
			subCtx, cancel := context.WithCancel(context.Background())
			defer cancel()
			subs := make(chan *collected[string], 1)
			go func() { subs <- subscribeAll(subCtx, c.ToObservable(context.Background(), 1)) }()
			runCtx := g.arrived(t)
			if iso == PoolIsolation {
				recv(t, subs, "Subscribe to return").sub.Unsubscribe()
			} else {
				cancel()
			}
			recv(t, runCtx.Done(), "run's context to be cancelled")
			done := h.completion()
			assert.Equal(t, evs("CANCELLED"), eventNames(done.Events))
			assert.True(t, done.Executed)
			h.assertReleased("GetUser")
			h.noMoreCompletions()
		})
	}
}

// The caller's context ending while run runs ends every way of executing
// with the context's error, cancels run's context and records CANCELLED,
// even when the subscriber's own context lives on (47 through Observe:
// the context given to Observe is the caller's).
func TestCallerContextCancelledDuringExecution(t *testing.T) {
	crossModes := []execMode{
		{"ToObservable(ctx).First(other)", func(ctx context.Context, c *Command[int, string], in int) (string, error) {
			return c.ToObservable(ctx, in).First(context.Background())
		}},
		{"Queue(ctx).Get(other)", func(ctx context.Context, c *Command[int, string], in int) (string, error) {
			return c.Queue(ctx, in).Get(context.Background())
		}},
		{"Observe(ctx).Last(other)", func(ctx context.Context, c *Command[int, string], in int) (string, error) {
			return c.Observe(ctx, in).Last(context.Background())
		}},
	}
	for _, iso := range bothIsolations {
		for _, m := range append(append([]execMode(nil), execModes...), crossModes...) {
			t.Run(iso.String()+"/"+m.name, func(t *testing.T) {
				h := newHarness(t)
				g := newGate()
				defer g.release()
				c := New("GetUser", g.runLate, WithRegistry(h.reg), WithConfig(Config{Isolation: iso})).WithFallback(fallbackName)
				ctx, cancel := context.WithCancel(context.Background())
				call := goCall(func() (string, error) { return m.exec(ctx, c, 1) })
				runCtx := g.arrived(t)
				cancel()
				recv(t, runCtx.Done(), "run's context to be cancelled")
				res := awaitCall(t, call)
				assert.ErrorIs(t, res.err, context.Canceled)
				assert.Empty(t, res.v, "no fallback for a caller who left")
				assert.Equal(t, evs("CANCELLED"), h.events())
				h.assertReleased("GetUser")
				h.noMoreCompletions()
			})
		}
	}
}

// 48: a caller that leaves while the fallback runs gives back the
// fallback's permit and ends the execution CANCELLED after the failure,
// whichever way it executes: the context's error to the caller, never
// FALLBACK_FAILURE with the context's error as the fallback's. As in
// Hystrix, the fallback itself is not interrupted: it has the caller's
// context, and its late value is dropped.
func TestEarlyUnsubscribeDuringFallback(t *testing.T) {
	forEachModeAndIsolation(t, func(t *testing.T, h *harness, m execMode, iso Isolation) {
		g := newGate()
		defer g.release()
		c := New("GetUser", failRun, WithRegistry(h.reg), WithConfig(Config{Isolation: iso})).WithFallback(func(ctx context.Context, id int, err error) (string, error) {
			return "late fallback", g.wait(ctx, true)
		})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		call := goCall(func() (string, error) { return m.exec(ctx, c, 1) })
		g.arrived(t)
		assert.Equal(t, int64(1), h.fallbackPermits("GetUser"))
		cancel()
		res := awaitCall(t, call)
		assert.ErrorIs(t, res.err, context.Canceled)
		var ce *Error
		assert.NotErrorAs(t, res.err, &ce, "the caller left: its context's error, not a fallback failure")
		assert.Equal(t, evs("FAILURE", "CANCELLED"), h.events())
		h.assertReleased("GetUser")
		g.release()
		h.noMoreCompletions()
	})
}

// First of an ObservableCommand whose caller leaves while the Observable
// fallback runs: CANCELLED and the caller's error, as through a
// subscription.
func TestObservableFirstCallerLeavingDuringFallbackIsCancelled(t *testing.T) {
	for _, iso := range bothIsolations {
		t.Run(iso.String(), func(t *testing.T) {
			h := newHarness(t)
			g := newGate()
			defer g.release()
			c := NewObservable("Stream", func(context.Context, int) observable.Observable[string] {
				return observable.Error[string](errBoom)
			}, WithRegistry(h.reg), WithConfig(Config{Isolation: iso, Timeout: -1})).WithFallback(func(ctx context.Context, _ int, _ error) (string, error) {
				return "late fallback", g.wait(ctx, true)
			})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			call := goCall(func() (string, error) { return c.ToObservable(ctx, 1).First(ctx) })
			g.arrived(t)
			cancel()
			res := awaitCall(t, call)
			assert.ErrorIs(t, res.err, context.Canceled)
			var ce *Error
			assert.NotErrorAs(t, res.err, &ce)
			assert.Equal(t, evs("FAILURE", "CANCELLED"), h.events())
			h.assertReleased("Stream")
			h.noMoreCompletions()
		})
	}
}

// 50: an operator downstream that stops at the value (Take(1), First)
// unsubscribes before completion, yet the execution is a SUCCESS, or a
// FALLBACK_SUCCESS: scalar commands record it on the value.
func TestUnsubscribingDownstreamOperatorStillResultsInSuccessEventType(t *testing.T) {
	for _, iso := range bothIsolations {
		t.Run(iso.String(), func(t *testing.T) {
			h := newHarness(t)
			ok := New("GetUser", succeedRun, WithRegistry(h.reg), WithConfig(Config{Isolation: iso}))
			values, err := subscribeAll(context.Background(), ok.ToObservable(context.Background(), 4).Take(1)).wait(t)
			require.NoError(t, err)
			assert.Equal(t, []string{"user-4"}, values)
			assert.Equal(t, evs("SUCCESS"), h.events())

			broken := New("GetOther", failRun, WithRegistry(h.reg), WithConfig(Config{Isolation: iso})).WithFallback(fallbackName)
			values, err = subscribeAll(context.Background(), broken.ToObservable(context.Background(), 4).Take(1)).wait(t)
			require.NoError(t, err)
			assert.Equal(t, []string{"anonymous"}, values)
			assert.Equal(t, evs("FAILURE", "FALLBACK_SUCCESS"), h.events())
			h.assertReleased("GetUser")
			h.assertReleased("GetOther")
		})
	}
}

// 45: cancelling a Future cancels run's context (Go's interruption); Get
// fails with context.Canceled and CANCELLED is recorded.
func TestCancelFutureWithInterruption(t *testing.T) {
	for _, iso := range bothIsolations {
		t.Run(iso.String(), func(t *testing.T) {
			h := newHarness(t)
			g := newGate()
			defer g.release()
			c := New("GetUser", g.runLate, WithRegistry(h.reg), WithConfig(Config{Isolation: iso})).WithFallback(fallbackName)
			f := c.Queue(context.Background(), 1)
			runCtx := g.arrived(t)
			f.Cancel()
			recv(t, runCtx.Done(), "run's context to be cancelled")
			_, err := f.Get(context.Background())
			assert.ErrorIs(t, err, context.Canceled)
			assert.Equal(t, evs("CANCELLED"), h.events())
			h.assertReleased("GetUser")
		})
	}
}

// A subscriber that leaves while a Command's fallback runs ends the
// fallback's context, as it ends run's, in every mode and isolation: a
// Future cancelled, a subscriber's context ended or its subscription
// unsubscribed, First's context ended,
// with the context given to ToObservable (or Queue, Observe) still live.
// The fallback gets the caller's values all the same.
func TestSubscriberLeavingEndsTheFallbacksContext(t *testing.T) {
	type key struct{}
	for _, iso := range bothIsolations {
		for _, mode := range []string{"Queue.Cancel", "ToObservable.Subscribe", "Observe.Unsubscribe", "First", "ToObservable.Map.First"} {
			for _, obsFallback := range []bool{false, true} {
				name := iso.String() + "/" + mode
				if obsFallback {
					name += "/WithFallbackObservable"
				}
				t.Run(name, func(t *testing.T) {
					h := newHarness(t)
					g := newGate()
					defer g.release()
					values, obsValues := make(chan any, 1), make(chan any, 1)
					c := New("GetUser", failRun, WithRegistry(h.reg), WithConfig(Config{Isolation: iso}))
					if obsFallback {
						c = c.WithFallbackObservable(func(ctx context.Context, _ int, _ error) observable.Observable[string] {
							values <- ctx.Value(key{})
							return observable.FromFunc(func(fctx context.Context) (string, error) {
								obsValues <- fctx.Value(key{})
								return "late fallback", g.wait(fctx, true)
							})
						})
					} else {
						c = c.WithFallback(func(ctx context.Context, _ int, _ error) (string, error) {
							values <- ctx.Value(key{})
							return "late fallback", g.wait(ctx, true)
						})
					}
					ctx := context.WithValue(context.Background(), key{}, "request")
					subCtx, cancelSub := context.WithCancel(context.Background())
					defer cancelSub()
					var leave func()
					var first, subscribed <-chan callResult[string]
					switch mode {
					case "Queue.Cancel":
						f := c.Queue(ctx, 1)
						_ = f.Done() // started now, not taken over by a Get
						leave = f.Cancel
					case "ToObservable.Subscribe":
						// Semaphore-isolated, Subscribe returns once the
						// fallback has: the subscriber leaves by its context.
						subscribed = goCall(func() (string, error) {
							c.ToObservable(ctx, 1).Subscribe(subCtx, ignore[string]{})
							return "", nil
						})
						leave = cancelSub
					case "Observe.Unsubscribe":
						sub := c.Observe(ctx, 1).Subscribe(subCtx, ignore[string]{})
						leave = sub.Unsubscribe
					case "First":
						first = goCall(func() (string, error) { return c.ToObservable(ctx, 1).First(subCtx) })
						leave = cancelSub
					case "ToObservable.Map.First":
						first = goCall(func() (string, error) {
							return observable.Map(c.ToObservable(ctx, 1), func(v string) string { return v }).First(subCtx)
						})
						leave = cancelSub
					}
					fbCtx := g.arrived(t)
					assert.Equal(t, "request", recv(t, values, "the fallback's values"), "the caller's values reach the fallback")
					if obsFallback {
						assert.Equal(t, "request", recv(t, obsValues, "the fallback Observable's values"), "and its Observable, subscribed")
					}
					leave()
					recv(t, fbCtx.Done(), "the fallback's context to end")
					if first != nil {
						assert.ErrorIs(t, awaitCall(t, first).err, context.Canceled)
					}
					if subscribed != nil {
						awaitCall(t, subscribed)
					}
					assert.Equal(t, evs("FAILURE", "CANCELLED"), h.events())
					h.assertReleased("GetUser")
					h.noMoreCompletions()
				})
			}
		}
	}
}
