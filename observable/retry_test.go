package observable

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rxhystrix/rxhystrix/internal/clock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

var errFlaky = errors.New("flaky")

// failing returns a Single that fails its first n calls, then returns
// the number of the call that succeeded, and counts its calls.
func failing(n int, calls *atomic.Int32) Observable[int] {
	return FromFunc(func(context.Context) (int, error) {
		c := int(calls.Add(1))
		if c <= n {
			return 0, errFlaky
		}
		return c, nil
	})
}

func TestBackoffDelaysAreExponentialCappedAndJittered(t *testing.T) {
	b := Backoff{Initial: 100 * time.Millisecond, Max: time.Second, Multiplier: 2, Jitter: NoJitter}
	var got []time.Duration
	for n := 1; n <= 6; n++ {
		got = append(got, b.Delay(n, 0.5))
	}
	assert.Equal(t, []time.Duration{100e6, 200e6, 400e6, 800e6, 1e9, 1e9}, got)

	b.Jitter = FullJitter
	assert.Equal(t, 100*time.Millisecond, b.Delay(2, 0.5), "full jitter: u·base")
	assert.Equal(t, time.Duration(0), b.Delay(2, 0))
	b.Jitter = ProportionalJitter
	assert.Equal(t, 160*time.Millisecond, b.Delay(2, 0), "gRPC: base·0.8 at u=0")
	assert.Equal(t, 200*time.Millisecond, b.Delay(2, 0.5))

	assert.Equal(t, 50*time.Millisecond, Backoff{}.Delay(1, 0.5), "defaults: 100ms full jitter")
}

func TestBackoffValidateNamesTheField(t *testing.T) {
	for _, tc := range []struct {
		b    Backoff
		want string
	}{
		{Backoff{Initial: -1}, "Backoff.Initial"},
		{Backoff{Max: -1}, "Backoff.Max"},
		{Backoff{Multiplier: 0.5}, "Backoff.Multiplier"},
		{Backoff{Jitter: 7}, "Backoff.Jitter"},
		{Backoff{Initial: 2 * time.Second, Max: time.Second}, "Backoff.Initial"},
	} {
		err := tc.b.Validate()
		require.ErrorIs(t, err, ErrInvalidPolicy)
		assert.Contains(t, err.Error(), tc.want)
		assert.NotContains(t, err.Error(), "invalid policy", "the message is the field's")
	}
	for _, b := range []Backoff{{Multiplier: 1}, {Jitter: NoJitter}, {Initial: time.Second, Max: time.Second}} {
		assert.NoError(t, b.Validate(), "%+v", b)
	}
	err := RetryPolicy{MaxAttempts: -1}.Validate()
	require.ErrorIs(t, err, ErrInvalidPolicy)
	assert.Contains(t, err.Error(), "RetryPolicy.MaxAttempts")
	err = RetryPolicy{Backoff: Backoff{Max: -1}}.Validate()
	require.ErrorIs(t, err, ErrInvalidPolicy)
	assert.Contains(t, err.Error(), "RetryPolicy.Backoff.Max")
	for _, p := range []HedgePolicy{{MaxHedges: -1, Delay: func() time.Duration { return time.Second }}, {}} {
		err := p.Validate()
		require.ErrorIs(t, err, ErrInvalidPolicy, "%+v", p)
		assert.Contains(t, err.Error(), "HedgePolicy.")
	}
}

func TestRetryFirstWaitsEachBackoffOnTheClock(t *testing.T) {
	mc := clock.NewManual(epoch)
	var calls atomic.Int32
	p := RetryPolicy{MaxAttempts: 4, Backoff: Backoff{Initial: 100 * time.Millisecond, Jitter: NoJitter}}
	o := failing(3, &calls).RetryOn(p, mc)

	got := make(chan int, 1)
	go func() {
		v, err := o.First(context.Background())
		assert.NoError(t, err)
		got <- v
	}()
	for n, wait := range []time.Duration{100e6, 200e6, 400e6} {
		require.NoError(t, mc.BlockUntil(context.Background(), 1))
		assert.Equal(t, int32(n+1), calls.Load(), "attempt %d made, waiting", n+1)
		mc.Advance(wait - 1)
		assert.Equal(t, int32(n+1), calls.Load(), "not before the backoff")
		mc.Advance(1)
	}
	assert.Equal(t, 4, <-got)
}

