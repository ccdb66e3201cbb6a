package command

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/breaker"
	"github.com/rxhystrix/rxhystrix/internal/clock"
	ms "github.com/rxhystrix/rxhystrix/metricsstream"
	"github.com/rxhystrix/rxhystrix/observable"
)

// exactBackoff waits 100 ms, then 200 ms, 400 ms..., with no jitter.
var exactBackoff = observable.Backoff{Initial: 100 * time.Millisecond, Jitter: observable.NoJitter}

// timerSpy is a manual clock that tells the test of each wait a retry, a
// hedge or a rate limit arms, once it is armed, or only of the retries'
// if backoffsOnly; the other timers (health snapshots, pool sweeps) it
// arms silently. It is a value the clock's users may use as a map key.
type timerSpy struct {
	*clock.Manual
	armed        chan time.Duration
	backoffsOnly bool
}

// spies reports whether a timerSpy tells of a timer armed with fn on the
// stack: a backoff's only if backoffsOnly, the function that arms it
// itself, not a timer armed by a retry that its backoff's timer began.
func (s timerSpy) spies(fn string) bool {
	if s.backoffsOnly {
		return strings.HasSuffix(fn, "observable.(*retryWait).begin") || strings.HasSuffix(fn, "observable.sleep")
	}
	return slices.ContainsFunc([]string{"retryWait", "observable.sleep", "admitRate", "hedgeRace"},
		func(name string) bool { return strings.Contains(fn, name) })
}

func (s timerSpy) NewTimer(d time.Duration) clock.Timer {
	t := s.Manual.NewTimer(d)
	s.tell(d)
	return t
}

func (s timerSpy) AfterFunc(d time.Duration, f func()) clock.Timer {
	t := s.Manual.AfterFunc(d, f)
	s.tell(d)
	return t
}

func (s timerSpy) tell(d time.Duration) {
	pcs := make([]uintptr, 8)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(3, pcs)])
	for {
		f, more := frames.Next()
		if s.spies(f.Function) {
			s.armed <- d
			return
		}
		if !more {
			return
		}
	}
}

// newSpiedHarness is newHarness on a timerSpy.
func newSpiedHarness(t *testing.T) (*harness, timerSpy) {
	h := newHarness(t)
	spy := timerSpy{Manual: h.clock, armed: make(chan time.Duration, 16)}
	h.reg = NewRegistry(WithClock(spy))
	h.reg.onCompletion = func(c *ms.Completion) { h.completions <- *c }
	t.Cleanup(h.reg.Close)
	return h, spy
}

// stepUntil moves the manual clock a millisecond at a time until cond
// holds: a timer armed on another goroutine fires at its exact time.
func (h *harness) stepUntil(what string, cond func() bool) {
	h.t.Helper()
	waitFor(h.t, what, func() bool {
		if cond() {
			return true
		}
		h.clock.Advance(time.Millisecond)
		return cond()
	})
}

// passBackoffs moves the clock through the backoffs of a call whose
// attempts fail, one after another, checking each: armed for exactly its
// wait, no retry before it has passed (made counts the attempts begun),
// the retry once it has, recorded RETRIED.
func (h *harness) passBackoffs(spy timerSpy, made func() int32, backoffs ...time.Duration) {
	h.t.Helper()
	for n, backoff := range backoffs {
		assert.Equal(h.t, backoff, recv(h.t, spy.armed, "the backoff"), "exponential, no jitter")
		h.clock.Advance(backoff - 1)
		assert.Equal(h.t, int32(n+1), made(), "no retry before the backoff")
		h.clock.Advance(1)
		if n == 0 {
			assert.Equal(h.t, evs("FAILURE", "RETRIED"), h.events())
		}
	}
}

// flaky returns a run that fails its first n calls with errBoom, then
// succeeds, and counts its calls.
func flaky(n int32, calls *atomic.Int32) func(context.Context, int) (string, error) {
	return func(ctx context.Context, id int) (string, error) {
		if calls.Add(1) <= n {
			return "", errBoom
		}
		return userName(id), nil
	}
}

func TestRetryMakesEachAttemptAFullExecutionAfterItsBackoff(t *testing.T) {
	for _, iso := range bothIsolations {
		for _, m := range execModes {
			t.Run(iso.String()+"/"+m.name, func(t *testing.T) {
				h, spy := newSpiedHarness(t)
				var calls, fallbacks atomic.Int32
				c := New("Flaky", flaky(2, &calls), WithRegistry(h.reg), WithConfig(Config{
					Isolation: iso,
					Timeout:   -1,
					Retry:     RetryConfig{MaxAttempts: 3, Backoff: exactBackoff},
				})).WithFallback(func(context.Context, int, error) (string, error) {
					fallbacks.Add(1)
					return "fallback", nil
				})
				call := goCall(func() (string, error) { return m.exec(context.Background(), c, 1) })
				assert.Equal(t, evs("FAILURE"), h.events(), "no fallback while a retry follows")
				h.passBackoffs(spy, calls.Load, 100*time.Millisecond, 200*time.Millisecond)
				res := awaitCall(t, call)
				require.NoError(t, res.err)
				assert.Equal(t, "user-1", res.v)
				assert.Equal(t, evs("SUCCESS", "RETRIED"), h.events())
				assert.Zero(t, fallbacks.Load())
				h.noMoreCompletions()
			})
		}
	}
}

func TestRetryRunsTheFallbackOnceAfterTheLastAttempt(t *testing.T) {
	forEachModeAndIsolation(t, func(t *testing.T, h *harness, m execMode, iso Isolation) {
		var calls atomic.Int32
		c := New("Down", flaky(100, &calls), WithRegistry(h.reg), WithConfig(Config{
			Isolation: iso,
			Timeout:   -1, // the clock steps until the retry runs, however long that takes
			Retry:     RetryConfig{MaxAttempts: 2, Backoff: exactBackoff},
		})).WithFallback(fallbackName)
		call := goCall(func() (string, error) { return m.exec(context.Background(), c, 1) })
		assert.Equal(t, evs("FAILURE"), h.events())
		h.stepUntil("the retry", func() bool { return calls.Load() == 2 })
		res := awaitCall(t, call)
		require.NoError(t, res.err)
		assert.Equal(t, "anonymous", res.v)
		assert.Equal(t, evs("FAILURE", "FALLBACK_SUCCESS", "RETRIED"), h.events())
		h.noMoreCompletions()
	})
}

