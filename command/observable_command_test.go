package command

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	ms "github.com/rxhystrix/rxhystrix/metricsstream"
	"github.com/rxhystrix/rxhystrix/observable"
)

// obsModeOf is one way of executing an ObservableCommand, collecting
// every value.
type obsModeOf[Out any] struct {
	name string
	exec func(ctx context.Context, c *ObservableCommand[int, Out], in int) ([]Out, error)
}

// obsMode is the mode of the tests' usual ObservableCommand[int, bool].
type obsMode = obsModeOf[bool]

// obsModesOf are the ways of executing an ObservableCommand that collect
// its values.
func obsModesOf[Out any]() []obsModeOf[Out] {
	return []obsModeOf[Out]{
		{"Execute", func(ctx context.Context, c *ObservableCommand[int, Out], in int) ([]Out, error) {
			return c.Execute(ctx, in)
		}},
		{"ToObservable.ToSlice", func(ctx context.Context, c *ObservableCommand[int, Out], in int) ([]Out, error) {
			return c.ToObservable(ctx, in).ToSlice(ctx)
		}},
		{"Queue.Get", func(ctx context.Context, c *ObservableCommand[int, Out], in int) ([]Out, error) {
			return c.Queue(ctx, in).Get(ctx)
		}},
		{"Observe.ToSlice", func(ctx context.Context, c *ObservableCommand[int, Out], in int) ([]Out, error) {
			return c.Observe(ctx, in).ToSlice(ctx)
		}},
	}
}

var obsModes = obsModesOf[bool]()

// forEachObsMode runs f for every way of executing an ObservableCommand
// under both isolations.
func forEachObsMode(t *testing.T, f func(t *testing.T, h *harness, m obsMode, iso Isolation)) {
	for _, iso := range bothIsolations {
		for _, m := range obsModes {
			t.Run(iso.String()+"/"+m.name, func(t *testing.T) { f(t, newHarness(t), m, iso) })
		}
	}
}

// 52: an observable command emits every value, recorded as EMIT, then
// SUCCESS; it is semaphore-isolated unless told otherwise.
func TestExecutionSuccessWithMultipleEvents(t *testing.T) {
	forEachObsMode(t, func(t *testing.T, h *harness, m obsMode, iso Isolation) {
		c := NewObservable("Stream", func(ctx context.Context, in int) observable.Observable[bool] {
			return observable.Just(true, false, true)
		}, WithRegistry(h.reg), WithConfig(Config{Isolation: iso}))
		values, err := m.exec(context.Background(), c, 1)
		require.NoError(t, err)
		assert.Equal(t, []bool{true, false, true}, values)
		done := h.completion()
		assert.Equal(t, evs("EMIT", "EMIT", "EMIT", "SUCCESS"), eventNames(done.Events))
		assert.Equal(t, 3, done.Events.Count(ms.Emit))
		h.assertReleased("Stream")
	})
}

// 52: the default isolation of an observable command is the semaphore.
func TestObservableCommandIsSemaphoreIsolatedByDefault(t *testing.T) {
	h := newHarness(t)
	c := NewObservable("Stream", func(ctx context.Context, in int) observable.Observable[bool] {
		return observable.Just(true)
	}, WithRegistry(h.reg))
	cfg, ok := h.reg.Config("Stream")
	require.True(t, ok)
	assert.Equal(t, SemaphoreIsolation, cfg.Isolation)
	_, err := c.Execute(context.Background(), 1)
	require.NoError(t, err)
	assert.Empty(t, h.completion().PoolKey)
	assert.Equal(t, "Stream", c.Key())
	assert.Same(t, h.state("Stream").metrics, c.Metrics())
	assert.Same(t, h.state("Stream").breaker, c.Breaker())
}

