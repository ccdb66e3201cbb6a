package command

import (
	"context"
	"errors"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/breaker"
	ms "github.com/rxhystrix/rxhystrix/metricsstream"
	"github.com/rxhystrix/rxhystrix/observable"
)

// obsModesWithFirstOf are obsModesOf and First of ToObservable, which
// takes the first value without a subscription when it can.
func obsModesWithFirstOf[Out any]() []obsModeOf[Out] {
	return append(obsModesOf[Out](), obsModeOf[Out]{
		"ToObservable.First", func(ctx context.Context, c *ObservableCommand[int, Out], in int) ([]Out, error) {
			v, err := c.ToObservable(ctx, in).First(ctx)
			if err != nil {
				return nil, err
			}
			return []Out{v}, nil
		},
	})
}

var obsModesWithFirst = obsModesWithFirstOf[bool]()

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
			// The retry was granted a place in the budget, which the
			// subscription's end gives back, on the goroutine that ends it.
			h.stepUntil("the retry's place given back", func() bool { return h.state("Leaving").retrying.Load() == 0 })
		})
	}
}

// A caller (the context ToObservable was given) that leaves during a
// backoff ends the subscription there, with its context's error, though
// its subscriber stays: no retry starts, and the retry budget gets its
// place back, as a Command's caller's leaving does
// (TestRetryCallerLeavingDuringABackoffEndsTheCall).
func TestObservableCommandCallerLeavingDuringABackoffEndsTheAttempts(t *testing.T) {
	for _, iso := range bothIsolations {
		t.Run(iso.String(), func(t *testing.T) {
			h, spy := newSpiedHarness(t)
			var made atomic.Int32
			c := NewObservable("CallerLeaves", flakyStream(100, &made), WithRegistry(h.reg), WithConfig(Config{
				Isolation: iso,
				Timeout:   -1,
				Retry:     RetryConfig{MaxAttempts: 3, Backoff: exactBackoff},
			})).WithFallbackObservable(func(context.Context, int, error) observable.Observable[bool] {
				return observable.Just(false)
			})
			caller, leave := context.WithCancel(context.Background())
			got := subscribeAll(context.Background(), c.ToObservable(caller, 1))
			assert.Equal(t, evs("FAILURE"), h.events())
			recv(t, spy.armed, "the first backoff")
			leave()
			vs, err := got.wait(t) // the clock stands still: the backoff has not passed
			assert.Empty(t, vs)
			assert.ErrorIs(t, err, context.Canceled)
			h.clock.Advance(time.Second)
			assert.Equal(t, int32(1), made.Load(), "no retry after the caller left")
			h.noMoreCompletions()
			h.stepUntil("the retry's place given back", func() bool { return h.state("CallerLeaves").retrying.Load() == 0 })
		})
	}
}

// A hedged subscription whose caller's deadline passes starts no hedge
// for nobody, though the first execution's failure (the caller's
// DeadlineExceeded) would start one if a hedge runs OnError: no second
// execution, Completion or place of the retry budget, as for a Command
// (TestHedgeStartsNoHedgeAfterTheCallerLeft).
func TestObservableCommandHedgeStartsNoHedgeAfterTheCallerLeft(t *testing.T) {
	for _, iso := range bothIsolations {
		t.Run(iso.String(), func(t *testing.T) {
			h := newHarness(t)
			var made atomic.Int32
			c := NewObservable("HedgeCallerLeaves", func(context.Context, int) observable.Observable[bool] {
				return observable.Create(func(ctx context.Context, o observable.Observer[bool]) {
					made.Add(1)
					<-ctx.Done()
					o.OnError(ctx.Err())
				})
			}, WithRegistry(h.reg), WithConfig(Config{
				Isolation: iso,
				Timeout:   -1,
				Hedge:     HedgeConfig{MaxHedges: 2, Delay: time.Hour, OnError: true},
			}))
			caller := newDeadlineCtx()
			call := goCall(func() ([]bool, error) {
				return c.ToObservable(caller, 1).ToSlice(context.Background())
			})
			waitFor(t, "the first execution", func() bool { return made.Load() == 1 })
			close(caller.done)
			res := <-call
			assert.ErrorIs(t, res.err, context.DeadlineExceeded)
			assert.Equal(t, evs("CANCELLED"), h.events(), "the first execution")
			h.noMoreCompletions()
			assert.Equal(t, int32(1), made.Load())
			waitFor(t, "the budget's places back", func() bool { return h.state("HedgeCallerLeaves").retrying.Load() == 0 })
		})
	}
}