func TestRetryNeverRetriesBadRequestsShortCircuitsOrRejections(t *testing.T) {
	h, spy := newSpiedHarness(t)
	var calls atomic.Int32
	bad := New("Bad", func(context.Context, int) (string, error) {
		calls.Add(1)
		return "", BadRequest(errors.New("no such user"))
	}, WithRegistry(h.reg), WithConfig(Config{Isolation: SemaphoreIsolation, Retry: RetryConfig{MaxAttempts: 5}}))
	_, err := bad.Execute(context.Background(), 1)
	assert.True(t, IsBadRequest(err))
	assert.Equal(t, evs("BAD_REQUEST"), h.events())

	open := New("Open", succeedRun, WithRegistry(h.reg), WithConfig(Config{
		Isolation: SemaphoreIsolation,
		Breaker:   breaker.Config{ForceOpen: true},
		Retry:     RetryConfig{MaxAttempts: 5},
	})).WithFallback(fallbackName)
	v, err := open.Execute(context.Background(), 1)
	require.NoError(t, err)
	assert.Equal(t, "anonymous", v)
	assert.Equal(t, evs("SHORT_CIRCUITED", "FALLBACK_SUCCESS"), h.events())

	// Configured to, a short circuit is retried.
	require.NoError(t, h.reg.Configure("Open", Config{
		Isolation: SemaphoreIsolation,
		Breaker:   breaker.Config{ForceOpen: true},
		Retry:     RetryConfig{MaxAttempts: 2, Backoff: exactBackoff, On: FailureTypesOf(ShortCircuitFailure)},
	}))
	call := goCall(func() (string, error) { return open.Execute(context.Background(), 1) })
	assert.Equal(t, evs("SHORT_CIRCUITED"), h.events())
	// The Completion comes before the backoff is armed: wait for it.
	h.clock.Advance(recv(t, spy.armed, "the backoff"))
	awaitCall(t, call)
	assert.Equal(t, evs("SHORT_CIRCUITED", "FALLBACK_SUCCESS", "RETRIED"), h.events())
	assert.Equal(t, int32(1), calls.Load())
	h.noMoreCompletions()
}

// The deadline may be on the context of Execute, or on the context given
// to ToObservable while the subscriber's has none, in a call and in a
// subscription.
func TestRetryStartsNoRetryPastTheCallersDeadline(t *testing.T) {
	execute := twoContextMode{"Execute", func(c *Command[int, string], cmdCtx, _ context.Context) (string, error) {
		return c.Execute(cmdCtx, 1)
	}}
	for _, m := range append([]twoContextMode{execute}, twoContextModes...) {
		t.Run(m.name, func(t *testing.T) {
			h, spy := newSpiedHarness(t)
			var calls atomic.Int32
			c := New("Slow", flaky(100, &calls), WithRegistry(h.reg), WithConfig(Config{
				Isolation: SemaphoreIsolation,
				Retry:     RetryConfig{MaxAttempts: 5, Backoff: exactBackoff},
			}))
			// The first retry's 100 ms fit in 250 ms; the second's 200 ms
			// more do not.
			ctx, cancel := h.clock.WithTimeout(context.Background(), 250*time.Millisecond)
			defer cancel()
			call := goCall(func() (string, error) { return m.exec(c, ctx, context.Background()) })
			assert.Equal(t, evs("FAILURE"), h.events())
			h.clock.Advance(recv(t, spy.armed, "the backoff"))
			res := awaitCall(t, call)
			assertCommandError(t, res.err, "Slow", CommandFailure, errBoom, ErrFallbackMissing)
			assert.Equal(t, evs("FAILURE", "FALLBACK_MISSING", "RETRIED"), h.events())
			assert.Equal(t, int32(2), calls.Load())
		})
	}
}

func TestRetryBudgetRefusesTheRetryThatWouldExceedIt(t *testing.T) {
	h := newHarness(t)
	g := newGate()
	defer g.release()
	var calls atomic.Int32
	c := New("Budget", func(ctx context.Context, id int) (string, error) {
		if calls.Add(1) == 2 {
			return "", g.wait(ctx, true) // the first call's retry stays in flight
		}
		return "", errBoom
	}, WithRegistry(h.reg), WithConfig(Config{
		Isolation: SemaphoreIsolation,
		Timeout:   -1,
		Retry:     RetryConfig{MaxAttempts: 3, Backoff: exactBackoff, Budget: RetryBudget{MinConcurrency: 1}},
	})).WithFallback(fallbackName)
	first := goCall(func() (string, error) { return c.Execute(context.Background(), 1) })
	assert.Equal(t, evs("FAILURE"), h.events())
	h.stepUntil("the first call's retry", func() bool { return calls.Load() == 2 })
	g.arrived(t)

	v, err := c.Execute(context.Background(), 2)
	require.NoError(t, err)
	assert.Equal(t, "anonymous", v, "the refused retry leaves the failure to the fallback")
	assert.Equal(t, evs("RETRY_BUDGET_EXHAUSTED"), h.events(), "the refusal, counted on its own")
	assert.Equal(t, evs("FAILURE", "FALLBACK_SUCCESS"), h.events())
	h.clock.Advance(time.Second)
	assert.Equal(t, int64(1), c.Metrics().CumulativeCount(ms.BudgetExhausted))

	g.release()
	awaitCall(t, first)
	assert.Equal(t, evs("SUCCESS", "RETRIED"), h.events())
	h.noMoreCompletions()
}