// 53: values then an error, with no fallback: the subscriber gets the
// values, then the *Error.
func TestExecutionPartialSuccess(t *testing.T) {
	for _, iso := range bothIsolations {
		t.Run(iso.String(), func(t *testing.T) {
			h := newHarness(t)
			c := NewObservable("Stream", func(ctx context.Context, in int) observable.Observable[bool] {
				return observable.Concat(observable.Just(false, true, false), observable.Error[bool](errBoom))
			}, WithRegistry(h.reg), WithConfig(Config{Isolation: iso}))
			values, err := subscribeAll(context.Background(), c.ToObservable(context.Background(), 1)).wait(t)
			assert.Equal(t, []bool{false, true, false}, values)
			assertCommandError(t, err, "Stream", CommandFailure, errBoom, ErrFallbackMissing)
			assert.Equal(t, evs("EMIT", "EMIT", "EMIT", "FAILURE", "FALLBACK_MISSING"), h.events())

			values, err = c.Execute(context.Background(), 1)
			assert.Equal(t, []bool{false, true, false}, values, "Execute returns the values received before the error")
			assert.ErrorIs(t, err, errBoom)
			h.completion()
			h.assertReleased("Stream")
		})
	}
}

// 54: values, an error, then the fallback's values: the subscriber gets
// all of them and no error.
func TestExecutionPartialSuccessWithFallback(t *testing.T) {
	for _, iso := range bothIsolations {
		t.Run(iso.String(), func(t *testing.T) {
			h := newHarness(t)
			var seen error
			c := NewObservable("Stream", func(ctx context.Context, in int) observable.Observable[bool] {
				return observable.Concat(observable.Just(false, true, false), observable.Error[bool](errBoom))
			}, WithRegistry(h.reg), WithConfig(Config{Isolation: iso})).WithFallbackObservable(func(ctx context.Context, in int, err error) observable.Observable[bool] {
				seen = err
				return observable.Just(true, false, true, false)
			})
			values, err := subscribeAll(context.Background(), c.ToObservable(context.Background(), 1)).wait(t)
			require.NoError(t, err)
			assert.Equal(t, []bool{false, true, false, true, false, true, false}, values)
			assertCommandError(t, seen, "Stream", CommandFailure, errBoom, nil)
			assert.Equal(t, evs("EMIT", "EMIT", "EMIT", "FAILURE",
				"FALLBACK_EMIT", "FALLBACK_EMIT", "FALLBACK_EMIT", "FALLBACK_EMIT", "FALLBACK_SUCCESS"), h.events())
			h.assertReleased("Stream")
		})
	}
}

// 55: under semaphore isolation construct runs, and the values arrive, on
// the subscribing goroutine, within Subscribe; under pool isolation on a
// worker.
func TestObserveOnImmediateSchedulerByDefaultForSemaphoreIsolation(t *testing.T) {
	for _, iso := range bothIsolations {
		t.Run(iso.String(), func(t *testing.T) {
			h := newHarness(t)
			var constructOn, emitOn int64
			c := NewObservable("Stream", func(ctx context.Context, in int) observable.Observable[bool] {
				constructOn = goroutineID()
				return observable.Just(true)
			}, WithRegistry(h.reg), WithConfig(Config{Isolation: iso}))
			values := make(chan int64, 1)
			c.ToObservable(context.Background(), 1).SubscribeFunc(context.Background(),
				func(bool) { emitOn = goroutineID(); values <- emitOn }, nil, nil)
			recv(t, values, "the value")
			h.completion()
			if iso == SemaphoreIsolation {
				assert.Equal(t, goroutineID(), constructOn)
				assert.Equal(t, goroutineID(), emitOn)
			} else {
				assert.NotEqual(t, goroutineID(), constructOn)
				assert.Equal(t, constructOn, emitOn)
			}
		})
	}
}

// 56: failures go to the fallback's values until the breaker opens; then
// the fallback answers without construct being called.
func TestCircuitBreakerTripsAfterFailures(t *testing.T) {
	forEachObsMode(t, func(t *testing.T, h *harness, m obsMode, iso Isolation) {
		constructs := 0
		c := NewObservable("Stream", func(ctx context.Context, in int) observable.Observable[bool] {
			constructs++
			return observable.Error[bool](errBoom)
		}, WithRegistry(h.reg), WithConfig(Config{Isolation: iso, Breaker: tripAfterThree})).WithFallbackObservable(func(ctx context.Context, in int, err error) observable.Observable[bool] {
			return observable.Just(false)
		})
		for range 3 {
			values, err := m.exec(context.Background(), c, 1)
			require.NoError(t, err)
			assert.Equal(t, []bool{false}, values)
			assert.Equal(t, evs("FAILURE", "FALLBACK_EMIT", "FALLBACK_SUCCESS"), h.events())
		}
		h.clock.Advance(snapshotInterval(h.reg, "Stream"))
		require.True(t, c.Breaker().IsOpen())
		values, err := m.exec(context.Background(), c, 1)
		require.NoError(t, err)
		assert.Equal(t, []bool{false}, values)
		assert.Equal(t, evs("SHORT_CIRCUITED", "FALLBACK_EMIT", "FALLBACK_SUCCESS"), h.events())
		assert.Equal(t, 3, constructs)
	})
}