// hedgedStreams returns a construct whose first Observable waits for
// fail and then fails, or for its context's end, and whose second waits
// for answer and then emits true, false, or fails with errBoom if
// hedgeFails, or for its context's end; it counts the Observables it
// makes.
func hedgedStreams(made *atomic.Int32, fail, answer <-chan struct{}, hedgeFails bool) func(context.Context, int) observable.Observable[bool] {
	return func(context.Context, int) observable.Observable[bool] {
		if made.Add(1) == 1 {
			return observable.Create(func(ctx context.Context, o observable.Observer[bool]) {
				select {
				case <-fail:
					o.OnError(errBoom)
				case <-ctx.Done():
					o.OnError(ctx.Err())
				}
			})
		}
		return observable.Create(func(ctx context.Context, o observable.Observer[bool]) {
			select {
			case <-answer:
			case <-ctx.Done():
				o.OnError(ctx.Err())
				return
			}
			if hedgeFails {
				o.OnError(errBoom)
				return
			}
			o.OnNext(true)
			o.OnNext(false)
			o.OnCompleted()
		})
	}
}

// closed is a channel that is closed.
var closed = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// A hedged ObservableCommand races its executions for the first value, as
// gRPC's hedged streams race for the first response: the hedge starts at
// the delay, the first execution to emit is the stream, and the other is
// cancelled, with one CANCELLED Completion.
func TestObservableCommandHedgeWinsByItsFirstValue(t *testing.T) {
	for _, iso := range bothIsolations {
		for _, m := range obsModesWithFirst {
			t.Run(iso.String()+"/"+m.name, func(t *testing.T) {
				h, spy := newSpiedHarness(t)
				var made atomic.Int32
				c := NewObservable("Tail", hedgedStreams(&made, nil, closed, false), WithRegistry(h.reg), WithConfig(Config{
					Isolation: iso,
					Timeout:   -1,
					Hedge:     HedgeConfig{MaxHedges: 1, Delay: 50 * time.Millisecond},
				}))
				call := goCall(func() ([]bool, error) { return m.exec(context.Background(), c, 1) })
				assert.Equal(t, 50*time.Millisecond, recv(t, spy.armed, "the hedge's timer"))
				waitFor(t, "the first execution", func() bool { return made.Load() == 1 })
				h.clock.Advance(50*time.Millisecond - 1)
				assert.Equal(t, int32(1), made.Load(), "no hedge before the delay")
				h.clock.Advance(1)
				res := awaitCall(t, call)
				require.NoError(t, res.err)
				want, winner := []bool{true, false}, evs("EMIT", "EMIT", "SUCCESS", "HEDGED")
				if m.name == "ToObservable.First" {
					want, winner = []bool{true}, evs("EMIT", "CANCELLED", "HEDGED")
				}
				assert.Equal(t, want, res.v)
				assert.ElementsMatch(t, [][]string{winner, evs("CANCELLED")}, [][]string{h.events(), h.events()},
					"the winner, and the first cancelled with one Completion")
				h.noMoreCompletions()
				h.assertReleased("Tail")
				waitFor(t, "no hedge in flight", func() bool { return h.state("Tail").retrying.Load() == 0 })
			})
		}
	}
}

