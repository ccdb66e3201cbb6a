package command

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/limit"
	"github.com/rxhystrix/rxhystrix/observable"
)

// adaptiveKey configures GetUser under iso with the adaptive limit a:
// the key's permits under semaphore isolation, the Users pool's workers
// (with a queue of queue places) otherwise. It returns a function that
// reads the limit as the dashboard stream reports it.
func adaptiveKey(t *testing.T, h *harness, iso Isolation, a limit.Algorithm, fixed, queue int, timeout time.Duration) func() int {
	t.Helper()
	cfg := Config{Isolation: iso, Pool: "Users", Timeout: timeout}
	if iso == SemaphoreIsolation {
		cfg.AdaptiveLimit, cfg.MaxConcurrentRequests = a, fixed
		require.NoError(t, h.reg.Configure("GetUser", cfg))
		return func() int { return h.state("GetUser").CommandStatus().Properties.MaxConcurrentRequests }
	}
	require.NoError(t, h.reg.Configure("GetUser", cfg))
	require.NoError(t, h.reg.ConfigurePool("Users", PoolConfig{CoreSize: fixed, MaxQueueSize: queue, QueueSizeRejectionThreshold: max(queue, 1), AdaptiveLimit: a}))
	return func() int {
		st := h.reg.pool("Users", false).PoolStatus()
		assert.Equal(t, st.CoreSize, st.MaximumSize)
		assert.Equal(t, a.Name(), st.AdaptiveLimit)
		return st.CoreSize
	}
}

// The limit moves with the samples of both drivers as AIMD's formula
// says: up by one for a call near the limit, down by the backoff ratio
// for each timeout; a call over the limit is rejected as at a fixed
// limit, goes to the fallback, and is not a drop.
func TestAdaptiveLimitFollowsExecutions(t *testing.T) {
	forEachModeAndIsolation(t, func(t *testing.T, h *harness, m execMode, iso Isolation) {
		limitNow := adaptiveKey(t, h, iso, limit.AIMD{MinLimit: 1, MaxLimit: 5, Timeout: -1}, 1, 0, 50*time.Millisecond)
		g := newGate()
		defer g.release()
		var rejected []FailureType
		var mu sync.Mutex
		c := New("GetUser", func(ctx context.Context, id int) (string, error) {
			if id == 0 {
				h.clock.Advance(10 * time.Millisecond)
				return userName(id), nil
			}
			return "", g.wait(ctx, true)
		}, WithRegistry(h.reg)).WithFallback(func(ctx context.Context, id int, err error) (string, error) {
			var ce *Error
			if errors.As(err, &ce) {
				mu.Lock()
				rejected = append(rejected, ce.Failure)
				mu.Unlock()
			}
			return "anonymous", nil
		})
		assert.Equal(t, 1, limitNow(), "CoreSize or MaxConcurrentRequests is the starting point")

		v, err := m.exec(context.Background(), c, 0)
		require.NoError(t, err)
		assert.Equal(t, userName(0), v)
		h.completion()
		assert.Equal(t, 2, limitNow(), "1 in flight ≥ 1/2: L + 1")

		holders := []<-chan callResult[string]{
			goCall(func() (string, error) { return c.Execute(context.Background(), 1) }),
		}
		g.arrived(t)
		holders = append(holders, goCall(func() (string, error) { return c.Execute(context.Background(), 2) }))
		g.arrived(t)
		v, err = m.exec(context.Background(), c, 3)
		require.NoError(t, err)
		assert.Equal(t, "anonymous", v)
		want := PoolRejectedFailure
		if iso == SemaphoreIsolation {
			want = SemaphoreRejectedFailure
		}
		mu.Lock()
		assert.Equal(t, []FailureType{want}, rejected)
		mu.Unlock()
		h.completion()
		assert.Equal(t, 2, limitNow(), "a rejection is not a sample")

		h.clock.Advance(50 * time.Millisecond)
		for _, hc := range holders {
			r := awaitCall(t, hc)
			require.NoError(t, r.err)
			assert.Equal(t, "anonymous", r.v)
			h.completion()
		}
		assert.Equal(t, 1, limitNow(), "two timeouts: ⌊2·0.9⌋ = 1, then MinLimit")
		g.release()
		waitFor(t, "the timed-out runs to return", func() bool { return g.running.Load() == 0 })
		if iso == PoolIsolation {
			h.waitIdle(t, "Users")
		}
		h.assertReleased("GetUser")
	})
}