// A scalar fallback (WithFallback) serves an observable command too: one
// value.
func TestObservableCommandWithScalarFallback(t *testing.T) {
	forEachObsMode(t, func(t *testing.T, h *harness, m obsMode, iso Isolation) {
		c := NewObservable("Stream", func(ctx context.Context, in int) observable.Observable[bool] {
			return observable.Error[bool](errBoom)
		}, WithRegistry(h.reg), WithConfig(Config{Isolation: iso})).WithFallback(func(ctx context.Context, in int, err error) (bool, error) { return true, nil })
		values, err := m.exec(context.Background(), c, 1)
		require.NoError(t, err)
		assert.Equal(t, []bool{true}, values)
		assert.Equal(t, evs("FAILURE", "FALLBACK_EMIT", "FALLBACK_SUCCESS"), h.events())
	})
}

// A source that emits from a goroutine of its own, under a caller's
// context that can be cancelled: every value arrives and the execution
// completes, under both isolations.
func TestObservableCommandAsynchronousSource(t *testing.T) {
	forEachObsMode(t, func(t *testing.T, h *harness, m obsMode, iso Isolation) {
		c := NewObservable("Stream", func(ctx context.Context, n int) observable.Observable[bool] {
			return observable.Create(func(ctx context.Context, o observable.Observer[bool]) {
				go func() {
					for i := range n {
						o.OnNext(i%2 == 0)
					}
					o.OnCompleted()
				}()
			})
		}, WithRegistry(h.reg), WithConfig(Config{Isolation: iso}))
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		call := goCall(func() ([]bool, error) { return m.exec(ctx, c, 3) })
		res := awaitCall(t, call)
		require.NoError(t, res.err)
		assert.Equal(t, []bool{true, false, true}, res.v)
		assert.Equal(t, evs("EMIT", "EMIT", "EMIT", "SUCCESS"), h.events())
		h.assertReleased("Stream")
	})
}

// A stream that fails after its first value fails, however late: the
// value disarmed the timeout, so its deadline passing neither ends the
// stream's context nor makes its failure a TIMEOUT.
func TestObservableCommandFailureAfterTheTimeoutsTimeIsAFailure(t *testing.T) {
	for _, iso := range bothIsolations {
		t.Run(iso.String(), func(t *testing.T) {
			h := newHarness(t)
			running, fail := make(chan context.Context, 1), make(chan struct{})
			c := NewObservable("Late", func(context.Context, int) observable.Observable[bool] {
				return observable.Create(func(ctx context.Context, o observable.Observer[bool]) {
					o.OnNext(true)
					running <- ctx
					select {
					case <-fail:
						o.OnError(errBoom)
					case <-ctx.Done():
						o.OnError(ctx.Err())
					}
				})
			}, WithRegistry(h.reg), WithConfig(Config{Isolation: iso, Timeout: 70 * time.Millisecond}))
			call := goCall(func() ([]bool, error) { return c.Execute(context.Background(), 1) })
			runCtx := recv(t, running, "the first value")
			h.clock.Advance(time.Second)
			require.NoError(t, runCtx.Err(), "the stream's context after its deadline's time")
			close(fail)
			res := awaitCall(t, call)
			assert.Equal(t, []bool{true}, res.v)
			assertCommandError(t, res.err, "Late", CommandFailure, errBoom, ErrFallbackMissing)
			assert.Equal(t, evs("EMIT", "FAILURE", "FALLBACK_MISSING"), h.events())
			h.assertReleased("Late")
		})
	}
}