// An execution that completes without a value while its hedge is in
// flight wins the race, as one that emits does: the stream is empty
// (First's error is ErrEmpty), and the hedge is cancelled.
func TestObservableCommandHedgeRaceEndsOnAnEmptyCompletion(t *testing.T) {
	for _, iso := range bothIsolations {
		for _, m := range obsModesWithFirst {
			t.Run(iso.String()+"/"+m.name, func(t *testing.T) {
				h := newHarness(t)
				var made atomic.Int32
				complete := make(chan struct{})
				c := NewObservable("Empty", func(context.Context, int) observable.Observable[bool] {
					first := made.Add(1) == 1
					return observable.Create(func(ctx context.Context, o observable.Observer[bool]) {
						if first {
							select {
							case <-complete:
								o.OnCompleted()
								return
							case <-ctx.Done():
							}
						}
						<-ctx.Done() // the hedge, until the race ends it
						o.OnError(ctx.Err())
					})
				}, WithRegistry(h.reg), WithConfig(Config{
					Isolation: iso,
					Timeout:   -1,
					Hedge:     HedgeConfig{MaxHedges: 1, Delay: 50 * time.Millisecond},
				}))
				call := goCall(func() ([]bool, error) { return m.exec(context.Background(), c, 1) })
				waitFor(t, "the first execution", func() bool { return made.Load() == 1 })
				h.stepUntil("the hedge", func() bool { return made.Load() == 2 })
				close(complete)
				res := awaitCall(t, call)
				if m.name == "ToObservable.First" {
					assert.ErrorIs(t, res.err, observable.ErrEmpty)
				} else {
					require.NoError(t, res.err)
					assert.Empty(t, res.v)
				}
				assert.ElementsMatch(t, [][]string{evs("SUCCESS"), evs("CANCELLED", "HEDGED")}, [][]string{h.events(), h.events()},
					"the empty execution, and the hedge cancelled")
				h.noMoreCompletions()
				h.assertReleased("Empty")
			})
		}
	}
}

// An execution that fails before its first value while a hedge is in
// flight runs no fallback: the hedge may still answer. The last one to
// fail runs the fallback, whose values are the stream.
func TestObservableCommandHedgeLeavesTheFallbackToTheLastFailure(t *testing.T) {
	for _, hedgeFails := range []bool{false, true} {
		forEachObsMode(t, func(t *testing.T, h *harness, m obsMode, iso Isolation) {
			var made, fallbacks atomic.Int32
			fail, answer := make(chan struct{}), make(chan struct{})
			c := NewObservable("Window", hedgedStreams(&made, fail, answer, hedgeFails), WithRegistry(h.reg), WithConfig(Config{
				Isolation: iso,
				Timeout:   -1,
				Hedge:     HedgeConfig{MaxHedges: 1, Delay: 50 * time.Millisecond},
			})).WithFallbackObservable(func(context.Context, int, error) observable.Observable[bool] {
				fallbacks.Add(1)
				return observable.Just(false)
			})
			call := goCall(func() ([]bool, error) { return m.exec(context.Background(), c, 1) })
			waitFor(t, "the first execution", func() bool { return made.Load() == 1 })
			h.stepUntil("the hedge", func() bool { return made.Load() == 2 })
			close(fail)
			assert.Equal(t, evs("FAILURE"), h.events(), "the first fails with no fallback")
			close(answer)
			res := awaitCall(t, call)
			require.NoError(t, res.err)
			if hedgeFails {
				assert.Equal(t, []bool{false}, res.v, "the last failure's fallback")
				assert.Equal(t, evs("FAILURE", "FALLBACK_EMIT", "FALLBACK_SUCCESS", "HEDGED"), h.events())
				assert.Equal(t, int32(1), fallbacks.Load())
			} else {
				assert.Equal(t, []bool{true, false}, res.v)
				assert.Equal(t, evs("EMIT", "EMIT", "SUCCESS", "HEDGED"), h.events())
				assert.Zero(t, fallbacks.Load())
			}
			h.noMoreCompletions()
			h.assertReleased("Window")
		})
	}
}

// Retries and hedges compose: a round whose executions all failed is
// retried, and the retry is a round of its own, hedged again.
func TestObservableCommandRetriesAHedgedRound(t *testing.T) {
	forEachObsMode(t, func(t *testing.T, h *harness, m obsMode, iso Isolation) {
		var made atomic.Int32
		c := NewObservable("Rounds", flakyStream(1, &made), WithRegistry(h.reg), WithConfig(Config{
			Isolation: iso,
			Timeout:   -1,
			Retry:     RetryConfig{MaxAttempts: 2, Backoff: exactBackoff},
			// Beyond where the clock's steps can reach before a slow
			// worker begins the retry: the rounds fail or answer first.
			Hedge: HedgeConfig{MaxHedges: 1, Delay: 24 * time.Hour},
		}))
		call := goCall(func() ([]bool, error) { return m.exec(context.Background(), c, 1) })
		assert.Equal(t, evs("FAILURE"), h.events(), "the first round's only execution failed before its hedge")
		h.stepUntil("the retry", func() bool { return made.Load() == 2 })
		res := awaitCall(t, call)
		require.NoError(t, res.err)
		assert.Equal(t, []bool{true, false}, res.v)
		assert.Equal(t, evs("EMIT", "EMIT", "SUCCESS", "RETRIED"), h.events(), "a retry, not a hedge")
		h.noMoreCompletions()
		assert.Zero(t, h.state("Rounds").retrying.Load(), "retries in flight")
	})
}