func TestRetryStopsAtMaxAttemptsAndOnUnretryableErrors(t *testing.T) {
	mc := clock.NewManual(epoch)
	var calls atomic.Int32
	p := RetryPolicy{MaxAttempts: 2, Backoff: Backoff{Initial: time.Nanosecond, Jitter: NoJitter}}
	done := make(chan error)
	go func() {
		_, err := failing(5, &calls).RetryOn(p, mc).First(context.Background())
		done <- err
	}()
	require.NoError(t, mc.BlockUntil(context.Background(), 1))
	mc.Advance(time.Nanosecond)
	assert.ErrorIs(t, <-done, errFlaky)
	assert.Equal(t, int32(2), calls.Load())

	calls.Store(0)
	p.Retryable = func(err error) bool { return !errors.Is(err, errFlaky) }
	_, err := failing(5, &calls).RetryOn(p, mc).First(context.Background())
	assert.ErrorIs(t, err, errFlaky)
	assert.Equal(t, int32(1), calls.Load(), "an unretryable error is the result at once")
}

func TestRetryStartsNoRetryThatCannotFinishBeforeTheDeadline(t *testing.T) {
	mc := clock.NewManual(epoch)
	var calls atomic.Int32
	p := RetryPolicy{
		MaxAttempts: 5,
		Backoff:     Backoff{Initial: 100 * time.Millisecond, Jitter: NoJitter},
		AttemptTime: func() time.Duration { return 50 * time.Millisecond },
	}
	// 100ms of wait and 50ms of attempt fit in 160ms; the second retry's
	// 200ms do not.
	ctx, cancel := context.WithDeadline(context.Background(), mc.Now().Add(160*time.Millisecond))
	defer cancel()
	done := make(chan error)
	go func() {
		_, err := failing(5, &calls).RetryOn(p, mc).First(ctx)
		done <- err
	}()
	require.NoError(t, mc.BlockUntil(context.Background(), 1))
	mc.Advance(100 * time.Millisecond)
	assert.ErrorIs(t, <-done, errFlaky, "the last failure is the result")
	assert.Equal(t, int32(2), calls.Load())
}

func TestRetryPolicyNextRefusesWhatMustNotBeRetried(t *testing.T) {
	p := RetryPolicy{MaxAttempts: 3, Backoff: Backoff{Initial: time.Millisecond, Jitter: NoJitter}}
	live := context.Background()
	ended, cancel := context.WithCancel(live)
	cancel()
	for _, tc := range []struct {
		name  string
		ctx   context.Context
		n     int
		err   error
		retry bool
	}{
		{"a failure with attempts left", live, 2, errFlaky, true},
		{"the attempts used up", live, 3, errFlaky, false},
		{"the subscriber's context ended", ended, 1, errFlaky, false},
		{"an attempt that was cancelled, the subscriber still there", live, 1, fmt.Errorf("run: %w", context.Canceled), false},
	} {
		d, retry := p.Next(tc.ctx, epoch, tc.n, tc.err)
		assert.Equal(t, tc.retry, retry, tc.name)
		if retry {
			assert.Equal(t, time.Duration(tc.n)*time.Millisecond, d, tc.name)
		}
	}
}

func TestRetryPolicyNextJittersWithRandAndFitsTheDeadline(t *testing.T) {
	p := RetryPolicy{MaxAttempts: 3, Backoff: Backoff{Initial: 100 * time.Millisecond}, Rand: func() float64 { return 0.25 }}
	d, retry := p.Next(context.Background(), epoch, 1, errFlaky)
	assert.True(t, retry)
	assert.Equal(t, 25*time.Millisecond, d, "full jitter: 0.25 of 100ms")

	ctx, cancel := context.WithDeadline(context.Background(), epoch.Add(40*time.Millisecond))
	defer cancel()
	_, retry = p.Next(ctx, epoch, 1, errFlaky)
	assert.True(t, retry, "a wait of 25ms ends before the deadline, 40ms away")
	p.AttemptTime = func() time.Duration { return 15 * time.Millisecond }
	_, retry = p.Next(ctx, epoch, 1, errFlaky)
	assert.False(t, retry, "a wait of 25ms and an attempt of 15ms end at the deadline, not before it")
}