// A retry counts in the budget from the moment it is granted, while it
// waits out its backoff, as Envoy's does: otherwise every call that fails
// at once, as they do when a downstream goes down, would be granted its
// retry before any of them began, and they would all retry together.
func TestRetryBudgetCountsARetryWaitingOutItsBackoff(t *testing.T) {
	h, spy := newSpiedHarness(t)
	c := New("Budget", failRun, WithRegistry(h.reg), WithConfig(Config{
		Isolation: SemaphoreIsolation,
		Timeout:   -1,
		Retry:     RetryConfig{MaxAttempts: 2, Backoff: exactBackoff, Budget: RetryBudget{MinConcurrency: 1}},
	})).WithFallback(fallbackName)
	first := goCall(func() (string, error) { return c.Execute(context.Background(), 1) })
	assert.Equal(t, evs("FAILURE"), h.events())
	assert.Equal(t, exactBackoff.Initial, recv(t, spy.armed, "the first call's backoff"))

	second := goCall(func() (string, error) { return c.Execute(context.Background(), 2) })
	res := awaitCall(t, second)
	require.NoError(t, res.err)
	assert.Equal(t, "anonymous", res.v, "the budget is spent on the retry waiting: the fallback answers")
	assert.Equal(t, evs("RETRY_BUDGET_EXHAUSTED"), h.events())
	assert.Equal(t, evs("FAILURE", "FALLBACK_SUCCESS"), h.events())

	h.clock.Advance(exactBackoff.Initial)
	res = awaitCall(t, first)
	require.NoError(t, res.err)
	assert.Equal(t, evs("FAILURE", "FALLBACK_SUCCESS", "RETRIED"), h.events())

	// Given back: the next call's retry is granted.
	third := goCall(func() (string, error) { return c.Execute(context.Background(), 3) })
	assert.Equal(t, evs("FAILURE"), h.events())
	h.clock.Advance(recv(t, spy.armed, "the third call's backoff"))
	awaitCall(t, third)
	assert.Equal(t, evs("FAILURE", "FALLBACK_SUCCESS", "RETRIED"), h.events())
	h.noMoreCompletions()
}

func TestHedgeStartsAtTheDelayAndCancelsTheLoser(t *testing.T) {
	forEachModeAndIsolation(t, func(t *testing.T, _ *harness, m execMode, iso Isolation) {
		h, spy := newSpiedHarness(t)
		var calls atomic.Int32
		hung := make(chan struct{})
		defer close(hung)
		c := New("Tail", func(ctx context.Context, id int) (string, error) {
			if calls.Add(1) == 1 {
				select { // the first call hangs until cancelled
				case <-ctx.Done():
					return "", ctx.Err()
				case <-hung:
					return "", errBoom
				}
			}
			return "hedge", nil
		}, WithRegistry(h.reg), WithConfig(Config{
			Isolation: iso,
			Timeout:   -1,
			Hedge:     HedgeConfig{MaxHedges: 1, Delay: 50 * time.Millisecond},
		}))
		call := goCall(func() (string, error) { return m.exec(context.Background(), c, 1) })
		assert.Equal(t, 50*time.Millisecond, recv(t, spy.armed, "the hedge's timer"))
		waitFor(t, "the first run", func() bool { return calls.Load() == 1 })
		h.clock.Advance(50*time.Millisecond - 1)
		assert.Equal(t, int32(1), calls.Load(), "no hedge before the delay")
		h.clock.Advance(1)
		waitFor(t, "the hedge", func() bool { return calls.Load() == 2 })
		res := awaitCall(t, call)
		require.NoError(t, res.err)
		assert.Equal(t, "hedge", res.v)
		got := [][]string{h.events(), h.events()}
		assert.ElementsMatch(t, [][]string{evs("SUCCESS", "HEDGED"), evs("CANCELLED")}, got,
			"the winner, and the loser cancelled with one Completion")
		h.noMoreCompletions()
	})
}

// A hedge the timer started decides the call when the first execution
// then fails, even if the hedge's goroutine has not begun it yet: the
// first's fallback does not answer while the hedge may. One processor
// makes that likely, as a busy machine does: the hedge's goroutine waits
// behind the failing one.
func TestHedgeStartedBeforeTheFirstFailsDecidesTheCall(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	forEachModeAndIsolation(t, func(t *testing.T, h *harness, m execMode, iso Isolation) {
		var calls atomic.Int32
		entered, fail := make(chan struct{}), make(chan struct{})
		c := New("Window", func(ctx context.Context, id int) (string, error) {
			if calls.Add(1) == 1 {
				close(entered)
				<-fail
				return "", errBoom
			}
			return "hedge", nil
		}, WithRegistry(h.reg), WithConfig(Config{
			Isolation: iso,
			Timeout:   -1,
			Hedge:     HedgeConfig{MaxHedges: 1, Delay: 50 * time.Millisecond},
		})).WithFallback(fallbackName)
		call := goCall(func() (string, error) { return m.exec(context.Background(), c, 1) })
		<-entered
		h.clock.Advance(50 * time.Millisecond)
		close(fail)
		res := awaitCall(t, call)
		require.NoError(t, res.err)
		assert.Equal(t, "hedge", res.v)
		got := [][]string{h.events(), h.events()}
		// The hedge may also win before the first fails: the first is then
		// cancelled. Either way the first runs no fallback.
		if !assert.Contains(t, got, evs("SUCCESS", "HEDGED")) {
			return
		}
		first := got[0]
		if slices.Equal(first, evs("SUCCESS", "HEDGED")) {
			first = got[1]
		}
		assert.Contains(t, [][]string{evs("FAILURE"), evs("CANCELLED")}, first, "the first's failure runs no fallback")
		h.noMoreCompletions()
	})
}