// A subscriber that leaves while a hedge and the execution it hedges both
// run ends both: each is CANCELLED, with its permit back, and the retry
// budget has their places again.
func TestObservableCommandLeavingEndsEveryHedge(t *testing.T) {
	for _, iso := range bothIsolations {
		t.Run(iso.String(), func(t *testing.T) {
			h := newHarness(t)
			var made atomic.Int32
			c := NewObservable("Leaving", hedgedStreams(&made, nil, nil, false), WithRegistry(h.reg), WithConfig(Config{
				Isolation: iso,
				Timeout:   -1,
				Hedge:     HedgeConfig{MaxHedges: 1, Delay: 50 * time.Millisecond},
			}))
			ctx, cancel := context.WithCancel(context.Background())
			subscribed := make(chan *collected[bool], 1)
			go func() { subscribed <- subscribeAll(ctx, c.ToObservable(context.Background(), 1)) }()
			waitFor(t, "the first execution", func() bool { return made.Load() == 1 })
			h.stepUntil("the hedge", func() bool { return made.Load() == 2 })
			cancel()
			got := recv(t, subscribed, "the subscription")
			recv(t, got.sub.Done(), "the end of the subscription")
			assert.ElementsMatch(t, [][]string{evs("CANCELLED"), evs("CANCELLED", "HEDGED")}, [][]string{h.events(), h.events()})
			h.noMoreCompletions()
			h.assertReleased("Leaving")
			waitFor(t, "no hedge in flight", func() bool { return h.state("Leaving").retrying.Load() == 0 })
		})
	}
}

// A subscription that leaves before its hedge's delay starts no hedge when
// the delay passes, and takes no place in the retry budget: leaving more
// often than the budget's floor leaves the next subscription its hedge.
func TestObservableCommandLeavingBeforeTheHedgesDelayStartsNoHedge(t *testing.T) {
	for _, iso := range bothIsolations {
		t.Run(iso.String(), func(t *testing.T) {
			h := newHarness(t)
			var made atomic.Int32
			waiting := func(context.Context, int) observable.Observable[bool] {
				made.Add(1)
				return observable.Create(func(ctx context.Context, o observable.Observer[bool]) {
					<-ctx.Done()
					o.OnError(ctx.Err())
				})
			}
			c := NewObservable("LeftEarly", waiting, WithRegistry(h.reg), WithConfig(Config{
				Isolation: iso,
				Timeout:   -1,
				Hedge:     HedgeConfig{MaxHedges: 1, Delay: 50 * time.Millisecond},
			}))
			for i := range DefaultRetryBudgetMinConcurrency + 1 {
				ctx, cancel := context.WithCancel(context.Background())
				call := goCall(func() ([]bool, error) { return c.Execute(ctx, 1) })
				waitFor(t, "the execution", func() bool { return made.Load() == int32(i+1) })
				cancel()
				res := awaitCall(t, call)
				require.ErrorIs(t, res.err, context.Canceled)
				assert.Equal(t, evs("CANCELLED"), h.events())
			}
			h.clock.Advance(50 * time.Millisecond)
			assert.Equal(t, int64(0), h.state("LeftEarly").retrying.Load(), "no place taken in the budget")
			assert.Equal(t, int32(DefaultRetryBudgetMinConcurrency+1), made.Load(), "no hedge started")
			h.noMoreCompletions()
			h.assertReleased("LeftEarly")
		})
	}
}