// A limit that grows starts queued runs at once, as a larger CoreSize
// does, rather than one per run that ends.
func TestAdaptivePoolLimitStartsQueuedRuns(t *testing.T) {
	h := newHarness(t)
	limitNow := adaptiveKey(t, h, PoolIsolation, limit.AIMD{MinLimit: 1, MaxLimit: 5, Timeout: -1}, 1, 5, -1)
	gates := []*gate{newGate(), newGate(), newGate()}
	entered := make(chan int, 3)
	defer func() {
		for _, g := range gates {
			g.release()
		}
	}()
	c := New("GetUser", func(ctx context.Context, id int) (string, error) {
		entered <- id
		return userName(id), gates[id].wait(ctx, false)
	}, WithRegistry(h.reg))
	var calls []<-chan callResult[string]
	for id := range gates {
		calls = append(calls, goCall(func() (string, error) { return c.Execute(context.Background(), id) }))
		if id == 0 {
			assert.Equal(t, 0, recv(t, entered, "the first run"))
		}
	}
	h.waitQueued(t, "Users", 2)
	assert.Equal(t, 1, limitNow())

	h.clock.Advance(10 * time.Millisecond)
	gates[0].release()
	require.NoError(t, awaitCall(t, calls[0]).err)
	// The first run's sample raised the limit to 2: both queued runs
	// start, though neither has returned.
	got := []int{recv(t, entered, "a queued run"), recv(t, entered, "the other queued run")}
	assert.ElementsMatch(t, []int{1, 2}, got)
	assert.Equal(t, 2, limitNow())
	gates[1].release()
	gates[2].release()
	for _, call := range calls[1:] {
		require.NoError(t, awaitCall(t, call).err)
	}
}

// Switching the algorithm live, on and off, while executions run loses
// no permit and no worker: afterwards every permit is back, and exactly
// the limit's worth of executions can run at once.
func TestAdaptiveLimitSwitchedLiveUnderLoad(t *testing.T) {
	algorithms := []limit.Algorithm{
		limit.Vegas{MaxLimit: 8},
		limit.Gradient2{MinLimit: 2, MaxLimit: 8},
		nil,
		limit.AIMD{MinLimit: 2, MaxLimit: 8, Timeout: -1},
	}
	for _, iso := range bothIsolations {
		t.Run(iso.String(), func(t *testing.T) {
			h := newHarness(t)
			h.reg.onCompletion = nil // more executions than the harness keeps
			adaptiveKey(t, h, iso, algorithms[0], 4, 4, -1)
			release := newGate()
			c := New("GetUser", func(ctx context.Context, id int) (string, error) {
				if id < 0 {
					return "", release.wait(ctx, false)
				}
				h.clock.Advance(time.Millisecond)
				return userName(id), nil
			}, WithRegistry(h.reg)).WithFallback(fallbackName)

			configure := func(a limit.Algorithm) {
				if iso == SemaphoreIsolation {
					require.NoError(t, h.reg.Configure("GetUser", Config{Isolation: iso, Pool: "Users", Timeout: -1, MaxConcurrentRequests: 4, AdaptiveLimit: a}))
					return
				}
				require.NoError(t, h.reg.ConfigurePool("Users", PoolConfig{CoreSize: 4, MaxQueueSize: 4, QueueSizeRejectionThreshold: 4, AdaptiveLimit: a}))
			}
			var wg sync.WaitGroup
			ctx, cancel := context.WithCancel(context.Background()) // a context that can end sends pool runs to workers
			defer cancel()
			for range 6 {
				wg.Go(func() {
					for i := range 200 {
						if _, err := c.Execute(ctx, i); err != nil {
							t.Error(err)
							return
						}
					}
				})
			}
			for i := range 100 {
				configure(algorithms[i%len(algorithms)])
			}
			wg.Wait()
			configure(limit.AIMD{InitialLimit: 3, MinLimit: 3, MaxLimit: 3})

			if iso == PoolIsolation {
				h.waitIdle(t, "Users")
			}
			h.assertReleased("GetUser")
			var held []<-chan callResult[string]
			for range 3 {
				held = append(held, goCall(func() (string, error) { return c.Execute(ctx, -1) }))
				release.arrived(t)
			}
			if iso == PoolIsolation {
				held = append(held, goCall(func() (string, error) { return c.Execute(ctx, -1) }))
				h.waitQueued(t, "Users", 1)
				require.NoError(t, h.reg.ConfigurePool("Users", PoolConfig{CoreSize: 4, MaxQueueSize: 4, QueueSizeRejectionThreshold: 1, AdaptiveLimit: limit.AIMD{InitialLimit: 3, MinLimit: 3, MaxLimit: 3}}))
			}
			v, err := c.Execute(ctx, -1)
			require.NoError(t, err)
			assert.Equal(t, "anonymous", v, "the limit of 3 is full")
			assert.Equal(t, int64(0), release.most.Load()-3, "no more than the limit ran at once")
			release.release()
			for _, r := range held {
				require.NoError(t, awaitCall(t, r).err)
			}
			if iso == PoolIsolation {
				h.waitIdle(t, "Users")
			}
			h.assertReleased("GetUser")
		})
	}
}

