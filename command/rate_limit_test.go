package command

import (
	"context"
	"math"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/breaker"
	"github.com/rxhystrix/rxhystrix/internal/clock"
	"github.com/rxhystrix/rxhystrix/observable"
)

// An execution whose start was read before others took the places up to
// now is not refused on that old reading: reserve reads the clock again
// first, and refuses only if the place is not due on the new reading
// either.
func TestRateLimiterReadsTheClockAgainBeforeRefusing(t *testing.T) {
	const interval = int64(100 * time.Millisecond)
	l := &rateLimiter{tat: new(atomic.Int64)}
	l.params.Store(paramsOf(RateLimitConfig{Enabled: true, Rate: 10, Burst: 1}))
	_, _, _, ok := l.reserve(0, nil, 0)
	require.True(t, ok, "the first place")

	reads := 0
	clock := func() int64 { reads++; return interval }
	taken, wait, _, ok := l.reserve(0, clock, 0)
	assert.True(t, ok, "the place is due at the clock's time, an interval after the start read")
	assert.Equal(t, interval, taken, "taken at the new reading")
	assert.Zero(t, wait)
	assert.Equal(t, 1, reads)

	_, wait, _, ok = l.reserve(interval, clock, 0)
	assert.False(t, ok, "no place is due on the new reading either")
	assert.Equal(t, time.Duration(interval), wait, "the next place is an interval away")
	assert.Equal(t, 2, reads)
}

// A half-open trial that the rate limiter refuses never runs: the breaker
// must not stay HALF_OPEN waiting for it, short-circuiting everybody
// (with HalfOpenTrialTimeout negative, forever).
func TestRateLimitedHalfOpenTrialIsGivenBack(t *testing.T) {
	h := newHarness(t)
	failing := true
	br := tripAfterThree
	br.HalfOpenTrialTimeout = -1
	c := New("Trial", func(ctx context.Context, id int) (string, error) {
		if failing {
			return "", errBoom
		}
		return "fine", nil
	}, WithRegistry(h.reg), WithConfig(Config{
		Isolation: SemaphoreIsolation,
		Timeout:   -1,
		Breaker:   br,
		// Three at once, then one per 100 s.
		RateLimit: RateLimitConfig{Enabled: true, Rate: 0.01, Burst: 3},
	})).WithFallback(fallbackName)
	h.openBreaker(func() { _, _ = c.Execute(context.Background(), 1) }, 3, "Trial")

	h.clock.Advance(br.SleepWindow + time.Millisecond)
	failing = false
	v, err := c.Execute(context.Background(), 1)
	require.NoError(t, err)
	assert.Equal(t, "anonymous", v)
	assert.Equal(t, evs("FALLBACK_SUCCESS", "RATE_LIMITED"), h.events(), "the trial finds no token")

	h.clock.Advance(100 * time.Second) // a token back
	v, err = c.Execute(context.Background(), 1)
	require.NoError(t, err)
	assert.Equal(t, "fine", v, "a trial runs once a token is back")
	assert.Equal(t, evs("SUCCESS"), h.events())
	assert.Equal(t, breaker.Closed, c.Breaker().State())
}

// A Burst of 0 is Rate rounded up: a higher rate never makes a smaller
// bucket, however high it is.
func TestRateLimitDefaultBurstOfAHugeRate(t *testing.T) {
	high := paramsOf(RateLimitConfig{Enabled: true, Rate: 1e18})
	higher := paramsOf(RateLimitConfig{Enabled: true, Rate: 1e19})
	assert.GreaterOrEqual(t, higher.tolerance, high.tolerance, "tolerance of Rate 1e19 vs 1e18")
	assert.GreaterOrEqual(t, RateLimitConfig{Rate: 1e19}.burst(), RateLimitConfig{Rate: 1e18}.burst())
}

// A subscriber that leaves while its execution waits for a token of the
// rate limit ends it CANCELLED too, under either isolation, and its place
// goes back (see TestBacklogSubscriberLeavesWhileWaiting).
func TestRateLimitSubscriberLeavesWhileWaiting(t *testing.T) {
	for _, iso := range bothIsolations {
		t.Run(iso.String(), func(t *testing.T) {
			h, spy := newSpiedHarness(t)
			c := New("Waiting", succeedRun, WithRegistry(h.reg), WithConfig(Config{
				Isolation: iso,
				Timeout:   -1,
				RateLimit: RateLimitConfig{Enabled: true, Rate: 10, Burst: 1, MaxWait: 150 * time.Millisecond},
			})).WithFallback(fallbackName)
			_, err := c.Execute(context.Background(), 1)
			require.NoError(t, err)
			h.completion()
			subCtx, cancel := context.WithCancel(context.Background())
			defer cancel()
			subs := make(chan *collected[string], 1)
			go func() { subs <- subscribeAll(subCtx, c.ToObservable(context.Background(), 1)) }()
			recv(t, spy.armed, "the wait for a token")
			cancel()
			recv(t, subs, "Subscribe to return")
			assert.Equal(t, evs("CANCELLED"), h.events())
			next := goCall(func() (string, error) { return c.Execute(context.Background(), 1) })
			assert.Equal(t, 100*time.Millisecond, recv(t, spy.armed, "the next wait"), "the place went back")
			h.clock.Advance(100 * time.Millisecond)
			require.NoError(t, awaitCall(t, next).err)
			h.events()
			h.noMoreCompletions()
		})
	}
}

