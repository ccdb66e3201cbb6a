package command

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/rxhystrix/rxhystrix/breaker"
	"github.com/rxhystrix/rxhystrix/internal/clock"
	"github.com/rxhystrix/rxhystrix/metricsstream"
	"github.com/rxhystrix/rxhystrix/observable"
)

// What an ObservableCommand's Observable does in a step.
type bodyKind int

const (
	bodyOne               bodyKind = iota // Just(1), a Single
	bodyMany                              // Just(1, 2, 3)
	bodyEmpty                             // completes at once
	bodyError                             // Error(errBoom), a Single
	bodyBadRequest                        // fails with a bad request
	bodyFailsWithErrEmpty                 // fails with observable.ErrEmpty, which is no completion
	bodyValueThenError                    // emits 1, then fails
	bodyConstructPanics                   // construct panics
	bodySubscribePanics                   // panics when subscribed
	bodyAsync                             // emits 1 and 2 from a goroutine, then completes
	bodyAsyncEmpty                        // completes from a goroutine
	bodyAsyncError                        // fails from a goroutine
	bodyValueThenWaits                    // emits 1, then waits for its context's end and fails with its error
)

var bodyKinds = []bodyKind{bodyOne, bodyMany, bodyEmpty, bodyError, bodyBadRequest,
	bodyFailsWithErrEmpty, bodyValueThenError, bodyConstructPanics, bodySubscribePanics,
	bodyAsync, bodyAsyncEmpty, bodyAsyncError, bodyValueThenWaits}

func (b bodyKind) String() string {
	return [...]string{"one", "many", "empty", "error", "bad request", "fails with ErrEmpty",
		"value then error", "construct panics", "subscribe panics", "async", "async empty",
		"async error", "value then waits"}[b]
}

// body returns the Observable of kind b; a fallback's is the same with
// its values plus 10 and errFallbackBoom for errBoom.
func body(b bodyKind, plus int, boom error) observable.Observable[int] {
	asyncly := func(emit func(o observable.Observer[int])) observable.Observable[int] {
		return observable.Create(func(ctx context.Context, o observable.Observer[int]) {
			go emit(o)
		})
	}
	switch b {
	case bodyOne:
		return observable.Just(1 + plus)
	case bodyMany:
		return observable.Just(1+plus, 2+plus, 3+plus)
	case bodyEmpty:
		return observable.Empty[int]()
	case bodyError:
		return observable.Error[int](boom)
	case bodyBadRequest:
		return observable.Error[int](BadRequest(boom))
	case bodyFailsWithErrEmpty:
		return observable.Error[int](observable.ErrEmpty)
	case bodyValueThenError:
		return observable.Create(func(ctx context.Context, o observable.Observer[int]) {
			o.OnNext(1 + plus)
			o.OnError(boom)
		})
	case bodyConstructPanics:
		panic("construct panicked")
	case bodySubscribePanics:
		return observable.Create(func(context.Context, observable.Observer[int]) { panic("subscribe panicked") })
	case bodyAsync:
		return asyncly(func(o observable.Observer[int]) {
			o.OnNext(1 + plus)
			o.OnNext(2 + plus)
			o.OnCompleted()
		})
	case bodyAsyncEmpty:
		return asyncly(func(o observable.Observer[int]) { o.OnCompleted() })
	case bodyValueThenWaits:
		return observable.Create(func(ctx context.Context, o observable.Observer[int]) {
			o.OnNext(1 + plus)
			<-ctx.Done()
			o.OnError(ctx.Err())
		})
	}
	return asyncly(func(o observable.Observer[int]) { o.OnError(boom) })
}

// How an ObservableCommand of the test falls back.
type obsFallbackKind int

const (
	obsNoFallback     obsFallbackKind = iota
	obsScalarValue                    // WithFallback returning 7
	obsScalarError                    // WithFallback failing
	obsFallbackBodies                 // WithFallbackObservable of body(kind of the input's fallback)
)

// obsStep is the input of a step: what the Observable and, with
// obsFallbackBodies, the fallback's Observable do.
type obsStep struct{ run, fallback bodyKind }