func TestRetryPermitRefusesRetries(t *testing.T) {
	var calls, asked atomic.Int32
	p := RetryPolicy{MaxAttempts: 3, Permit: func() bool { asked.Add(1); return false }}
	_, err := failing(5, &calls).RetryOn(p, clock.NewManual(epoch)).First(context.Background())
	assert.ErrorIs(t, err, errFlaky)
	assert.Equal(t, int32(1), calls.Load())
	assert.Equal(t, int32(1), asked.Load())
}

func TestRetrySubscriptionWaitsOnTimersAndEndsWithItsContext(t *testing.T) {
	mc := clock.NewManual(epoch)
	var calls atomic.Int32
	p := RetryPolicy{MaxAttempts: 3, Backoff: Backoff{Initial: time.Second, Jitter: NoJitter}}
	o := failing(1, &calls).RetryOn(p, mc)

	f := o.ToFuture(context.Background())
	require.NoError(t, mc.BlockUntil(context.Background(), 1))
	mc.Advance(time.Second)
	v, err := f.Get(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 2, v)

	// Leaving during the wait ends it with the last failure and stops
	// the timer.
	calls.Store(0)
	ctx, cancel := context.WithCancel(context.Background())
	f = o.ToFuture(ctx)
	require.NoError(t, mc.BlockUntil(context.Background(), 1))
	cancel()
	_, err = f.Get(context.Background())
	assert.Error(t, err)
	// The Future answers as its context ends; the wait's own watch of
	// that context stops the timer on a goroutine of its own.
	require.Eventually(t, func() bool { return mc.Pending() == 0 }, 10*time.Second, time.Millisecond,
		"the wait's timer is stopped")
	assert.Equal(t, int32(1), calls.Load())
}

func TestRetryOfAStreamResubscribes(t *testing.T) {
	mc := clock.NewManual(epoch)
	var calls atomic.Int32
	o := Create(func(ctx context.Context, obs Observer[int]) {
		n := int(calls.Add(1))
		obs.OnNext(n * 10)
		if n < 3 {
			obs.OnError(errFlaky)
			return
		}
		obs.OnCompleted()
	})
	p := RetryPolicy{MaxAttempts: 3, Backoff: Backoff{Initial: time.Millisecond, Jitter: NoJitter}}
	got := make(chan []int)
	go func() {
		vs, err := o.RetryOn(p, mc).ToSlice(context.Background())
		assert.NoError(t, err)
		got <- vs
	}()
	for _, wait := range []time.Duration{time.Millisecond, 2 * time.Millisecond} {
		require.NoError(t, mc.BlockUntil(context.Background(), 1))
		mc.Advance(wait)
	}
	assert.Equal(t, []int{10, 20, 30}, <-got, "each attempt's values, as Rx's retry")
}

func TestRetryOfASucceedingSingleAllocatesNothingPerAttempt(t *testing.T) {
	o := Just(1).RetryOn(RetryPolicy{}, clock.NewManual(epoch))
	ctx := context.Background()
	allocs := testing.AllocsPerRun(100, func() { _, _ = o.First(ctx) })
	assert.Zero(t, allocs)
}

// retryAfterNoValue is a Retrier that retries at once an attempt that
// failed before emitting, as a command's decides.
type retryAfterNoValue struct{ emitted *atomic.Bool }

func (r retryAfterNoValue) Next(_ context.Context, _ time.Time, n int, _ error) (time.Duration, bool) {
	return 0, n < 5 && !r.emitted.Swap(false)
}

func TestRetryWithAsksItsRetrierAfterEachFailure(t *testing.T) {
	var calls atomic.Int32
	var emitted atomic.Bool
	o := Create(func(ctx context.Context, obs Observer[int]) {
		n := int(calls.Add(1))
		if n == 3 {
			emitted.Store(true)
			obs.OnNext(n)
		}
		obs.OnError(errFlaky)
	})
	vs, err := o.RetryWith(retryAfterNoValue{&emitted}, clock.NewManual(epoch)).ToSlice(context.Background())
	assert.ErrorIs(t, err, errFlaky)
	assert.Equal(t, []int{3}, vs)
	assert.Equal(t, int32(3), calls.Load(), "the retrier refused the retry after a value")
	assert.Panics(t, func() { o.RetryWith(nil, clock.Real) })
	assert.PanicsWithValue(t, "observable: RetryWith with nil r or c", func() { o.RetryWith((*RetryPolicy)(nil), clock.Real) },
		"a nil policy is refused at once, not at the first failure")
}