// A rate raised live applies to the bucket at once, as
// golang.org/x/time/rate's SetLimit does: the tokens the bucket holds are
// kept and come back at the new rate from then on, rather than at the
// old rate until the place the last admission took under it.
func TestRateLimitRaisedLiveRefillsAtTheNewRate(t *testing.T) {
	h := newHarness(t)
	slow := Config{Isolation: SemaphoreIsolation, RateLimit: RateLimitConfig{Enabled: true, Rate: 1.0 / 60, Burst: 1}}
	c := New("Raised", succeedRun, WithRegistry(h.reg), WithConfig(slow)).WithFallback(fallbackName)
	_, err := c.Execute(context.Background(), 1)
	require.NoError(t, err)
	assert.Equal(t, evs("SUCCESS"), h.events(), "the one token")

	fast := slow
	fast.RateLimit.Rate = 10
	require.NoError(t, h.reg.Configure("Raised", fast))
	h.clock.Advance(100 * time.Millisecond) // a token at the new rate
	v, err := c.Execute(context.Background(), 1)
	require.NoError(t, err)
	assert.Equal(t, "user-1", v, "a token 1/rate after the rate was raised")
	assert.Equal(t, evs("SUCCESS"), h.events())
	h.noMoreCompletions()
}

// A burst lowered live keeps the tokens the bucket holds, up to the new
// burst, as x/time/rate's SetBurst does: an empty bucket of burst 10 at
// 10 a second has a token again 100 ms later under a burst of 1, not a
// second later.
func TestRateLimitBurstLoweredLive(t *testing.T) {
	h := newHarness(t)
	wide := Config{Isolation: SemaphoreIsolation, RateLimit: RateLimitConfig{Enabled: true, Rate: 10, Burst: 10}}
	c := New("Lowered", succeedRun, WithRegistry(h.reg), WithConfig(wide)).WithFallback(fallbackName)
	for range 10 {
		_, err := c.Execute(context.Background(), 1)
		require.NoError(t, err)
		assert.Equal(t, evs("SUCCESS"), h.events())
	}
	narrow := wide
	narrow.RateLimit.Burst = 1
	require.NoError(t, h.reg.Configure("Lowered", narrow))
	h.clock.Advance(100 * time.Millisecond)
	v, err := c.Execute(context.Background(), 1)
	require.NoError(t, err)
	assert.Equal(t, "user-1", v, "one token back after 1/rate")
	assert.Equal(t, evs("SUCCESS"), h.events())
	h.noMoreCompletions()
}

// tokenTaken returns the command "Waiting" of h, in isolation iso, whose
// rate limit (10 a second, a burst of 1, a MaxWait of 150ms) has just
// given its one token: its next execution waits 100ms for the next.
func tokenTaken(t *testing.T, h *harness, iso Isolation) *Command[int, string] {
	t.Helper()
	c := New("Waiting", succeedRun, WithRegistry(h.reg), WithConfig(waitingConfig(iso)))
	_, err := c.Execute(context.Background(), 1)
	require.NoError(t, err)
	h.completion()
	return c
}

// waitingConfig is the Config of "Waiting", in isolation iso: a rate
// limit of 10 a second, a burst of 1 and a MaxWait of 150ms.
func waitingConfig(iso Isolation) Config {
	return Config{
		Isolation: iso,
		Timeout:   -1,
		RateLimit: RateLimitConfig{Enabled: true, Rate: 10, Burst: 1, MaxWait: 150 * time.Millisecond},
	}
}

// Queue never blocks its caller, in either isolation, also while its
// execution waits for a rate limit's token (RateLimitConfig.MaxWait's
// doc): the Future is returned at once, and the execution waits on its
// own until the token comes.
func TestRateLimitQueueReturnsWhileItsExecutionWaits(t *testing.T) {
	for _, iso := range bothIsolations {
		t.Run(iso.String(), func(t *testing.T) {
			h, spy := newSpiedHarness(t)
			c := tokenTaken(t, h, iso)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			queued := make(chan *observable.Future[string], 1)
			go func() { queued <- c.Queue(ctx, 1) }()
			recv(t, spy.armed, "the wait for a token")
			f := recv(t, queued, "Queue to return before the token comes")
			select {
			case <-f.Done():
				t.Fatal("the execution ended before its token came")
			default:
			}
			h.clock.Advance(100 * time.Millisecond)
			v, err := f.Get(context.Background())
			require.NoError(t, err)
			assert.Equal(t, userName(1), v)
			assert.Equal(t, evs("SUCCESS"), h.events())
			h.noMoreCompletions()
		})
	}
}