// Hystrix's timeout operator: the first value disarms the timeout, so a
// stream that has started may run past it; a stream that emits nothing in
// time times out.
func TestObservableCommandTimeoutDisarmedByFirstValue(t *testing.T) {
	for _, iso := range bothIsolations {
		t.Run(iso.String(), func(t *testing.T) {
			h := newHarness(t)
			more := make(chan bool)
			c := NewObservable("Stream", func(ctx context.Context, first int) observable.Observable[bool] {
				return observable.Create(func(ctx context.Context, o observable.Observer[bool]) {
					go func() {
						if first > 0 {
							o.OnNext(true)
						}
						for v := range more {
							o.OnNext(v)
						}
						o.OnCompleted()
					}()
				})
			}, WithRegistry(h.reg), WithConfig(Config{Isolation: iso, Timeout: time.Second}))
			started := subscribeAll(context.Background(), c.ToObservable(context.Background(), 1))
			waitFor(t, "the first value", func() bool {
				started.mu.Lock()
				defer started.mu.Unlock()
				return len(started.values) == 1
			})
			h.clock.Advance(time.Hour)
			more <- false
			close(more)
			values, err := started.wait(t)
			require.NoError(t, err)
			assert.Equal(t, []bool{true, false}, values)
			assert.Equal(t, evs("EMIT", "EMIT", "SUCCESS"), h.events())

			more = make(chan bool)
			defer close(more)
			timers := h.clock.Pending()
			silent := goCall(func() ([]bool, error) { return c.ToObservable(context.Background(), 0).ToSlice(context.Background()) })
			waitFor(t, "the timeout to be armed", func() bool { return h.clock.Pending() > timers })
			h.clock.Advance(time.Second)
			res := awaitCall(t, silent)
			assertCommandError(t, res.err, "Stream", TimeoutFailure, ErrTimeout, ErrFallbackMissing)
			assert.Equal(t, evs("TIMEOUT", "FALLBACK_MISSING"), h.events())
		})
	}
}

// A panic in construct, or while its Observable is subscribed, is a
// FAILURE with a *PanicError cause, under both isolations.
func TestObservableCommandPanics(t *testing.T) {
	cases := map[string]func(ctx context.Context, in int) observable.Observable[bool]{
		"construct": func(ctx context.Context, in int) observable.Observable[bool] { panic("construct broke") },
		"subscribe": func(ctx context.Context, in int) observable.Observable[bool] {
			return observable.Create(func(ctx context.Context, o observable.Observer[bool]) { panic("source broke") })
		},
	}
	for name, construct := range cases {
		t.Run(name, func(t *testing.T) {
			forEachObsMode(t, func(t *testing.T, h *harness, m obsMode, iso Isolation) {
				c := NewObservable("Stream", construct, WithRegistry(h.reg), WithConfig(Config{Isolation: iso}))
				_, err := m.exec(context.Background(), c, 1)
				ce := assertCommandError(t, err, "Stream", CommandFailure, nil, ErrFallbackMissing)
				var pe *PanicError
				assert.ErrorAs(t, ce.Cause, &pe)
				assert.Equal(t, evs("FAILURE", "FALLBACK_MISSING"), h.events())
				h.assertReleased("Stream")
			})
		})
	}
}

// A panic while the fallback's Observable is subscribed is a
// FALLBACK_FAILURE with a *PanicError, under both isolations.
func TestObservableCommandFallbackPanics(t *testing.T) {
	forEachObsMode(t, func(t *testing.T, h *harness, m obsMode, iso Isolation) {
		c := NewObservable("Stream", func(ctx context.Context, in int) observable.Observable[bool] {
			return observable.Error[bool](errBoom)
		}, WithRegistry(h.reg), WithConfig(Config{Isolation: iso})).WithFallbackObservable(func(ctx context.Context, in int, err error) observable.Observable[bool] {
			return observable.Create(func(ctx context.Context, o observable.Observer[bool]) { panic("fallback source broke") })
		})
		_, err := m.exec(context.Background(), c, 1)
		var ce *Error
		require.ErrorAs(t, err, &ce)
		assert.Same(t, errBoom, ce.Cause)
		var pe *PanicError
		require.ErrorAs(t, ce.FallbackErr, &pe)
		assert.Equal(t, "fallback source broke", pe.Value)
		assert.Equal(t, evs("FAILURE", "FALLBACK_FAILURE"), h.events())
		h.assertReleased("Stream")
	})
}