// boundedRetrier retries the first failure after a second, its wait
// bounded by bound.
type boundedRetrier struct{ bound context.Context }

func (r boundedRetrier) Next(_ context.Context, _ time.Time, n int, _ error) (time.Duration, bool) {
	return time.Second, n == 1
}

func (r boundedRetrier) RetryBound() context.Context { return r.bound }

// The end of a RetryBounder's bound during a wait ends the retries at
// once with the bound's cause, the subscriber still there to get it; the
// timer and the watches let go; no attempt follows. A stream, a Single's
// subscription and a Single's Call all end so.
func TestRetryWithABoundEndsTheWaitWhenTheBoundEnds(t *testing.T) {
	errCallerLeft := errors.New("caller left")
	stream := func(calls *atomic.Int32) Observable[int] {
		return Create(func(ctx context.Context, obs Observer[int]) {
			calls.Add(1)
			obs.OnError(errFlaky)
		})
	}
	single := func(calls *atomic.Int32) Observable[int] { return failing(100, calls) }
	for _, tc := range []struct {
		name string
		make func(*atomic.Int32) Observable[int]
		take func(Observable[int]) error
	}{
		{"stream", stream, func(o Observable[int]) error { _, err := o.ToSlice(context.Background()); return err }},
		{"Single subscription", single, func(o Observable[int]) error {
			_, err := o.ToFuture(context.Background()).Get(context.Background())
			return err
		}},
		{"Single Call", single, func(o Observable[int]) error { _, err := o.First(context.Background()); return err }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mc := clock.NewManual(epoch)
			var calls atomic.Int32
			bound, leave := context.WithCancelCause(context.Background())
			o := tc.make(&calls).RetryWith(boundedRetrier{bound}, mc)
			got := make(chan error, 1)
			go func() { got <- tc.take(o) }()
			require.NoError(t, mc.BlockUntil(context.Background(), 1))
			leave(errCallerLeft)
			select {
			case err := <-got:
				assert.ErrorIs(t, err, errCallerLeft)
			case <-time.After(10 * time.Second):
				mc.Advance(time.Second) // the retry, which fails: the call ends
				<-got
				t.Fatal("the wait outlived its bound")
			}
			require.Eventually(t, func() bool { return mc.Pending() == 0 }, 10*time.Second, time.Millisecond,
				"the wait's timer is stopped")
			mc.Advance(time.Hour)
			assert.Equal(t, int32(1), calls.Load(), "no attempt after the bound ended")
		})
	}
}

// A bound that ended before a wait begins ends the retries at once.
func TestRetryWithABoundThatHasEndedMakesNoRetry(t *testing.T) {
	bound, leave := context.WithCancel(context.Background())
	leave()
	var calls atomic.Int32
	_, err := failing(100, &calls).RetryWith(boundedRetrier{bound}, clock.NewManual(epoch)).First(context.Background())
	assert.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, int32(1), calls.Load())
}

// A Max as long as a Duration can be ("no cap") caps the delay there: the
// delay neither wraps around to a negative duration (an immediate retry)
// nor, with proportional jitter, goes past it.
func TestBackoffDelayNearTheLongestDurationDoesNotOverflow(t *testing.T) {
	b := Backoff{Initial: time.Second, Max: math.MaxInt64, Multiplier: 2, Jitter: NoJitter}
	require.NoError(t, b.Validate())
	for _, n := range []int{1, 40, 64, 100, 10000} {
		assert.Positive(t, b.Delay(n, 0.5), "NoJitter, retry %d", n)
	}
	b.Jitter = ProportionalJitter
	for _, u := range []float64{0, 0.5, 0.999} {
		assert.Positive(t, b.Delay(100, u), "ProportionalJitter, u=%v", u)
	}
	b.Jitter = FullJitter
	assert.Positive(t, b.Delay(100, 0.999), "FullJitter")
}