// A tiny rate with a MaxWait long enough to mean "wait however long it
// takes" takes places further and further ahead; the place after the
// last one that fits in an int64 must not wrap around to the past, where
// it would admit an execution at once and reset the bucket.
func TestRateLimiterPlacesPastTheLongestTimeAreRefused(t *testing.T) {
	l := &rateLimiter{tat: new(atomic.Int64)}
	l.params.Store(paramsOf(RateLimitConfig{Enabled: true, Rate: 1e-12, Burst: 1})) // one place per maxRateSpan
	now := harnessStart.UnixNano()
	clock := func() int64 { return now }
	forever := time.Duration(math.MaxInt64)
	last := time.Duration(-1)
	for i := range 12 {
		_, wait, _, ok := l.reserve(now, clock, forever)
		if !ok {
			assert.Positive(t, i, "the first place is free")
			continue
		}
		assert.Greater(t, wait, last, "place %d: each place is after the last", i)
		assert.GreaterOrEqual(t, l.tat.Load(), now, "place %d: the next place is not in the past", i)
		last = wait
	}
}

// An execution whose caller leaves while it waits for a token of the rate
// limit ends CANCELLED with the time it waited as its TotalLatency, and
// ends then (its Completion's End), in a call (Execute) as in a
// subscription (Map's First): the wait is time since its start, as a wait
// in the backlog is (execution.waited).
func TestRateLimitWaitCountsInTotalLatency(t *testing.T) {
	modes := []execMode{execModes[0], execModes[4]} // Execute, ToObservable.Map.First
	require.Equal(t, "Execute", modes[0].name)
	require.Equal(t, "ToObservable.Map.First", modes[1].name)
	for _, m := range modes {
		for _, iso := range bothIsolations {
			t.Run(iso.String()+"/"+m.name, func(t *testing.T) {
				h, spy := newSpiedHarness(t)
				c := tokenTaken(t, h, iso)
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				call := goCall(func() (string, error) { return m.exec(ctx, c, 1) })
				recv(t, spy.armed, "the wait for a token")
				h.clock.Advance(40 * time.Millisecond)
				cancel()
				res := awaitCall(t, call)
				assert.ErrorIs(t, res.err, context.Canceled)
				done := h.completion()
				assert.Equal(t, evs("CANCELLED"), eventNames(done.Events))
				assert.Equal(t, 40*time.Millisecond, done.TotalLatency, "the wait for the token")
			})
		}
	}
}

// A wait fits a caller's deadline, read from the system clock, as the
// time left before it, also after the system clock has been stepped,
// which Real does not follow.
func TestRateLimitWaitFitsTheCallersDeadlineAcrossASystemClockStep(t *testing.T) {
	for _, step := range []time.Duration{time.Hour, -time.Hour} {
		t.Run(step.String(), func(t *testing.T) {
			defer clock.StepSystemClock(step)()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			now := clock.UnixNano(clock.Real)
			assert.True(t, fitsDeadline(ctx, clock.Real, now, time.Second), "a second fits")
			assert.False(t, fitsDeadline(ctx, clock.Real, now, time.Minute), "a minute does not")
		})
	}
}

// Observe and Queue of an ObservableCommand never block their caller, in
// either isolation, also while the execution waits for a rate limit's
// token (RateLimitConfig.MaxWait's doc).
func TestRateLimitObserveReturnsWhileItsExecutionWaits(t *testing.T) {
	for _, iso := range bothIsolations {
		for _, mode := range []string{"Observe", "Queue"} {
			t.Run(iso.String()+"/"+mode, func(t *testing.T) {
				h, spy := newSpiedHarness(t)
				c := NewObservable("Waiting", func(ctx context.Context, in int) observable.Observable[bool] {
					return observable.Just(true)
				}, WithRegistry(h.reg), WithConfig(waitingConfig(iso)))
				_, err := c.Execute(context.Background(), 1) // the one token
				require.NoError(t, err)
				h.completion()
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				returned := make(chan func() ([]bool, error), 1)
				go func() {
					if mode == "Observe" {
						o := c.Observe(ctx, 1)
						returned <- func() ([]bool, error) { return o.ToSlice(context.Background()) }
						return
					}
					f := c.Queue(ctx, 1)
					returned <- func() ([]bool, error) { return f.Get(context.Background()) }
				}()
				recv(t, spy.armed, "the wait for a token")
				get := recv(t, returned, mode+" to return before the token comes")
				h.clock.Advance(100 * time.Millisecond)
				vs, err := get()
				require.NoError(t, err)
				require.Equal(t, []bool{true}, vs)
				require.Equal(t, evs("EMIT", "SUCCESS"), h.events())
			})
		}
	}
}