// Writing the same algorithm back keeps the limit; a new algorithm
// starts where the last one was; none restores the fixed size.
func TestAdaptiveLimitReconfigured(t *testing.T) {
	h := newHarness(t)
	a := limit.AIMD{MinLimit: 1, MaxLimit: 50, Timeout: -1}
	cfg := Config{Isolation: SemaphoreIsolation, MaxConcurrentRequests: 7, AdaptiveLimit: a}
	require.NoError(t, h.reg.Configure("GetUser", cfg))
	k := h.state("GetUser")
	k.limiter.Load().Record(limit.Sample{RTT: time.Millisecond, InFlight: 7})
	permits := func() int {
		n, _ := k.permits(k.config.Load())
		return n
	}
	assert.Equal(t, 8, permits())

	require.NoError(t, h.reg.Configure("GetUser", cfg))
	assert.Equal(t, 8, permits(), "the same algorithm keeps its limit")

	cfg.AdaptiveLimit = limit.Vegas{}
	require.NoError(t, h.reg.Configure("GetUser", cfg))
	assert.Equal(t, 8, permits(), "a new algorithm starts at the last limit")
	assert.Equal(t, limit.Vegas{}, k.limiter.Load().Algorithm())

	cfg.AdaptiveLimit = limit.Vegas{InitialLimit: 20, MaxLimit: 300}
	require.NoError(t, h.reg.Configure("GetUser", cfg))
	assert.Equal(t, 8, permits(), "a change of the algorithm's parameters keeps the limit it has learned, whatever its InitialLimit")
	cfg.AdaptiveLimit = limit.Vegas{MaxLimit: 5}
	require.NoError(t, h.reg.Configure("GetUser", cfg))
	assert.Equal(t, 5, permits(), "within the new bounds")

	cfg.AdaptiveLimit = nil
	require.NoError(t, h.reg.Configure("GetUser", cfg))
	assert.Equal(t, 7, permits())
	assert.Nil(t, k.limiter.Load())
	got, _ := h.reg.Config("GetUser")
	assert.Nil(t, got.AdaptiveLimit)
}