// firstKey is one ObservableCommand key in a registry of its own.
type firstKey struct {
	reg         *Registry
	completions chan completionSeen
	commands    [4]*ObservableCommand[obsStep, int] // by obsFallbackKind
}

type completionSeen struct {
	events   []string
	executed bool
}

func newFirstKey(t *rapid.T, iso Isolation, timeout time.Duration) *firstKey {
	k := &firstKey{reg: NewRegistry(WithClock(clock.NewManual(harnessStart))), completions: make(chan completionSeen, 64)}
	k.reg.onCompletion = func(c *metricsstream.Completion) {
		k.completions <- completionSeen{events: eventNames(c.Events), executed: c.Executed}
	}
	if err := k.reg.ConfigurePool("stream", PoolConfig{CoreSize: 2}); err != nil {
		t.Fatal(err)
	}
	cfg := Config{Isolation: iso, Timeout: timeout, Breaker: breaker.Config{RequestVolumeThreshold: 1 << 20}}
	construct := func(ctx context.Context, in obsStep) observable.Observable[int] { return body(in.run, 0, errBoom) }
	c := NewObservable("stream", construct, WithRegistry(k.reg), WithConfig(cfg))
	k.commands[obsNoFallback] = c
	k.commands[obsScalarValue] = c.WithFallback(func(context.Context, obsStep, error) (int, error) { return 7, nil })
	k.commands[obsScalarError] = c.WithFallback(func(context.Context, obsStep, error) (int, error) { return 0, errFallbackBoom })
	k.commands[obsFallbackBodies] = c.WithFallbackObservable(func(_ context.Context, in obsStep, _ error) observable.Observable[int] {
		return body(in.fallback, 10, errFallbackBoom)
	})
	return k
}

// First of an ObservableCommand's ToObservable runs the execution on the
// caller's goroutine (observable.FirstProducer) wherever nothing but the
// Observable can answer First first. It returns what a subscription that
// leaves at the first value returns, and records the same events and
// Completion, whatever the Observable and the fallback do: the
// subscription is the reference.
func TestFirstOfAnObservableCommandIsItsFirstSubscription(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		iso := rapid.SampledFrom(bothIsolations).Draw(rt, "isolation")
		timeout := time.Duration(-1)
		if iso == PoolIsolation && rapid.Bool().Draw(rt, "timed") {
			timeout = time.Second // the clock stays: no execution times out
		}
		fused, subscribed := newFirstKey(rt, iso, timeout), newFirstKey(rt, iso, timeout)
		defer fused.reg.Close()
		defer subscribed.reg.Close()
		for i := range rapid.IntRange(1, 6).Draw(rt, "steps") {
			step := obsStep{
				run:      rapid.SampledFrom(bodyKinds).Draw(rt, fmt.Sprintf("run %d", i)),
				fallback: rapid.SampledFrom(bodyKinds).Draw(rt, fmt.Sprintf("fallback's Observable %d", i)),
			}
			fb := rapid.SampledFrom([]obsFallbackKind{obsNoFallback, obsScalarValue, obsScalarError, obsFallbackBodies}).
				Draw(rt, fmt.Sprintf("fallback %d", i))
			ctx, cancel := context.WithCancel(context.Background())
			left := rapid.IntRange(0, 7).Draw(rt, fmt.Sprintf("caller left %d", i)) == 0
			if left {
				cancel()
			}
			v, err := fused.commands[fb].ToObservable(ctx, step).First(ctx)
			wantV, wantErr := observable.Create(func(sub context.Context, o observable.Observer[int]) {
				subscribed.commands[fb].ToObservable(ctx, step).Subscribe(sub, o)
			}).First(ctx)
			cancel()
			if v != wantV || !sameError(err, wantErr) {
				rt.Fatalf("step %d: First gave %d, %v; its subscription %d, %v", i, v, err, wantV, wantErr)
			}
			if left {
				continue // neither executed
			}
			got, want := fused.completion(rt), subscribed.completion(rt)
			if fmt.Sprint(got) != fmt.Sprint(want) {
				rt.Fatalf("step %d: First recorded %v; its subscription %v", i, got, want)
			}
			fused.released(rt)
			subscribed.released(rt)
		}
	})
}