// A hedge that OnError would start and the budget refuses leaves the
// failure standing: its fallback answers.
func TestHedgeOnErrorRefusedByTheBudgetRunsTheFallback(t *testing.T) {
	forEachModeAndIsolation(t, func(t *testing.T, h *harness, m execMode, iso Isolation) {
		g := newGate()
		defer g.release()
		var calls atomic.Int32
		c := New("Budget", func(ctx context.Context, id int) (string, error) {
			if calls.Add(1) <= 2 {
				return userName(id), g.wait(ctx, true) // the first call and its hedge
			}
			return "", errBoom
		}, WithRegistry(h.reg), WithConfig(Config{
			Isolation: iso,
			Timeout:   -1,
			Hedge:     HedgeConfig{MaxHedges: 1, Delay: 50 * time.Millisecond, OnError: true},
			Retry:     RetryConfig{Budget: RetryBudget{MinConcurrency: 1}},
		})).WithFallback(fallbackName)
		first := goCall(func() (string, error) { return m.exec(context.Background(), c, 1) })
		g.arrived(t)
		h.clock.Advance(50 * time.Millisecond)
		g.arrived(t) // the first call's hedge holds the budget

		v, err := m.exec(context.Background(), c, 2)
		require.NoError(t, err)
		assert.Equal(t, "anonymous", v)
		assert.Equal(t, evs("RETRY_BUDGET_EXHAUSTED"), h.events())
		assert.Equal(t, evs("FAILURE", "FALLBACK_SUCCESS"), h.events())

		g.release()
		res := awaitCall(t, first)
		require.NoError(t, res.err)
		h.events()
		h.events()
		h.noMoreCompletions()
	})
}

// A hedging policy changed live applies to the next call: a command that
// did not hedge on an error hedges on it once Configure says so.
func TestHedgePolicyChangedLiveAppliesToTheNextCall(t *testing.T) {
	h := newHarness(t)
	var calls atomic.Int32
	c := New("LiveHedge", func(ctx context.Context, id int) (string, error) {
		if calls.Add(1) <= 2 {
			return "", errBoom
		}
		return userName(id), nil
	}, WithRegistry(h.reg), WithConfig(Config{
		Isolation: SemaphoreIsolation,
		Timeout:   -1,
		Hedge:     HedgeConfig{MaxHedges: 1, Delay: time.Hour},
	})).WithFallback(fallbackName)
	v, err := c.Execute(context.Background(), 1)
	require.NoError(t, err)
	assert.Equal(t, "anonymous", v, "no hedge on the error: the fallback answers")
	assert.Equal(t, int32(1), calls.Load())

	require.NoError(t, h.reg.Configure("LiveHedge", Config{
		Isolation: SemaphoreIsolation,
		Timeout:   -1,
		Hedge:     HedgeConfig{MaxHedges: 1, Delay: time.Hour, OnError: true},
	}))
	v, err = c.Execute(context.Background(), 1)
	require.NoError(t, err)
	assert.Equal(t, userName(1), v, "the hedge started on the error answers")
	assert.Equal(t, int32(3), calls.Load())
}

func TestHedgeDelayFollowsTheLiveLatencyPercentile(t *testing.T) {
	h := newHarness(t)
	var latency atomic.Int64
	c := New("Live", func(ctx context.Context, id int) (string, error) {
		h.clock.Advance(time.Duration(latency.Load()))
		return "", nil
	}, WithRegistry(h.reg), WithConfig(Config{
		Isolation: SemaphoreIsolation,
		Timeout:   -1,
		// The delay is read, not used: hedges would add their own latencies.
		Hedge: HedgeConfig{Delay: time.Second, Percentile: 90},
	}))
	k := h.state("Live")
	assert.Equal(t, time.Second, k.hedgeDelay(), "no latency yet: the fixed delay")
	run := func(d time.Duration, n int) {
		latency.Store(int64(d))
		for range n {
			_, err := c.Execute(context.Background(), 1)
			require.NoError(t, err)
			h.completion()
		}
		h.closeBuckets("Live")
	}
	run(10*time.Millisecond, 20)
	assert.InDelta(t, float64(10*time.Millisecond), float64(k.hedgeDelay()), float64(time.Millisecond))
	run(80*time.Millisecond, 20)
	assert.InDelta(t, float64(80*time.Millisecond), float64(k.hedgeDelay()), float64(2*time.Millisecond),
		"the delay follows the distribution as it changes")

	require.NoError(t, h.reg.Configure("Live", Config{
		Isolation: SemaphoreIsolation,
		Timeout:   -1,
		Hedge:     HedgeConfig{Delay: time.Second},
	}))
	assert.Equal(t, time.Second, k.hedgeDelay(), "no Percentile: the fixed delay, whatever the latencies")
}

func TestRateLimitRejectsAtOnceOrWaitsUpToItsBound(t *testing.T) {
	forEachModeAndIsolation(t, func(t *testing.T, h *harness, m execMode, iso Isolation) {
		c := New("Limited", succeedRun, WithRegistry(h.reg), WithConfig(Config{
			Isolation: iso,
			RateLimit: RateLimitConfig{Enabled: true, Rate: 10, Burst: 1},
		})).WithFallback(fallbackName)
		v, err := m.exec(context.Background(), c, 1)
		require.NoError(t, err)
		assert.Equal(t, "user-1", v)
		assert.Equal(t, evs("SUCCESS"), h.events())

		v, err = m.exec(context.Background(), c, 1)
		require.NoError(t, err)
		assert.Equal(t, "anonymous", v, "no token: the fallback answers")
		assert.Equal(t, evs("FALLBACK_SUCCESS", "RATE_LIMITED"), h.events())
		assert.False(t, ms.RateLimited.CountsInHealth(), "not counted in health")

		h.clock.Advance(100 * time.Millisecond) // one token back
		_, err = m.exec(context.Background(), c, 1)
		require.NoError(t, err)
		assert.Equal(t, evs("SUCCESS"), h.events())
		h.noMoreCompletions()
	})
}