func TestAdaptiveLimitValidation(t *testing.T) {
	r := NewRegistry()
	defer r.Close()
	err := r.Configure("GetUser", Config{AdaptiveLimit: limit.AIMD{BackoffRatio: 2}})
	require.ErrorIs(t, err, limit.ErrInvalidConfig)
	assert.True(t, strings.HasPrefix(err.Error(), "command: Config.AdaptiveLimit: limit: AIMD.BackoffRatio is 2"), err.Error())
	err = r.ConfigurePool("Users", PoolConfig{AdaptiveLimit: limit.Gradient2{MinLimit: 30, MaxLimit: 10}})
	require.ErrorIs(t, err, limit.ErrInvalidConfig)
	assert.Contains(t, err.Error(), "command: PoolConfig.AdaptiveLimit: limit: Gradient2.MinLimit is 30")
	var ce *limit.ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "Gradient2.MinLimit", ce.Field)
	assert.Equal(t, 0, r.PoolCount())
}

// Config.AdaptiveLimit is the semaphore's: a pool-isolated key's limit is
// its pool's, and the key reports its fixed permits.
func TestConfigAdaptiveLimitIsTheSemaphores(t *testing.T) {
	h := newHarness(t)
	require.NoError(t, h.reg.Configure("GetUser", Config{Isolation: PoolIsolation, AdaptiveLimit: limit.AIMD{}}))
	p := h.state("GetUser").CommandStatus().Properties
	assert.Equal(t, DefaultMaxConcurrentRequests, p.MaxConcurrentRequests)
	assert.Empty(t, p.AdaptiveLimit)

	require.NoError(t, h.reg.Configure("GetUser", Config{Isolation: SemaphoreIsolation, AdaptiveLimit: limit.AIMD{}}))
	p = h.state("GetUser").CommandStatus().Properties
	assert.Equal(t, limit.DefaultAIMDMinLimit, p.MaxConcurrentRequests, "10 raised to AIMD's MinLimit")
	assert.Equal(t, "aimd", p.AdaptiveLimit)
}

// The latency an adaptive limit samples is how long the user code ran, in
// every mode and isolation: a run of 10ms is under AIMD's 20ms timeout
// and raises the limit, one of 30ms is over it and counts as a drop.
func TestAdaptiveLimitSamplesTheRunsLatency(t *testing.T) {
	forEachModeAndIsolation(t, func(t *testing.T, h *harness, m execMode, iso Isolation) {
		limitNow := adaptiveKey(t, h, iso, limit.AIMD{MinLimit: 1, MaxLimit: 5, Timeout: 20 * time.Millisecond}, 2, 0, time.Second)
		c := New("GetUser", func(ctx context.Context, ms int) (string, error) {
			h.clock.Advance(time.Duration(ms) * time.Millisecond)
			return userName(ms), nil
		}, WithRegistry(h.reg))

		_, err := m.exec(context.Background(), c, 10)
		require.NoError(t, err)
		h.completion()
		assert.Equal(t, 3, limitNow(), "10ms: 1 in flight ≥ 2/2, L + 1")

		_, err = m.exec(context.Background(), c, 30)
		require.NoError(t, err)
		h.completion()
		assert.Equal(t, 2, limitNow(), "30ms > 20ms: a drop, ⌊3·0.9⌋")
	})
}