// A panic downstream of an ObservableCommand's stream (in a function
// given to an operator, or in the subscriber's OnNext) is the
// subscriber's, not the user's Observable's: it propagates to the
// subscriber's goroutine, as observable's doc says a panic in an
// operator's function does, and as it does over a plain Observable. It is
// not recorded as the command's FAILURE (which the breaker would count),
// and the execution ends, CANCELLED, with its permits back, rather than
// stay running with a terminal event nobody will tell.
func TestPanicDownstreamOfAnObservableCommandIsTheSubscribers(t *testing.T) {
	for _, tc := range []struct {
		name string
		body func(ctx context.Context, _ int) observable.Observable[int]
		fb   bool
		want []string
	}{
		{"stream", func(ctx context.Context, _ int) observable.Observable[int] { return observable.Just(1, 2, 3) }, false,
			evs("EMIT", "EMIT", "CANCELLED")},
		{"single", func(ctx context.Context, _ int) observable.Observable[int] {
			return observable.FromFunc(func(context.Context) (int, error) { return 2, nil })
		}, false, evs("EMIT", "CANCELLED")},
		{"fallback", func(ctx context.Context, _ int) observable.Observable[int] { return observable.Error[int](errBoom) }, true,
			evs("FAILURE", "FALLBACK_EMIT", "FALLBACK_EMIT", "CANCELLED")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			c := NewObservable("Obs", tc.body, WithRegistry(h.reg))
			if tc.fb {
				c = c.WithFallbackObservable(func(ctx context.Context, _ int, _ error) observable.Observable[int] { return observable.Just(1, 2, 3) })
			}
			var recovered any
			done := make(chan struct{})
			go func() {
				defer close(done)
				defer func() { recovered = recover() }()
				_, _ = observable.Map(c.ToObservable(context.Background(), 1), func(v int) int {
					if v == 2 {
						panic("mapper")
					}
					return v
				}).ToSlice(context.Background())
			}()
			recv(t, done, "the subscriber to return")
			assert.Equal(t, "mapper", recovered, "the subscriber's panic reaches its goroutine")
			assert.Equal(t, tc.want, h.events(), "no FAILURE (nor FALLBACK_FAILURE) for the subscriber's panic")
			h.assertReleased("Obs")
			h.noMoreCompletions()
		})
	}
}

// A panic in the subscriber's OnCompleted or OnError, told by an
// ObservableCommand's execution, is the subscriber's, as one in its OnNext
// is: it propagates to the subscriber's goroutine rather than being taken
// for the user's Observable's panic (a *PanicError that nobody receives,
// the execution having ended) and swallowed.
func TestSubscriberTerminalPanicOfAnObservableCommandIsTheSubscribers(t *testing.T) {
	for _, tc := range []struct {
		name string
		body func(ctx context.Context, _ int) observable.Observable[int]
		fb   bool
		want []string
		p    string
	}{
		{"completed", func(ctx context.Context, _ int) observable.Observable[int] { return observable.Just(1, 2) }, false,
			evs("EMIT", "EMIT", "SUCCESS"), "OnCompleted"},
		{"single", func(ctx context.Context, _ int) observable.Observable[int] {
			return observable.FromFunc(func(context.Context) (int, error) { return 2, nil })
		}, false, evs("EMIT", "SUCCESS"), "OnCompleted"},
		{"failed", func(ctx context.Context, _ int) observable.Observable[int] {
			return observable.Concat(observable.Just(1), observable.Error[int](errBoom))
		}, false, evs("EMIT", "FAILURE", "FALLBACK_MISSING"), "OnError"},
		{"fallback", func(ctx context.Context, _ int) observable.Observable[int] { return observable.Error[int](errBoom) }, true,
			evs("FAILURE", "FALLBACK_EMIT", "FALLBACK_SUCCESS"), "OnCompleted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			c := NewObservable("Obs", tc.body, WithRegistry(h.reg))
			if tc.fb {
				c = c.WithFallback(func(ctx context.Context, _ int, _ error) (int, error) { return 7, nil })
			}
			var recovered any
			done := make(chan struct{})
			go func() {
				defer close(done)
				defer func() { recovered = recover() }()
				c.ToObservable(context.Background(), 1).SubscribeFunc(context.Background(), nil,
					func(error) { panic("OnError") }, func() { panic("OnCompleted") })
			}()
			recv(t, done, "the subscriber to return")
			assert.Equal(t, tc.p, recovered, "the subscriber's panic reaches its goroutine")
			assert.Equal(t, tc.want, h.events())
			h.assertReleased("Obs")
			h.noMoreCompletions()
		})
	}
}