// A bucket admits Burst executions at once, then one per 1/Rate, and
// after a long pause Burst again, no more; a Burst of 0 is Rate rounded
// up.
func TestRateLimitAdmitsABurstThenOnePerInterval(t *testing.T) {
	for _, tc := range []struct {
		name     string
		limit    RateLimitConfig
		burst    int
		interval time.Duration
	}{
		{"Burst 3 at 10 a second", RateLimitConfig{Enabled: true, Rate: 10, Burst: 3}, 3, 100 * time.Millisecond},
		{"Burst 0 at 2.5 a second", RateLimitConfig{Enabled: true, Rate: 2.5}, 3, 400 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			c := New("Burst", succeedRun, WithRegistry(h.reg), WithConfig(Config{
				Isolation: SemaphoreIsolation,
				RateLimit: tc.limit,
			})).WithFallback(fallbackName)
			// admitted executes until the limiter refuses, and counts
			// the executions it admitted.
			admitted := func() int {
				for n := 0; n < 100; n++ {
					v, err := c.Execute(context.Background(), 1)
					require.NoError(t, err)
					if v == "anonymous" {
						assert.Equal(t, evs("FALLBACK_SUCCESS", "RATE_LIMITED"), h.events())
						return n
					}
					assert.Equal(t, evs("SUCCESS"), h.events())
				}
				t.Fatal("the limiter refused none of 100 executions")
				return 0
			}
			assert.Equal(t, tc.burst, admitted(), "a full bucket")
			h.clock.Advance(tc.interval - 1)
			assert.Equal(t, 0, admitted(), "just before an interval has passed")
			h.clock.Advance(1)
			assert.Equal(t, 1, admitted(), "an interval later")
			h.clock.Advance(time.Hour)
			assert.Equal(t, tc.burst, admitted(), "after a long pause, the burst and no more")
			h.noMoreCompletions()
		})
	}
}

// The bucket is the key's: a limit switched off and on again finds it as
// the last admission left it, and a change of rate applies to it.
func TestRateLimitSwitchedOffAndOnKeepsItsBucket(t *testing.T) {
	h := newHarness(t)
	limited := Config{Isolation: SemaphoreIsolation, RateLimit: RateLimitConfig{Enabled: true, Rate: 10, Burst: 1}}
	c := New("Switched", succeedRun, WithRegistry(h.reg), WithConfig(limited)).WithFallback(fallbackName)
	_, err := c.Execute(context.Background(), 1)
	require.NoError(t, err)
	assert.Equal(t, evs("SUCCESS"), h.events())

	require.NoError(t, h.reg.Configure("Switched", Config{Isolation: SemaphoreIsolation}))
	_, err = c.Execute(context.Background(), 1)
	require.NoError(t, err)
	assert.Equal(t, evs("SUCCESS"), h.events(), "no limit")

	require.NoError(t, h.reg.Configure("Switched", limited))
	v, err := c.Execute(context.Background(), 1)
	require.NoError(t, err)
	assert.Equal(t, "anonymous", v, "the bucket is still empty")
	assert.Equal(t, evs("FALLBACK_SUCCESS", "RATE_LIMITED"), h.events())

	h.clock.Advance(100 * time.Millisecond)
	_, err = c.Execute(context.Background(), 1)
	require.NoError(t, err)
	assert.Equal(t, evs("SUCCESS"), h.events(), "one token back after 1/rate")
	h.noMoreCompletions()
}

// waitingLimit returns a command whose key admits ten executions a
// second, one at a time, each waiting up to maxWait for its token, once
// a first execution has taken the token there is.
func waitingLimit(t *testing.T, maxWait time.Duration) (*harness, timerSpy, *Command[int, string]) {
	h, spy := newSpiedHarness(t)
	c := New("Waiting", succeedRun, WithRegistry(h.reg), WithConfig(Config{
		Isolation: SemaphoreIsolation,
		Timeout:   -1,
		RateLimit: RateLimitConfig{Enabled: true, Rate: 10, Burst: 1, MaxWait: maxWait},
	}))
	_, err := c.Execute(context.Background(), 1)
	require.NoError(t, err)
	h.completion()
	return h, spy, c
}

func TestRateLimitWaitsForATokenUnderItsBound(t *testing.T) {
	h, spy, c := waitingLimit(t, 150*time.Millisecond)
	call := goCall(func() (string, error) { return c.Execute(context.Background(), 1) })
	wait := recv(t, spy.armed, "the wait for a token")
	assert.Equal(t, 100*time.Millisecond, wait, "the next token's time")
	h.clock.Advance(wait - 1)
	notReturned(t, call)
	h.clock.Advance(1)
	require.NoError(t, awaitCall(t, call).err)
	assert.Equal(t, evs("SUCCESS"), h.events())

	// Two waiting calls: the second's token comes in 200 ms, past the
	// bound.
	a := goCall(func() (string, error) { return c.Execute(context.Background(), 1) })
	b := goCall(func() (string, error) { return c.Execute(context.Background(), 1) })
	assert.Equal(t, evs("FALLBACK_MISSING", "RATE_LIMITED"), h.events(), "one is refused at once")
	h.clock.Advance(recv(t, spy.armed, "the other's wait"))
	assert.Equal(t, evs("SUCCESS"), h.events())
	awaitCall(t, a)
	awaitCall(t, b)
	h.noMoreCompletions()
}

// A wait for a token that would not end before the caller's deadline is
// not begun, whichever context carries the deadline, the command's or
// its subscriber's, in a call and in a subscription: the execution is
// rate limited at once.
func TestRateLimitWaitsOnlyWithinTheCallersDeadline(t *testing.T) {
	for _, m := range twoContextModes {
		for _, on := range []string{"the command's context", "the subscriber's context"} {
			t.Run(m.name+", "+on, func(t *testing.T) {
				// The next token comes in 100 ms: at the deadline, or after it.
				for _, due := range []time.Duration{100 * time.Millisecond, 50 * time.Millisecond} {
					h, spy, c := waitingLimit(t, 150*time.Millisecond)
					deadline, cancel := h.clock.WithTimeout(context.Background(), due)
					cmdCtx, subCtx := deadline, context.Background()
					if on == "the subscriber's context" {
						cmdCtx, subCtx = subCtx, cmdCtx
					}
					_, err := m.exec(c, cmdCtx, subCtx)
					cancel()
					assert.ErrorIs(t, err, ErrRateLimited, "deadline in %v", due)
					assert.Equal(t, evs("FALLBACK_MISSING", "RATE_LIMITED"), h.events())
					select {
					case d := <-spy.armed:
						t.Fatalf("deadline in %v: a wait of %v was begun", due, d)
					default:
					}
					h.noMoreCompletions()
				}
			})
		}
	}
}