// sameError reports whether a and b are the same error for a caller: the
// same text, the same sentinels and the same failure.
func sameError(a, b error) bool {
	if (a == nil) != (b == nil) {
		return false
	}
	if a == nil {
		return true
	}
	var ea, eb *Error
	if errors.As(a, &ea) != errors.As(b, &eb) || (ea != nil && ea.Failure != eb.Failure) {
		return false
	}
	return a.Error() == b.Error() &&
		errors.Is(a, observable.ErrEmpty) == errors.Is(b, observable.ErrEmpty) &&
		errors.Is(a, errBoom) == errors.Is(b, errBoom) &&
		errors.Is(a, context.Canceled) == errors.Is(b, context.Canceled)
}

func (k *firstKey) completion(t *rapid.T) completionSeen {
	select {
	case c := <-k.completions:
		return c
	case <-time.After(stuckAfter):
		t.Fatalf("no Completion within %v", stuckAfter)
		return completionSeen{}
	}
}

// released waits for the execution's worker, if any, to free its slot,
// and checks that every permit is back.
func (k *firstKey) released(t *rapid.T) {
	v, _ := k.reg.keys.Load("stream")
	st := v.(*keyState)
	p := k.reg.pool("stream", false)
	deadline := time.Now().Add(stuckAfter)
	for {
		running, queued := p.size()
		if st.metrics.ConcurrentExecutions() == 0 && st.fallbackSem.used() == 0 && running == 0 && queued == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a step kept a permit: %d executions, %d fallbacks, %d workers", st.metrics.ConcurrentExecutions(), st.fallbackSem.used(), running)
		}
		runtime.Gosched()
	}
	select {
	case c := <-k.completions:
		t.Fatalf("an extra Completion: %v", c.events)
	default:
	}
}

// Under pool isolation with a timeout, First of an ObservableCommand whose
// Observable has not emitted by the timeout is answered then by the
// fallback's first value, as its subscription is: TIMEOUT, FALLBACK_EMIT,
// CANCELLED, the run's context cancelled and the worker given back.
func TestFirstOfAnObservableCommandTimesOutAsItsSubscription(t *testing.T) {
	for _, fused := range []bool{true, false} {
		t.Run(map[bool]string{true: "First", false: "subscription"}[fused], func(t *testing.T) {
			h := newHarness(t)
			require.NoError(t, h.reg.ConfigurePool("Slow", PoolConfig{CoreSize: 1}))
			subscribed, left := make(chan struct{}), make(chan error, 1)
			c := NewObservable("Slow", func(ctx context.Context, _ int) observable.Observable[int] {
				return observable.Create(func(sub context.Context, o observable.Observer[int]) {
					close(subscribed)
					go func() {
						<-sub.Done() // never emits
						left <- context.Cause(sub)
					}()
				})
			}, WithRegistry(h.reg), WithConfig(Config{Isolation: PoolIsolation, Pool: "Slow", Timeout: 100 * time.Millisecond})).
				WithFallbackObservable(func(context.Context, int, error) observable.Observable[int] { return observable.Just(7, 8) })
			ctx := context.Background()
			o := c.ToObservable(ctx, 1)
			if !fused {
				o = observable.Create(func(sub context.Context, ob observable.Observer[int]) { c.ToObservable(ctx, 1).Subscribe(sub, ob) })
			}
			call := goCall(func() (int, error) { return o.First(ctx) })
			recv(t, subscribed, "the worker to subscribe the Observable") // not timed out in the queue
			h.stepUntil("the timeout", func() bool {
				select {
				case res := <-call:
					require.NoError(t, res.err)
					assert.Equal(t, 7, res.v)
					return true
				default:
					return false
				}
			})
			assert.ErrorIs(t, recv(t, left, "the Observable's context to end"), context.DeadlineExceeded)
			assert.Equal(t, evs("TIMEOUT", "FALLBACK_EMIT", "CANCELLED"), h.events())
			h.noMoreCompletions()
			waitFor(t, "the worker to be given back", func() bool {
				running, _ := h.reg.pool("Slow", false).size()
				return running == 0
			})
			h.assertReleased("Slow")
		})
	}
}
