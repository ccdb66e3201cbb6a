package command

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/observable"
)

// obsModesWithFirst are obsModes and First of ToObservable, which takes
// the first value without a subscription when it can.
var obsModesWithFirst = append(obsModes[:len(obsModes):len(obsModes)], obsMode{
	"ToObservable.First", func(ctx context.Context, c *ObservableCommand[int, bool], in int) ([]bool, error) {
		v, err := c.ToObservable(ctx, in).First(ctx)
		if err != nil {
			return nil, err
		}
		return []bool{v}, nil
	},
})

// flakyStream returns a construct whose first n Observables fail with
// errBoom before any value, and whose later ones emit true, false; it
// counts the Observables it makes.
func flakyStream(n int32, made *atomic.Int32) func(context.Context, int) observable.Observable[bool] {
	return func(context.Context, int) observable.Observable[bool] {
		if made.Add(1) <= n {
			return observable.Error[bool](errBoom)
		}
		return observable.Just(true, false)
	}
}

func TestObservableCommandRetriesAFailureBeforeItsFirstValue(t *testing.T) {
	for _, iso := range bothIsolations {
		for _, m := range obsModesWithFirst {
			t.Run(iso.String()+"/"+m.name, func(t *testing.T) {
				h, spy := newSpiedHarness(t)
				var made, fallbacks atomic.Int32
				c := NewObservable("Flaky", flakyStream(2, &made), WithRegistry(h.reg), WithConfig(Config{
					Isolation: iso,
					Timeout:   -1,
					Retry:     RetryConfig{MaxAttempts: 3, Backoff: exactBackoff},
				})).WithFallbackObservable(func(context.Context, int, error) observable.Observable[bool] {
					fallbacks.Add(1)
					return observable.Just(false)
				})
				call := goCall(func() ([]bool, error) { return m.exec(context.Background(), c, 1) })
				assert.Equal(t, evs("FAILURE"), h.events(), "no fallback while a retry follows")
				h.passBackoffs(spy, made.Load, 100*time.Millisecond, 200*time.Millisecond)
				res := awaitCall(t, call)
				require.NoError(t, res.err)
				want, events := []bool{true, false}, evs("EMIT", "EMIT", "SUCCESS", "RETRIED")
				if m.name == "ToObservable.First" {
					want, events = []bool{true}, evs("EMIT", "CANCELLED", "RETRIED")
				}
				assert.Equal(t, want, res.v)
				assert.Equal(t, events, h.events())
				assert.Zero(t, fallbacks.Load())
				h.noMoreCompletions()
				h.assertReleased("Flaky")
				// First leaves at the value: the attempt counts itself out
				// of the retry budget as its subscription ends, just after.
				waitFor(t, "no retry in flight", func() bool { return h.state("Flaky").retrying.Load() == 0 })
			})
		}
	}
}

func TestObservableCommandRunsTheFallbackOnceAfterTheLastAttempt(t *testing.T) {
	forEachObsMode(t, func(t *testing.T, h *harness, m obsMode, iso Isolation) {
		var made, fallbacks atomic.Int32
		c := NewObservable("Down", flakyStream(100, &made), WithRegistry(h.reg), WithConfig(Config{
			Isolation: iso,
			Timeout:   -1,
			Retry:     RetryConfig{MaxAttempts: 2, Backoff: exactBackoff},
		})).WithFallbackObservable(func(context.Context, int, error) observable.Observable[bool] {
			fallbacks.Add(1)
			return observable.Just(false)
		})
		call := goCall(func() ([]bool, error) { return m.exec(context.Background(), c, 1) })
		assert.Equal(t, evs("FAILURE"), h.events())
		h.stepUntil("the retry", func() bool { return made.Load() == 2 })
		res := awaitCall(t, call)
		require.NoError(t, res.err)
		assert.Equal(t, []bool{false}, res.v)
		assert.Equal(t, evs("FAILURE", "FALLBACK_EMIT", "FALLBACK_SUCCESS", "RETRIED"), h.events())
		assert.Equal(t, int32(1), fallbacks.Load())
		h.noMoreCompletions()
		assert.Zero(t, h.state("Down").retrying.Load(), "retries in flight")
	})
}