// A caller that leaves while its execution waits for a token ends it
// CANCELLED, with no fallback, as Hystrix's does when its subscriber
// leaves while it waits in a pool's queue; its place goes back to the
// next call.
func TestRateLimitCallerLeavingWhileItWaitsIsCancelled(t *testing.T) {
	forEachModeAndIsolation(t, func(t *testing.T, _ *harness, m execMode, iso Isolation) {
		h, spy := newSpiedHarness(t)
		c := New("Waiting", succeedRun, WithRegistry(h.reg), WithConfig(Config{
			Isolation: iso,
			Timeout:   -1,
			RateLimit: RateLimitConfig{Enabled: true, Rate: 10, Burst: 1, MaxWait: 150 * time.Millisecond},
		})).WithFallback(fallbackName)
		_, err := c.Execute(context.Background(), 1)
		require.NoError(t, err)
		h.completion()
		ctx, cancel := context.WithCancel(context.Background())
		call := goCall(func() (string, error) { return m.exec(ctx, c, 1) })
		recv(t, spy.armed, "the wait for a token")
		cancel()
		res := awaitCall(t, call)
		assert.ErrorIs(t, res.err, context.Canceled)
		assert.Equal(t, "", res.v)
		assert.Equal(t, evs("CANCELLED"), h.events())
		// The token it left is the next call's, in 100 ms.
		next := goCall(func() (string, error) { return c.Execute(context.Background(), 1) })
		assert.Equal(t, 100*time.Millisecond, recv(t, spy.armed, "the next wait"))
		h.clock.Advance(100 * time.Millisecond)
		require.NoError(t, awaitCall(t, next).err)
		h.events()
		h.noMoreCompletions()
	})
}

// A place given back by a caller that left is the next call's only while
// no call took a place after it: the later places are not moved, so the
// next call queues behind them, as with golang.org/x/time/rate's
// Reservation.Cancel, and no two executions start at one place.
func TestRateLimitPlaceGivenBackOnlyWhenNoneWasTakenAfterIt(t *testing.T) {
	h, spy, c := waitingLimit(t, 500*time.Millisecond)
	ctx, cancel := context.WithCancel(context.Background())
	a := goCall(func() (string, error) { return c.Execute(ctx, 1) })
	assert.Equal(t, 100*time.Millisecond, recv(t, spy.armed, "a's wait"))
	b := goCall(func() (string, error) { return c.Execute(context.Background(), 1) })
	assert.Equal(t, 200*time.Millisecond, recv(t, spy.armed, "b's wait"))
	cancel()
	assert.ErrorIs(t, awaitCall(t, a).err, context.Canceled)
	assert.Equal(t, evs("CANCELLED"), h.events())

	next := goCall(func() (string, error) { return c.Execute(context.Background(), 1) })
	assert.Equal(t, 300*time.Millisecond, recv(t, spy.armed, "the next wait"), "behind b, not at b's place")
	h.clock.Advance(200 * time.Millisecond)
	require.NoError(t, awaitCall(t, b).err)
	assert.Equal(t, evs("SUCCESS"), h.events())
	notReturned(t, next)
	h.clock.Advance(100 * time.Millisecond)
	require.NoError(t, awaitCall(t, next).err)
	assert.Equal(t, evs("SUCCESS"), h.events())
	h.noMoreCompletions()
}

// A wait for a token that would not end before the execution's timeout
// is not begun: the execution is rate limited at once, which its breaker
// does not count, rather than timed out after the wait, which it would.
// A wait that ends in time leaves run what is left of the timeout.
func TestRateLimitWaitsOnlyWithinTheTimeout(t *testing.T) {
	h, spy := newSpiedHarness(t)
	c := New("Waiting", func(ctx context.Context, id int) (string, error) {
		deadline, _ := ctx.Deadline()
		return deadline.Sub(h.clock.Now()).String(), nil
	}, WithRegistry(h.reg), WithConfig(Config{
		Isolation: SemaphoreIsolation,
		Timeout:   100 * time.Millisecond,
		RateLimit: RateLimitConfig{Enabled: true, Rate: 5, Burst: 1, MaxWait: 500 * time.Millisecond},
	})).WithFallback(fallbackName)
	_, err := c.Execute(context.Background(), 1)
	require.NoError(t, err)
	h.completion()

	refused := awaitCall(t, goCall(func() (string, error) { return c.Execute(context.Background(), 2) })) // its token comes in 200 ms
	require.NoError(t, refused.err)
	assert.Equal(t, "anonymous", refused.v, "refused at once")
	assert.Equal(t, evs("FALLBACK_SUCCESS", "RATE_LIMITED"), h.events())

	h.clock.Advance(100 * time.Millisecond) // the next token in 100 ms, at the timeout
	refused = awaitCall(t, goCall(func() (string, error) { return c.Execute(context.Background(), 2) }))
	require.NoError(t, refused.err)
	assert.Equal(t, "anonymous", refused.v, "a wait that ends at the timeout is refused at once")
	assert.Equal(t, evs("FALLBACK_SUCCESS", "RATE_LIMITED"), h.events())

	h.clock.Advance(50 * time.Millisecond) // the next token in 50 ms
	call := goCall(func() (string, error) { return c.Execute(context.Background(), 3) })
	h.clock.Advance(recv(t, spy.armed, "the wait for a token"))
	res := awaitCall(t, call)
	require.NoError(t, res.err)
	assert.Equal(t, "50ms", res.v, "run has what the wait left of the timeout")
	assert.Equal(t, evs("SUCCESS"), h.events())
	h.noMoreCompletions()
}

