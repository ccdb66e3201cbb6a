//go:build !race

package command

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/rxhystrix/rxhystrix/breaker"
	"github.com/rxhystrix/rxhystrix/observable"
)

// A passing semaphore Execute and a short circuit with no fallback
// allocate nothing: the execution stays on the caller's stack.
func TestExecuteAllocatesNothing(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	constant := func(context.Context, int) (string, error) { return "user", nil }
	plain := New("Plain", constant, WithRegistry(h.reg), WithConfig(Config{Isolation: SemaphoreIsolation, Timeout: -1}))
	open := New("Open", constant, WithRegistry(h.reg),
		WithConfig(Config{Isolation: SemaphoreIsolation, Timeout: -1, Breaker: breaker.Config{ForceOpen: true}}))
	h.reg.onCompletion = nil
	for name, c := range map[string]*Command[int, string]{"passing": plain, "short-circuited": open} {
		assert.Zero(t, testing.AllocsPerRun(100, func() { _, _ = c.Execute(ctx, 1) }), name)
	}
}

// First of an ObservableCommand whose Observable is a Single runs on the
// caller's stack, as Execute does: it allocates only what ToObservable
// returns (the execution, and the Observable's source holding it), and
// under pool isolation the run handed to the worker; with retries on, a
// first attempt that answers adds nothing.
func TestFirstOfAnObservableCommandAllocatesItsObservable(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	if err := h.reg.ConfigurePool("Lines", PoolConfig{CoreSize: 1}); err != nil {
		t.Fatal(err)
	}
	line := observable.Just("line") // made once: what the user's code allocates is not counted
	one := func(context.Context, int) observable.Observable[string] { return line }
	h.reg.onCompletion = nil
	for _, c := range []struct {
		cfg  Config
		want float64
	}{
		{Config{Isolation: SemaphoreIsolation, Timeout: -1}, 2},
		{Config{Isolation: PoolIsolation, Pool: "Lines", Timeout: time.Second}, 3},
		{Config{Isolation: SemaphoreIsolation, Timeout: -1, Retry: RetryConfig{MaxAttempts: 3}}, 2},
	} {
		cmd := NewObservable(fmt.Sprintf("Lines%v%d", c.cfg.Isolation, c.cfg.Retry.MaxAttempts), one, WithRegistry(h.reg), WithConfig(c.cfg))
		got := testing.AllocsPerRun(100, func() { _, _ = cmd.ToObservable(ctx, 1).First(ctx) })
		assert.LessOrEqual(t, got, c.want, c.cfg.Isolation.String())
	}
}

// A subscription to an ObservableCommand that sees the stream to its
// end hears of its subscriber leaving through a word of the subscriber's
// context (watchEnd): it allocates what ToObservable returns (2), the
// subscriber and the slice of ToSlice (2), the subscription and its
// cancel function (2), where a registration of the context's AfterFunc
// added its hook, the function that stops it and the context's watch
// state.
func TestSubscriptionToAnObservableCommandWatchesItsSubscriberInPlace(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	line := observable.Just("line")
	cmd := NewObservable("Watched", func(context.Context, int) observable.Observable[string] { return line },
		WithRegistry(h.reg), WithConfig(Config{Isolation: SemaphoreIsolation, Timeout: -1}))
	h.reg.onCompletion = nil
	assert.LessOrEqual(t, testing.AllocsPerRun(100, func() { _, _ = cmd.ToObservable(ctx, 1).ToSlice(ctx) }), 6.0)
}

// A passing hedged Execute allocates only its first attempt's context:
// the attempts of a call that left nothing behind serve the next call
// (callHedged).
func TestHedgedExecuteAllocatesOnlyTheFirstAttemptsContext(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	c := New("Hedged", func(context.Context, int) (string, error) { return "user", nil }, WithRegistry(h.reg),
		WithConfig(Config{Isolation: SemaphoreIsolation, Timeout: -1, Hedge: HedgeConfig{MaxHedges: 1, Delay: time.Hour}}))
	h.reg.onCompletion = nil
	assert.LessOrEqual(t, testing.AllocsPerRun(100, func() { _, _ = c.Execute(ctx, 1) }), 1.0)
	assert.LessOrEqual(t, bytesPerRun(1000, func() { _, _ = c.Execute(ctx, 1) }), 128.0,
		"the attempts (448 bytes more) are not allocated again")
}

// A subscription of an ObservableCommand that retries, whose first
// attempt answers, makes no retry operator: it allocates what a
// subscription that does not retry does, and the attempts (the
// attempts, the first's info and the two observers around the
// subscriber), where the operators made eight more.
func TestRetriedStreamWhoseFirstAttemptAnswersMakesNoRetries(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	line := observable.Just("line")
	one := func(context.Context, int) observable.Observable[string] { return line }
	h.reg.onCompletion = nil
	allocs := func(key string, cfg Config) float64 {
		cfg.Isolation, cfg.Timeout = SemaphoreIsolation, -1
		cmd := NewObservable(key, one, WithRegistry(h.reg), WithConfig(cfg))
		return testing.AllocsPerRun(100, func() { _, _ = cmd.ToObservable(ctx, 1).ToSlice(ctx) })
	}
	plain := allocs("Plain", Config{})
	assert.LessOrEqual(t, allocs("Retried", Config{Retry: RetryConfig{MaxAttempts: 3}}), plain+4)
}

// bytesPerRun is testing.AllocsPerRun for the bytes allocated.
func bytesPerRun(runs int, f func()) float64 {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	f() // warm up
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range runs {
		f()
	}
	runtime.ReadMemStats(&after)
	return float64(after.TotalAlloc-before.TotalAlloc) / float64(runs)
}