// A pool's limit samples the run from its start on a worker: the time a
// call waited in the queue, which the limit itself causes, is not read as
// the downstream slowing down.
func TestAdaptivePoolLimitLeavesTheQueueOutOfTheLatency(t *testing.T) {
	h := newHarness(t)
	limitNow := adaptiveKey(t, h, PoolIsolation, limit.AIMD{MinLimit: 1, MaxLimit: 5, Timeout: 20 * time.Millisecond}, 1, 1, time.Second)
	g := newGate()
	defer g.release()
	// The queued call's run returns only once the holder has been
	// sampled. The worker takes the queued call as soon as the holder's
	// run returns, so the two callers could otherwise record their
	// samples at once, and a limiter skips a sample that finds another
	// being recorded (limit.Limiter.Record): the limit would then rise
	// once, to 2.
	holderSampled := make(chan struct{})
	c := New("GetUser", func(ctx context.Context, ms int) (string, error) {
		if ms == 0 {
			return userName(0), g.wait(ctx, false)
		}
		<-holderSampled
		h.clock.Advance(time.Duration(ms) * time.Millisecond)
		return userName(ms), nil
	}, WithRegistry(h.reg))

	holder := goCall(func() (string, error) { return c.Execute(context.Background(), 0) })
	g.arrived(t)
	queued := goCall(func() (string, error) { return c.Execute(context.Background(), 10) })
	h.waitQueued(t, "Users", 1)
	h.clock.Advance(15 * time.Millisecond)
	g.release()
	require.NoError(t, awaitCall(t, holder).err)
	h.completion() // published after the sample
	close(holderSampled)
	require.NoError(t, awaitCall(t, queued).err)
	h.completion()
	// Two samples under the timeout raise the limit twice; had the queued
	// call's 15ms in the queue been counted, its 25ms would have been a
	// drop, leaving 2.
	assert.Equal(t, 3, limitNow(), "the holder's 15ms and the queued call's 10ms of run")
}

// The latency a semaphore's adaptive limit samples is the run's: the
// time an execution waited for its rate limiter's token (RateLimit
// MaxWait) is not the downstream's, as the time in a pool's queue or in
// the backlog is not.
func TestAdaptiveLimitLeavesTheRateLimitWaitOutOfTheLatency(t *testing.T) {
	h, spy := newSpiedHarness(t)
	c := New("Waiting", func(ctx context.Context, ms int) (string, error) {
		h.clock.Advance(time.Duration(ms) * time.Millisecond)
		return userName(ms), nil
	}, WithRegistry(h.reg), WithConfig(Config{
		Isolation:             SemaphoreIsolation,
		Timeout:               -1,
		MaxConcurrentRequests: 1,
		AdaptiveLimit:         limit.AIMD{MinLimit: 1, MaxLimit: 5, Timeout: 20 * time.Millisecond},
		RateLimit:             RateLimitConfig{Enabled: true, Rate: 10, Burst: 1, MaxWait: 150 * time.Millisecond},
	}))
	_, err := c.Execute(context.Background(), 10) // takes the token there is
	require.NoError(t, err)
	h.completion()
	l := h.state("Waiting").limiter.Load()
	assert.Equal(t, 2, l.Limit(), "10ms: 1 in flight ≥ 1/2, L + 1")

	call := goCall(func() (string, error) { return c.Execute(context.Background(), 10) })
	wait := recv(t, spy.armed, "the wait for a token")
	assert.Equal(t, 90*time.Millisecond, wait)
	h.clock.Advance(wait)
	require.NoError(t, awaitCall(t, call).err)
	h.completion()
	assert.Equal(t, 3, l.Limit(), "10ms of run, 1 in flight ≥ 2/2: L + 1; counted with the 90ms wait, it would be a drop")
}

// A pointer to an algorithm, nil or not, is refused by Configure and
// ConfigurePool with an error, as any bad configuration at run time: a
// nil one would panic in its Validate, and any would compare by address
// where algorithms compare by value.
func TestAdaptiveLimitPointerIsAnError(t *testing.T) {
	r := NewRegistry()
	defer r.Close()
	var v *limit.Vegas
	var err error
	require.NotPanics(t, func() {
		err = r.Configure("GetUser", Config{Isolation: SemaphoreIsolation, AdaptiveLimit: v})
	})
	require.ErrorIs(t, err, ErrInvalidConfig)
	require.ErrorIs(t, err, limit.ErrInvalidConfig)
	assert.Contains(t, err.Error(), "command: Config.AdaptiveLimit: limit: invalid config: *limit.Vegas is a pointer")
	var a *limit.AIMD
	require.NotPanics(t, func() { err = r.ConfigurePool("Users", PoolConfig{AdaptiveLimit: a}) })
	require.ErrorIs(t, err, ErrInvalidConfig)
	assert.Contains(t, err.Error(), "command: PoolConfig.AdaptiveLimit")
	err = r.Configure("GetUser", Config{Isolation: SemaphoreIsolation, AdaptiveLimit: &limit.Gradient2{}})
	require.ErrorIs(t, err, ErrInvalidConfig)
	assert.NoError(t, r.Configure("GetUser", Config{Isolation: SemaphoreIsolation, AdaptiveLimit: limit.Gradient2{}}))
}