func TestResilienceConfigErrorsNameTheField(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{Retry: RetryConfig{MaxAttempts: -1}}, "Config.Retry.MaxAttempts"},
		{Config{Retry: RetryConfig{Budget: RetryBudget{Percent: 120}}}, "Config.Retry.Budget.Percent"},
		{Config{Retry: RetryConfig{Budget: RetryBudget{MinConcurrency: -1}}}, "Config.Retry.Budget.MinConcurrency"},
		{Config{Retry: RetryConfig{Backoff: observable.Backoff{Multiplier: 0.5}}}, "Config.Retry.Backoff.Multiplier"},
		{Config{Retry: RetryConfig{On: 1 << 15}}, "Config.Retry.On"},
		// Never retried: a bad request has no fallback stage, where the
		// retry is decided, and a fallback's rejection comes after it.
		{Config{Retry: RetryConfig{On: FailureTypesOf(CommandFailure, BadRequestFailure)}}, "Config.Retry.On: " + BadRequestFailure.String()},
		{Config{Retry: RetryConfig{On: FailureTypesOf(FallbackRejectedFailure)}}, "Config.Retry.On: " + FallbackRejectedFailure.String()},
		{Config{Hedge: HedgeConfig{MaxHedges: -1}}, "Config.Hedge.MaxHedges"},
		{Config{Hedge: HedgeConfig{Delay: -1}}, "Config.Hedge.Delay"},
		{Config{Hedge: HedgeConfig{Percentile: 101}}, "Config.Hedge.Percentile"},
		{Config{RateLimit: RateLimitConfig{Enabled: true}}, "Config.RateLimit.Rate"},
		{Config{RateLimit: RateLimitConfig{Enabled: true, Rate: 1, Burst: -1}}, "Config.RateLimit.Burst"},
		{Config{RateLimit: RateLimitConfig{Enabled: true, Rate: 1, MaxWait: -1}}, "Config.RateLimit.MaxWait"},
		// Off, but wrong: one Configure away from being on.
		{Config{RateLimit: RateLimitConfig{Rate: -5}}, "Config.RateLimit.Rate"},
		{Config{RateLimit: RateLimitConfig{Burst: -1}}, "Config.RateLimit.Burst"},
	} {
		err := tc.cfg.Validate()
		require.Error(t, err, tc.want)
		assert.Contains(t, err.Error(), tc.want)
		assert.ErrorIs(t, err, ErrInvalidConfig, tc.want)
		assert.ErrorIs(t, NewRegistry().Configure("K", tc.cfg), ErrInvalidConfig, tc.want)
	}
	err := Config{Retry: RetryConfig{Backoff: observable.Backoff{Max: -1}}}.Validate()
	assert.ErrorIs(t, err, observable.ErrInvalidPolicy, "a nested Backoff's error is observable's too")
	assert.NoError(t, Config{Retry: RetryConfig{On: FailureTypesOf(CommandFailure, TimeoutFailure,
		ShortCircuitFailure, PoolRejectedFailure, SemaphoreRejectedFailure, RateLimitedFailure)}}.Validate(),
		"every other failure may be retried")
	assert.NoError(t, Config{RateLimit: RateLimitConfig{Rate: 100, Burst: 10}}.Validate(), "a limiter off, ready to turn on")
}

// A type that is not a FailureType would shift out of the set, or panic
// with a negative shift, and an empty set means RetryConfig's defaults:
// FailureTypesOf says what is wrong instead.
func TestFailureTypesOfRefusesWhatIsNoFailureType(t *testing.T) {
	for _, bad := range []FailureType{numFailureTypes, 16, -1} {
		assert.PanicsWithValue(t, fmt.Sprintf("command: FailureTypesOf: %d is not a FailureType", int(bad)), func() {
			FailureTypesOf(CommandFailure, bad)
		})
	}
	s := FailureTypesOf(CommandFailure, RateLimitedFailure)
	assert.True(t, s.Has(CommandFailure) && s.Has(RateLimitedFailure) && !s.Has(TimeoutFailure))
}

// Under OneAttempt a call makes one execution, whatever its key's retries
// and hedges: the fallback answers its failure at once.
func TestOneAttemptMakesOneExecution(t *testing.T) {
	forEachModeAndIsolation(t, func(t *testing.T, h *harness, m execMode, iso Isolation) {
		var calls atomic.Int32
		c := New("Once", flaky(100, &calls), WithRegistry(h.reg), WithConfig(Config{
			Isolation: iso,
			Retry:     RetryConfig{MaxAttempts: 3, Backoff: exactBackoff},
			Hedge:     HedgeConfig{MaxHedges: 1, OnError: true}, // a hedge at once, and on the error
		})).WithFallback(fallbackName)
		res := awaitCall(t, goCall(func() (string, error) { return m.exec(OneAttempt(context.Background()), c, 1) }))
		require.NoError(t, res.err)
		assert.Equal(t, "anonymous", res.v)
		assert.Equal(t, evs("FAILURE", "FALLBACK_SUCCESS"), h.events())
		assert.Equal(t, int32(1), calls.Load())
		h.noMoreCompletions()
	})
}

// A bad request is the answer of a hedged call, as it is of a retried
// one: the execution that returns it ends the race, and the one that
// hangs is cancelled, since no other execution makes the request good.
func TestHedgedBadRequestEndsTheRace(t *testing.T) {
	forEachModeAndIsolation(t, func(t *testing.T, _ *harness, m execMode, iso Isolation) {
		h, spy := newSpiedHarness(t)
		var calls atomic.Int32
		c := New("Lookup", func(ctx context.Context, id int) (string, error) {
			if calls.Add(1) == 1 {
				<-ctx.Done() // the first call hangs until cancelled
				return "", ctx.Err()
			}
			return "", BadRequest(errNoRows)
		}, WithRegistry(h.reg), WithConfig(Config{
			Isolation: iso,
			Timeout:   -1,
			Hedge:     HedgeConfig{MaxHedges: 1, Delay: 50 * time.Millisecond},
		})).WithFallback(fallbackName)
		call := goCall(func() (string, error) { return m.exec(context.Background(), c, 1) })
		recv(t, spy.armed, "the hedge's timer")
		waitFor(t, "the first run", func() bool { return calls.Load() == 1 })
		h.clock.Advance(50 * time.Millisecond)
		res := awaitCall(t, call)
		require.ErrorIs(t, res.err, errNoRows)
		assert.True(t, IsBadRequest(res.err), "no fallback")
		got := [][]string{h.events(), h.events()}
		assert.ElementsMatch(t, [][]string{evs("BAD_REQUEST", "HEDGED"), evs("CANCELLED")}, got,
			"the hedge's bad request, and the first cancelled")
		h.noMoreCompletions()
	})
}