// What the losing execution of a hedged ObservableCommand gives once the
// hedge has won, and cancelled it, goes to WithDiscard's function.
func TestObservableCommandDiscardsTheHedgeLosersValue(t *testing.T) {
	for _, iso := range bothIsolations {
		t.Run(iso.String(), func(t *testing.T) {
			h := newHarness(t)
			var made atomic.Int32
			var firstRuns atomic.Bool
			var d discarded
			c := NewObservable("Loser", func(context.Context, int) observable.Observable[string] {
				first := made.Add(1) == 1
				return observable.FromFunc(func(ctx context.Context) (string, error) {
					if !first {
						return "hedge", nil
					}
					firstRuns.Store(true)
					<-ctx.Done() // cancelled when the hedge wins, it answers anyway
					return "first", nil
				})
			}, WithRegistry(h.reg), WithConfig(Config{
				Isolation: iso,
				Timeout:   -1,
				Hedge:     HedgeConfig{MaxHedges: 1, Delay: 50 * time.Millisecond},
			})).WithDiscard(d.discard)
			call := goCall(func() ([]string, error) { return c.Execute(context.Background(), 1) })
			// Once its function runs: an Observable cancelled before then
			// is never called, and has no value to discard.
			waitFor(t, "the first execution", func() bool { return firstRuns.Load() })
			h.clock.Advance(50 * time.Millisecond)
			res := awaitCall(t, call)
			require.NoError(t, res.err)
			assert.Equal(t, []string{"hedge"}, res.v)
			waitFor(t, "the loser's value discarded", func() bool { return len(d.values()) == 1 })
			assert.Equal(t, []string{"first"}, d.values())
		})
	}
}

// A bad request before the first value is the answer of a hedged
// ObservableCommand's race too, in every way of executing it: the
// execution that hangs is cancelled.
func TestObservableCommandHedgedBadRequestEndsTheRace(t *testing.T) {
	for _, iso := range bothIsolations {
		for _, m := range obsModesWithFirst {
			t.Run(iso.String()+"/"+m.name, func(t *testing.T) {
				h := newHarness(t)
				var made atomic.Int32
				c := NewObservable("Lookup", func(context.Context, int) observable.Observable[bool] {
					first := made.Add(1) == 1
					return observable.Create(func(ctx context.Context, o observable.Observer[bool]) {
						if first {
							<-ctx.Done() // hangs until the race ends it
							o.OnError(ctx.Err())
							return
						}
						o.OnError(BadRequest(errNoRows))
					})
				}, WithRegistry(h.reg), WithConfig(Config{
					Isolation: iso,
					Timeout:   -1,
					Hedge:     HedgeConfig{MaxHedges: 1, Delay: 50 * time.Millisecond},
				}))
				call := goCall(func() ([]bool, error) { return m.exec(context.Background(), c, 1) })
				waitFor(t, "the first execution", func() bool { return made.Load() == 1 })
				h.stepUntil("the hedge", func() bool { return made.Load() == 2 })
				res := awaitCall(t, call)
				require.ErrorIs(t, res.err, errNoRows)
				assert.True(t, IsBadRequest(res.err))
				assert.ElementsMatch(t, [][]string{evs("BAD_REQUEST", "HEDGED"), evs("CANCELLED")}, [][]string{h.events(), h.events()},
					"the hedge's bad request, and the first cancelled")
				h.noMoreCompletions()
				h.assertReleased("Lookup")
			})
		}
	}
}

// A hedge the timer started gives its place in the retry budget back
// even when the race ended before the hedge's goroutine subscribed to it
// (the first execution emitted at the same instant): a place never given
// back is a retry or hedge the key never makes again. One processor makes
// the hedge's goroutine wait behind the first's value, as a busy machine
// does.
func TestObservableCommandHedgeLosingBeforeItBeginsGivesItsPlaceBack(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	for _, iso := range bothIsolations {
		t.Run(iso.String(), func(t *testing.T) {
			h := newHarness(t)
			var made atomic.Int32
			c := NewObservable("HedgeLate", func(ctx context.Context, id int) observable.Observable[bool] {
				made.Add(1)
				return observable.Create(func(ctx context.Context, o observable.Observer[bool]) {
					// Due with the hedge, and after it: the value comes in the
					// same Advance, just after the timer started the hedge.
					h.clock.AfterFunc(50*time.Millisecond, func() {
						o.OnNext(true)
						o.OnCompleted()
					})
				})
			}, WithRegistry(h.reg), WithConfig(Config{
				Isolation: iso,
				Timeout:   -1,
				Hedge:     HedgeConfig{MaxHedges: 1, Delay: 50 * time.Millisecond},
			}))
			for i := range 20 {
				made.Store(0)
				got := subscribeAll(context.Background(), c.ToObservable(context.Background(), i))
				waitFor(t, "the first execution", func() bool { return made.Load() == 1 })
				h.clock.Advance(50 * time.Millisecond)
				vs, err := got.wait(t)
				require.NoError(t, err)
				require.Equal(t, []bool{true}, vs)
			}
			h.stepUntil("every hedge's place given back", func() bool { return h.state("HedgeLate").retrying.Load() == 0 })
		})
	}
}