// taggedVegas is an algorithm a program might wrap a Vegas in; its slice
// makes it a type that cannot be compared.
type taggedVegas struct {
	limit.Vegas
	tags []string
}

// An algorithm of a type that cannot be compared is refused with an
// error, as a pointer is: Configure compares algorithms to tell a live
// change from one written back, and comparing it would panic.
func TestAdaptiveLimitUncomparableIsAnError(t *testing.T) {
	r := NewRegistry()
	defer r.Close()
	a := taggedVegas{tags: []string{"edge"}}
	for range 2 {
		var err error
		require.NotPanics(t, func() {
			err = r.Configure("GetUser", Config{Isolation: SemaphoreIsolation, AdaptiveLimit: a})
		})
		require.ErrorIs(t, err, ErrInvalidConfig)
		require.ErrorIs(t, err, limit.ErrInvalidConfig)
		assert.Contains(t, err.Error(), "command: Config.AdaptiveLimit")
		require.NotPanics(t, func() { err = r.ConfigurePool("Users", PoolConfig{AdaptiveLimit: a}) })
		require.ErrorIs(t, err, ErrInvalidConfig)
		assert.Contains(t, err.Error(), "command: PoolConfig.AdaptiveLimit")
	}
}

// An ObservableCommand read with First answered: its execution ends
// EMIT then CANCELLED, as Hystrix's first() does, but its Observable gave
// the value its caller wanted, and the adaptive limit must see that
// success. Were it not sampled, an ObservableCommand read with First
// would feed its limit only failures and timeouts: AIMD would only ever
// back off, and no algorithm would ever grow.
func TestAdaptiveLimitSamplesAnObservableCommandsFirst(t *testing.T) {
	aimd := limit.AIMD{MinLimit: 1, MaxLimit: 5, Timeout: -1}
	for _, tc := range []struct {
		name string
		cfg  Config
		pool bool
	}{
		{"semaphore", Config{Isolation: SemaphoreIsolation, Timeout: -1, MaxConcurrentRequests: 1, AdaptiveLimit: aimd}, false},
		{"semaphore with a timeout", Config{Isolation: SemaphoreIsolation, Timeout: time.Second, MaxConcurrentRequests: 1, AdaptiveLimit: aimd}, false},
		{"pool", Config{Isolation: PoolIsolation, Pool: "Lines", Timeout: time.Second}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			limitNow := func() int { return h.state("Lines").limiter.Load().Limit() }
			if tc.pool {
				require.NoError(t, h.reg.ConfigurePool("Lines", PoolConfig{CoreSize: 1, AdaptiveLimit: aimd}))
				limitNow = func() int { return h.reg.pool("Lines", false).PoolStatus().CoreSize }
			}
			cmd := NewObservable("Lines", func(context.Context, int) observable.Observable[string] {
				return observable.Defer(func() observable.Observable[string] {
					h.clock.Advance(10 * time.Millisecond)
					return observable.Just("line", "more")
				})
			}, WithRegistry(h.reg), WithConfig(tc.cfg))
			require.Equal(t, 1, limitNow())

			v, err := cmd.ToObservable(context.Background(), 1).First(context.Background())
			require.NoError(t, err)
			assert.Equal(t, "line", v)
			assert.Equal(t, evs("EMIT", "CANCELLED"), h.events())
			assert.Equal(t, 2, limitNow(), "the first value came: 1 in flight ≥ 1/2, L + 1")

			_, err = cmd.Execute(context.Background(), 1)
			require.NoError(t, err)
			h.completion()
			assert.Equal(t, 3, limitNow(), "a stream read to its end is one sample")
		})
	}
}