// The caller's context (the one ToObservable was given, which reaches
// run as the subscriber's does) ending during a backoff ends the call
// there, as the subscriber's does: the call does not sit out the rest of
// the backoff, and no retry starts.
func TestRetryCallerLeavingDuringABackoffEndsTheCall(t *testing.T) {
	h, spy := newSpiedHarness(t)
	var calls atomic.Int32
	backoff := exactBackoff
	backoff.Initial = time.Second
	c := New("CallerLeaves", flaky(100, &calls), WithRegistry(h.reg), WithConfig(Config{
		Isolation: SemaphoreIsolation,
		Timeout:   -1,
		Retry:     RetryConfig{MaxAttempts: 3, Backoff: backoff},
	})).WithFallback(fallbackName)
	ctx, cancel := context.WithCancel(context.Background())
	call := goCall(func() (string, error) { return c.ToObservable(ctx, 1).First(context.Background()) })
	assert.Equal(t, evs("FAILURE"), h.events())
	recv(t, spy.armed, "the backoff")
	cancel()
	select {
	case res := <-call:
		assert.True(t, errors.Is(res.err, context.Canceled), "got %v", res.err)
	case <-time.After(time.Second):
		h.stepUntil("the call's end", func() bool { return len(call) > 0 })
		res := <-call
		t.Fatalf("the call sat out its backoffs after its caller's context ended: %d runs, %v", calls.Load(), res.err)
	}
	assert.Equal(t, int32(1), calls.Load(), "no retry after the caller left")
	h.stepUntil("the retry's place given back", func() bool { return h.state("CallerLeaves").retrying.Load() == 0 })
	require.Zero(t, h.state("CallerLeaves").retrying.Load())
}

// A hedged call's caller (the context ToObservable was given) whose
// deadline passes ends the call, as a subscriber's leaving does: no hedge
// starts after it, though the first execution's failure (the caller's
// DeadlineExceeded) would start one if a hedge runs OnError, as no retry
// starts (TestRetryCallerLeavingDuringABackoffEndsTheCall). Each hedge
// would be another execution, with nobody to answer, and a place of the
// retry budget.
func TestHedgeStartsNoHedgeAfterTheCallerLeft(t *testing.T) {
	for _, iso := range bothIsolations {
		for way, take := range map[string]func(observable.Observable[string]) (string, error){
			"First": func(o observable.Observable[string]) (string, error) { return o.First(context.Background()) },
			"Subscribe": func(o observable.Observable[string]) (string, error) {
				vs, err := subscribeAll(context.Background(), o).wait(t)
				assert.Empty(t, vs)
				return "", err
			},
		} {
			t.Run(iso.String()+"/"+way, func(t *testing.T) {
				h := newHarness(t)
				var calls atomic.Int32
				c := New("HedgeCallerLeaves", func(ctx context.Context, id int) (string, error) {
					calls.Add(1)
					<-ctx.Done()
					return "", ctx.Err()
				}, WithRegistry(h.reg), WithConfig(Config{
					Isolation: iso,
					Timeout:   -1,
					Hedge:     HedgeConfig{MaxHedges: 2, Delay: time.Hour, OnError: true},
				}))
				caller := newDeadlineCtx()
				call := goCall(func() (string, error) { return take(c.ToObservable(caller, 1)) })
				waitFor(t, "the first run", func() bool { return calls.Load() == 1 })
				close(caller.done)
				res := <-call
				assert.True(t, errors.Is(res.err, context.DeadlineExceeded), "got %v", res.err)
				assert.Equal(t, evs("CANCELLED"), h.events(), "the first execution")
				h.noMoreCompletions()
				assert.Equal(t, int32(1), calls.Load())
				waitFor(t, "the budget's places back", func() bool { return h.state("HedgeCallerLeaves").retrying.Load() == 0 })
			})
		}
	}
}

// A call keeps the hedging policy of the Config it began under, as
// TestHedgePolicyChangedLiveAppliesToTheNextCall has it for OnError: its
// hedges' delay too. Hedging switched off by Configure (its Delay 0)
// while a call waits for its hedges must not start the call's remaining
// hedges at once, the opposite of what switching it off asks.
func TestHedgeDelayIsTheCallsConfigs(t *testing.T) {
	h := newHarness(t)
	first := make(chan struct{})
	entered := make(chan struct{}, 4)
	var calls atomic.Int32
	c := New("HedgeOff", func(ctx context.Context, id int) (string, error) {
		n := calls.Add(1)
		entered <- struct{}{}
		if n == 1 {
			<-first
			return "first", nil
		}
		<-ctx.Done() // a hedge: cancelled when the first wins
		return "", ctx.Err()
	}, WithRegistry(h.reg), WithConfig(Config{
		Isolation: SemaphoreIsolation,
		Timeout:   -1,
		Hedge:     HedgeConfig{MaxHedges: 2, Delay: 50 * time.Millisecond},
	}))
	call := goCall(func() (string, error) { return c.Execute(context.Background(), 1) })
	recv(t, entered, "the first attempt")

	require.NoError(t, h.reg.Configure("HedgeOff", Config{Isolation: SemaphoreIsolation, Timeout: -1}))
	h.clock.Advance(50 * time.Millisecond)
	recv(t, entered, "the first hedge, at the call's delay")
	h.clock.Advance(50 * time.Millisecond)
	recv(t, entered, "the second hedge")

	close(first)
	res := awaitCall(t, call)
	require.NoError(t, res.err)
	assert.Equal(t, "first", res.v)
	var hedgeLatencies []time.Duration
	for range 3 {
		if cpl := h.completion(); cpl.Events[ms.Hedged] == 1 {
			hedgeLatencies = append(hedgeLatencies, cpl.TotalLatency)
		}
	}
	assert.ElementsMatch(t, []time.Duration{50 * time.Millisecond, 0}, hedgeLatencies,
		"the second hedge began 50ms after the first, not at once")
	h.noMoreCompletions()
}