// A retry granted to First's first attempt of an ObservableCommand holds
// a place in the key's retry budget; a subscriber that leaves before the
// retries are subscribed must not keep that place for ever, or a few such
// calls use the budget up and the key never retries again.
func TestObservableCommandFirstLeavingAfterARetryIsGrantedGivesItsPlaceBack(t *testing.T) {
	h, _ := newSpiedHarness(t)
	var made atomic.Int32
	c := NewObservable("LeavesAtOnce", flakyStream(100, &made), WithRegistry(h.reg), WithConfig(Config{
		Isolation: PoolIsolation, // First then makes its first attempt through call
		Timeout:   -1,
		Retry:     RetryConfig{MaxAttempts: 3, Backoff: exactBackoff},
	})).WithFallbackObservable(func(context.Context, int, error) observable.Observable[bool] {
		return observable.Just(false)
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The subscriber leaves just after the first attempt failed and was
	// granted its retry: as its Completion is published.
	publish := h.reg.onCompletion
	h.reg.onCompletion = func(c *ms.Completion) {
		publish(c)
		cancel()
	}
	_, err := c.ToObservable(context.Background(), 1).First(ctx)
	assert.True(t, errors.Is(err, context.Canceled), "got %v", err)
	assert.Equal(t, evs("FAILURE"), h.events())
	assert.Equal(t, int32(1), made.Load())
	h.stepUntil("the retry's place given back", func() bool { return h.state("LeavesAtOnce").retrying.Load() == 0 })
	require.Zero(t, h.state("LeavesAtOnce").retrying.Load())
}

// An ObservableCommand's hedged stream whose hedge wins a half-open
// breaker's trials by its first value: the first execution, which the
// race cancels, gives its trial back. (First cancels its winner too, as
// Hystrix's take(1) unsubscribes it: that trial fails, as in 1.5.13.)
func TestObservableCommandHedgeLoserGivesItsHalfOpenTrialBack(t *testing.T) {
	for _, iso := range bothIsolations {
		for _, m := range obsModesWithFirst {
			t.Run(iso.String()+"/"+m.name, func(t *testing.T) {
				h := newHarness(t)
				var failing atomic.Bool
				failing.Store(true)
				var made atomic.Int32
				streams := hedgedStreams(&made, nil, closed, false)
				c := NewObservable("Tail", func(ctx context.Context, in int) observable.Observable[bool] {
					if failing.Load() {
						return observable.Error[bool](errBoom)
					}
					return streams(ctx, in)
				}, WithRegistry(h.reg), WithConfig(Config{
					Isolation: iso,
					Timeout:   -1,
					Hedge:     HedgeConfig{MaxHedges: 1, Delay: 50 * time.Millisecond},
					Breaker:   breaker.Config{ConsecutiveFailures: 1, SleepWindow: 5 * time.Second, HalfOpenTrials: 2},
				}))
				_, err := m.exec(context.Background(), c, 1)
				require.Error(t, err)
				h.completion()
				require.Equal(t, breaker.Open, c.Breaker().State())
				h.clock.Advance(5*time.Second + 1)
				failing.Store(false)

				call := goCall(func() ([]bool, error) { return m.exec(context.Background(), c, 1) })
				waitFor(t, "the first execution", func() bool { return made.Load() == 1 })
				h.stepUntil("the hedge", func() bool { return made.Load() == 2 })
				res := awaitCall(t, call)
				require.NoError(t, res.err)
				h.completion()
				h.completion()
				want := breaker.HalfOpen
				if m.name == "ToObservable.First" {
					want = breaker.Open
				}
				assert.Equal(t, want, c.Breaker().State())
			})
		}
	}
}