// Nor does the wait, with the expected time of the attempt added, wrap
// around when the policy decides whether a retry fits before a deadline.
func TestRetryPolicyNextWithTheLongestBackoffDoesNotFitBeforeADeadline(t *testing.T) {
	p := &RetryPolicy{
		MaxAttempts: 1000,
		Backoff:     Backoff{Initial: time.Second, Max: math.MaxInt64, Multiplier: 2, Jitter: NoJitter},
		AttemptTime: func() time.Duration { return time.Second },
	}
	ctx, cancel := context.WithDeadline(context.Background(), epoch.Add(time.Hour))
	defer cancel()
	d, ok := p.Next(ctx, epoch, 100, errBoom)
	assert.False(t, ok, "a retry after a wait of %v cannot finish within the hour", d)
}

// retryAtOnce is a Retrier that retries every failure at once, up to
// attempts in all.
type retryAtOnce struct{ attempts int }

func (r retryAtOnce) Next(_ context.Context, _ time.Time, n int, _ error) (time.Duration, bool) {
	return 0, n < r.attempts
}

// stackDepth returns the number of frames on the calling goroutine's
// stack.
func stackDepth() int {
	pcs := make([]uintptr, 4096)
	return runtime.Callers(0, pcs)
}

// A retry with no wait of an attempt that fails at once starts on the
// stack of that failure; the attempts are made one after another, so that
// the stack does not grow with each (a million of them would pass the
// runtime's limit and end the program).
func TestRetryAtOnceOfAnAttemptThatFailsAtOnceDoesNotDeepenTheStack(t *testing.T) {
	const attempts = 50
	var depths []int
	for name, o := range map[string]Observable[int]{
		"Single": FromFunc(func(context.Context) (int, error) {
			depths = append(depths, stackDepth())
			return 0, errFlaky
		}),
		"Create": Create(func(_ context.Context, obs Observer[int]) {
			depths = append(depths, stackDepth())
			obs.OnError(errFlaky)
		}),
	} {
		depths = depths[:0]
		rec := newRecorder[int]()
		o.RetryWith(retryAtOnce{attempts}, clock.NewManual(epoch)).Subscribe(context.Background(), rec)
		rec.wait(t)
		rec.check(t, nil, errFlaky, false)
		require.Len(t, depths, attempts, name)
		assert.Equal(t, depths[1], depths[attempts-1], "%s: the stack at the second attempt and at the last", name)
	}
}

// A subscriber that leaves during a retry's wait has cancelled the
// subscription: the operators between it and the retry (DoOnTerminate,
// DoOnError, OnErrorResumeNext) must not see the last failure as if the
// source had failed, as DoOnTerminate's doc promises.
func TestRetryUnsubscribedDuringAWaitTellsNoOperatorDownstream(t *testing.T) {
	mc := clock.NewManual(epoch)
	var calls atomic.Int32
	src := Create(func(ctx context.Context, o Observer[int]) {
		calls.Add(1)
		o.OnError(errFlaky)
	})
	p := RetryPolicy{MaxAttempts: 3, Backoff: Backoff{Initial: time.Second, Jitter: NoJitter}}
	var terminated, errored, resumed atomic.Int32
	o := src.RetryOn(p, mc).
		DoOnTerminate(func() { terminated.Add(1) }).
		DoOnError(func(error) { errored.Add(1) }).
		OnErrorResumeNext(func(error) Observable[int] {
			resumed.Add(1)
			return Just(0)
		})
	rec := newRecorder[int]()
	before := goleak.IgnoreCurrent()
	sub := o.Subscribe(context.Background(), rec)
	require.Equal(t, 1, mc.Pending(), "the retry waits")
	sub.Unsubscribe()
	waitDone(t, sub.Done(), "subscription")
	// The wait learns of the end on the goroutine of context.AfterFunc:
	// once that has returned, the wait has done all it does.
	require.NoError(t, goleak.Find(before))
	assert.Zero(t, mc.Pending(), "the wait's timer is stopped")
	assert.Zero(t, terminated.Load(), "DoOnTerminate after Unsubscribe")
	assert.Zero(t, errored.Load(), "DoOnError after Unsubscribe")
	assert.Zero(t, resumed.Load(), "OnErrorResumeNext's function after Unsubscribe")
	assert.Equal(t, int32(1), calls.Load())
	rec.check(t, nil, nil, false)
}