// An attempt that has emitted is not retried: its retry would emit the
// same values again. Its fallback follows them, as without retries.
func TestObservableCommandNeverRetriesAfterAValue(t *testing.T) {
	forEachObsMode(t, func(t *testing.T, h *harness, m obsMode, iso Isolation) {
		var made atomic.Int32
		c := NewObservable("Partial", func(context.Context, int) observable.Observable[bool] {
			made.Add(1)
			return observable.Concat(observable.Just(true), observable.Error[bool](errBoom))
		}, WithRegistry(h.reg), WithConfig(Config{
			Isolation: iso,
			Retry:     RetryConfig{MaxAttempts: 3, Backoff: exactBackoff},
		})).WithFallbackObservable(func(context.Context, int, error) observable.Observable[bool] {
			return observable.Just(false)
		})
		res := awaitCall(t, goCall(func() ([]bool, error) { return m.exec(context.Background(), c, 1) }))
		require.NoError(t, res.err)
		assert.Equal(t, []bool{true, false}, res.v, "no retry's backoff to wait for")
		assert.Equal(t, evs("EMIT", "FAILURE", "FALLBACK_EMIT", "FALLBACK_SUCCESS"), h.events())
		assert.Equal(t, int32(1), made.Load())
		h.noMoreCompletions()
	})
}

// A subscriber that leaves during a backoff ends the attempts there: no
// retry starts, and the retry budget gets its place back.
func TestObservableCommandLeavingDuringABackoffEndsTheAttempts(t *testing.T) {
	for _, iso := range bothIsolations {
		t.Run(iso.String(), func(t *testing.T) {
			h, spy := newSpiedHarness(t)
			var made atomic.Int32
			c := NewObservable("Leaving", flakyStream(100, &made), WithRegistry(h.reg), WithConfig(Config{
				Isolation: iso,
				Timeout:   -1,
				Retry:     RetryConfig{MaxAttempts: 3, Backoff: exactBackoff},
			})).WithFallbackObservable(func(context.Context, int, error) observable.Observable[bool] {
				return observable.Just(false)
			})
			ctx, cancel := context.WithCancel(context.Background())
			got := subscribeAll(ctx, c.ToObservable(context.Background(), 1))
			assert.Equal(t, evs("FAILURE"), h.events())
			recv(t, spy.armed, "the first backoff")
			h.clock.Advance(100 * time.Millisecond)
			assert.Equal(t, evs("FAILURE", "RETRIED"), h.events())
			recv(t, spy.armed, "the second backoff")
			cancel()
			recv(t, got.sub.Done(), "the end of the subscription")
			h.clock.Advance(time.Second)
			assert.Equal(t, int32(2), made.Load(), "no retry after the subscriber left")
			h.noMoreCompletions()
			assert.Zero(t, h.state("Leaving").retrying.Load(), "retries in flight")
		})
	}
}

// A stream has no single answer for hedges to race for: a Config that
// hedges a key an ObservableCommand executes is refused, naming the field.
func TestObservableCommandRefusesAConfigThatHedges(t *testing.T) {
	h := newHarness(t)
	hedged := Config{Hedge: HedgeConfig{MaxHedges: 1, Delay: time.Millisecond}}
	construct := func(context.Context, int) observable.Observable[bool] { return observable.Just(true) }
	assert.PanicsWithValue(t, `command: NewObservable("Hedged"): `+errHedgedStream.Error(), func() {
		NewObservable("Hedged", construct, WithRegistry(h.reg), WithConfig(hedged))
	})

	c := NewObservable("Stream", construct, WithRegistry(h.reg))
	err := h.reg.Configure("Stream", hedged)
	require.ErrorIs(t, err, errHedgedStream)
	assert.ErrorContains(t, err, "Config.Hedge")
	cfg, _ := h.reg.Config("Stream")
	assert.Zero(t, cfg.Hedge.MaxHedges, "the refused Config is not in force")
	require.NoError(t, h.reg.Configure("Stream", Config{Retry: RetryConfig{MaxAttempts: 2}}))
	_, err = c.Execute(context.Background(), 1)
	require.NoError(t, err)
	h.completion()

	// A key that hedges already makes no ObservableCommand.
	require.NoError(t, h.reg.Configure("Command", hedged))
	assert.Panics(t, func() { NewObservable("Command", construct, WithRegistry(h.reg)) })
}

// Under OneAttempt an ObservableCommand's stream is subscribed once.
func TestObservableCommandOneAttempt(t *testing.T) {
	forEachObsMode(t, func(t *testing.T, h *harness, m obsMode, iso Isolation) {
		var made atomic.Int32
		c := NewObservable("Once", flakyStream(100, &made), WithRegistry(h.reg), WithConfig(Config{
			Isolation: iso,
			Retry:     RetryConfig{MaxAttempts: 3, Backoff: exactBackoff},
		})).WithFallbackObservable(func(context.Context, int, error) observable.Observable[bool] {
			return observable.Just(false)
		})
		res := awaitCall(t, goCall(func() ([]bool, error) { return m.exec(OneAttempt(context.Background()), c, 1) }))
		require.NoError(t, res.err)
		assert.Equal(t, []bool{false}, res.v)
		assert.Equal(t, evs("FAILURE", "FALLBACK_EMIT", "FALLBACK_SUCCESS"), h.events())
		assert.Equal(t, int32(1), made.Load())
		h.noMoreCompletions()
	})
}