// labelledVegas is an algorithm a program might wrap a Vegas in, of a
// type that can be compared.
type labelledVegas struct {
	limit.Vegas
	label string
}

// A pointer to a type that wraps an algorithm is refused as a pointer to
// the algorithm is: a nil one would panic in its Validate, and any would
// compare by address, so that writing back an equal configuration made
// anew would restart the limit.
func TestAdaptiveLimitPointerToAWrapperIsAnError(t *testing.T) {
	r := NewRegistry()
	defer r.Close()
	var nilWrapper *labelledVegas
	for _, a := range []limit.Algorithm{nilWrapper, &labelledVegas{label: "edge"}} {
		var err error
		require.NotPanics(t, func() {
			err = r.Configure("GetUser", Config{Isolation: SemaphoreIsolation, AdaptiveLimit: a})
		})
		require.ErrorIs(t, err, ErrInvalidConfig)
		require.ErrorIs(t, err, limit.ErrInvalidConfig)
		assert.Contains(t, err.Error(), "is a pointer")
		require.NotPanics(t, func() { err = r.ConfigurePool("Users", PoolConfig{AdaptiveLimit: a}) })
		require.ErrorIs(t, err, ErrInvalidConfig)
	}
	assert.NoError(t, r.Configure("GetUser", Config{Isolation: SemaphoreIsolation, AdaptiveLimit: labelledVegas{label: "edge"}}))
}

// namedAlgorithm is how a program may name an algorithm it configures:
// a comparable struct that embeds the limit.Algorithm interface. Its
// type passes a type-level check, but what it holds may be nil, a
// pointer, or a value that cannot be compared.
type namedAlgorithm struct {
	limit.Algorithm
	name string
}

// An algorithm that wraps a nil algorithm, a pointer to one, or one that
// cannot be compared is refused with an error, as those algorithms are
// unwrapped: Configure must not panic in Validate (nil), compare by
// address (pointer), or panic comparing it when it is written back
// (uncomparable).
func TestAdaptiveLimitWrappedAlgorithmIsChecked(t *testing.T) {
	for _, tc := range []struct {
		name string
		a    limit.Algorithm
	}{
		{"nil", namedAlgorithm{name: "edge"}},
		{"nil pointer", namedAlgorithm{Algorithm: (*limit.Vegas)(nil), name: "edge"}},
		{"pointer", namedAlgorithm{Algorithm: &limit.Vegas{}, name: "edge"}},
		{"uncomparable", namedAlgorithm{Algorithm: taggedVegas{tags: []string{"x"}}, name: "edge"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := NewRegistry()
			defer r.Close()
			for range 2 {
				var err error
				require.NotPanics(t, func() {
					err = r.Configure("GetUser", Config{Isolation: SemaphoreIsolation, AdaptiveLimit: tc.a})
				})
				require.ErrorIs(t, err, ErrInvalidConfig)
				require.ErrorIs(t, err, limit.ErrInvalidConfig)
				assert.Contains(t, err.Error(), "command: Config.AdaptiveLimit")
				require.NotPanics(t, func() { err = r.ConfigurePool("Users", PoolConfig{AdaptiveLimit: tc.a}) })
				require.ErrorIs(t, err, ErrInvalidConfig)
				assert.Contains(t, err.Error(), "command: PoolConfig.AdaptiveLimit")
			}
		})
	}
	// A wrapper of a valid algorithm value is an algorithm as any other.
	r := NewRegistry()
	defer r.Close()
	a := namedAlgorithm{Algorithm: limit.Vegas{MaxLimit: 8}, name: "edge"}
	require.NoError(t, r.Configure("GetUser", Config{Isolation: SemaphoreIsolation, AdaptiveLimit: a}))
	require.NoError(t, r.Configure("GetUser", Config{Isolation: SemaphoreIsolation, AdaptiveLimit: a}))
}
