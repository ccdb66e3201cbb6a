package command

// The tests of this package port the scenarios of Hystrix 1.5.12's
// HystrixCommandTest and HystrixObservableCommandTest (scenarios 11-57 of
// section 8 of the Hystrix reference) that apply to Go; each test is named
// after the Hystrix test it ports. Those that matter run through Execute,
// ToObservable(...).First, Queue(...).Get and Observe(...).Last under both
// isolations, which proves the fused Execute and the Observable pipeline
// record the same events and return the same values and errors.
//
// Skipped, and why:
//
//   - 33-36, 38, 49 (testRequestCache*, testNoRequestCache*,
//     testRequestCacheOn*, testBasicExecutionWorksWithoutRequestVariable,
//     testCacheKeyExecutionRequiresRequestVariable,
//     testBadRequestExceptionViaQueueInThreadOnResponseFromCache,
//     testRequestThenCacheHitAndOriginalUnsubscribed and variants): the
//     request cache and request log have their own tests.
//   - 12 testExecutionMultipleTimes: a Command is made once and executed
//     many times, unlike a Hystrix command instance; the port asserts that
//     each execution is independent instead.
//   - 16 testNotWrappedException*: Go errors are never wrapped away; the
//     caller reaches run's error with errors.Is and errors.As through the
//     *Error (TestNotWrappedExceptionWithNoFallback checks it).
//   - 41 testUnrecoverableErrorThrownWithFallback: Go's unrecoverable
//     errors (stack exhaustion, out of memory, concurrent map writes) end
//     the process; no command can observe them.
//   - 43 testExceptionConvertedToBadRequestExceptionInExecutionHook...: an
//     ExecutionHook observes, it cannot replace a command's error.
//   - 44 testDoNotInterruptFutureOnTimeoutIfPropertySaysNotTo and 45
//     testCancelFutureWithoutInterruption...: there are no thread
//     interrupts and no interruptOn* properties; run's context is always
//     cancelled at the timeout and on cancel (TestInterruptFutureOnTimeout
//     and TestCancelFutureWithInterruption check it).
//   - 50 testRxRetry: Hystrix forbids a second subscription to one
//     instance's toObservable; here ToObservable is cold and every
//     subscription is an execution of its own (TestExecutionMultipleTimes).
//   - 57 test*RequestContext*: there are no thread-locals to carry; what
//     they check, that the request's values reach run and the fallback on
//     every path, is TestContextValuesReachRunAndFallback.
//   - the 1.5.18 variants (testNotWrappedExceptionWithFallback emitting the
//     raw error): rxhystrix follows 1.5.12, which runs the fallback.
//   - testExecutionHook* with onThreadStart/onThreadComplete and the
//     deprecated hooks (onRunStart, onRunSuccess, onComplete...): the
//     ExecutionHook interface has no such methods; the order of the ones it
//     has is checked in hooks_test.go.
//   - queue() throwing at once for short-circuits and rejections (27): Queue
//     cannot throw; its Future fails with the same *Error.
//
// 37 (testBadRequestExceptionViaExecuteInThread/InSemaphore) is ported as
// TestBadRequestExceptionInThread and TestBadRequestExceptionInSemaphore,
// which run it through every way of executing; the Hystrix names belong to
// the request log's tests of the same scenario.

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	ms "github.com/rxhystrix/rxhystrix/metricsstream"
	"github.com/rxhystrix/rxhystrix/observable"
)

// 11: a successful run returns its value and records SUCCESS.
func TestExecutionSuccess(t *testing.T) {
	forEachModeAndIsolation(t, func(t *testing.T, h *harness, m execMode, iso Isolation) {
		c := New("GetUser", succeedRun, WithRegistry(h.reg), WithConfig(Config{Isolation: iso}))
		v, err := m.exec(context.Background(), c, 7)
		require.NoError(t, err)
		assert.Equal(t, "user-7", v)
		done := h.completion()
		assert.Equal(t, evs("SUCCESS"), eventNames(done.Events))
		assert.True(t, done.Executed, "Executed")
		assert.GreaterOrEqual(t, done.ExecutionLatency, time.Duration(0), "ExecutionLatency")
		assert.Equal(t, int64(1), done.ConcurrencyAtStart)
		if iso == PoolIsolation {
			assert.Equal(t, "GetUser", done.PoolKey)
		} else {
			assert.Empty(t, done.PoolKey)
		}
		h.assertReleased("GetUser")
		h.noMoreCompletions()
	})
}

// 12: a Command is reusable, and every execution (every subscription to
// ToObservable) is one execution of its own, with one Completion.
func TestExecutionMultipleTimes(t *testing.T) {
	h := newHarness(t)
	var calls int
	c := New("GetUser", func(ctx context.Context, id int) (string, error) {
		calls++
		return fmt.Sprint("call ", calls), nil
	}, WithRegistry(h.reg), WithConfig(Config{Isolation: SemaphoreIsolation}))
	ctx := context.Background()

	v, err := c.Execute(ctx, 1)
	require.NoError(t, err)
	assert.Equal(t, "call 1", v)
	assert.Equal(t, evs("SUCCESS"), h.events())

	cold := c.ToObservable(ctx, 1)
	assert.Equal(t, 1, calls, "ToObservable must not execute before a subscription")
	for i := 2; i <= 3; i++ {
		v, err = cold.First(ctx)
		require.NoError(t, err)
		assert.Equal(t, fmt.Sprint("call ", i), v)
		assert.Equal(t, evs("SUCCESS"), h.events())
	}
	h.noMoreCompletions()
}

// 13: a failing run without a fallback returns an *Error with run's
// error as Cause and ErrFallbackMissing, and records FAILURE and
// FALLBACK_MISSING.
func TestExecutionFailureWithNoFallback(t *testing.T) {
	forEachModeAndIsolation(t, func(t *testing.T, h *harness, m execMode, iso Isolation) {
		c := New("GetUser", failRun, WithRegistry(h.reg), WithConfig(Config{Isolation: iso}))
		v, err := m.exec(context.Background(), c, 1)
		assert.Empty(t, v)
		ce := assertCommandError(t, err, "GetUser", CommandFailure, errBoom, ErrFallbackMissing)
		assert.Same(t, errBoom, ce.Cause)
		assert.Equal(t, "GetUser failed and no fallback available (cause: boom)", err.Error())
		assert.Equal(t, evs("FAILURE", "FALLBACK_MISSING"), h.events())
		h.assertReleased("GetUser")
	})
}

// 13: the same, as Hystrix's testExecutionHystrixFailureWithNoFallback:
// run's error is itself a command's *Error.
func TestExecutionHystrixFailureWithNoFallback(t *testing.T) {
	h := newHarness(t)
	inner := &Error{Command: "Inner", Failure: TimeoutFailure, Cause: ErrTimeout, FallbackErr: ErrFallbackMissing}
	c := New("Outer", func(ctx context.Context, id int) (string, error) { return "", inner },
		WithRegistry(h.reg))
	_, err := c.Execute(context.Background(), 1)
	ce := assertCommandError(t, err, "Outer", CommandFailure, inner, ErrFallbackMissing)
	assert.Same(t, inner, ce.Cause)
	assert.ErrorIs(t, err, ErrTimeout, "the inner command's failure stays reachable")
	assert.Equal(t, evs("FAILURE", "FALLBACK_MISSING"), h.events())
}

// 14: a failing run with a fallback returns the fallback's value; the
// fallback is told why with an *Error whose Cause is run's error.
func TestExecutionFailureWithFallback(t *testing.T) {
	forEachModeAndIsolation(t, func(t *testing.T, h *harness, m execMode, iso Isolation) {
		var seen error
		c := New("GetUser", failRun, WithRegistry(h.reg), WithConfig(Config{Isolation: iso})).WithFallback(func(ctx context.Context, id int, err error) (string, error) {
			seen = err
			return fmt.Sprint("fallback for ", id), nil
		})
		v, err := m.exec(context.Background(), c, 3)
		require.NoError(t, err)
		assert.Equal(t, "fallback for 3", v)
		assert.Equal(t, evs("FAILURE", "FALLBACK_SUCCESS"), h.events())
		ce := assertCommandError(t, seen, "GetUser", CommandFailure, errBoom, nil)
		assert.Equal(t, "boom", ce.Cause.Error(), "getFailedExecutionException().getMessage()")
		h.assertReleased("GetUser")
	})
}

// 15: a failing fallback: the *Error carries both run's and the
// fallback's errors, and FALLBACK_FAILURE is recorded.
func TestExecutionFailureWithFallbackFailure(t *testing.T) {
	errFallback := errors.New("cache down")
	forEachModeAndIsolation(t, func(t *testing.T, h *harness, m execMode, iso Isolation) {
		c := New("GetUser", failRun, WithRegistry(h.reg), WithConfig(Config{Isolation: iso})).WithFallback(func(ctx context.Context, id int, err error) (string, error) {
			return "", errFallback
		})
		_, err := m.exec(context.Background(), c, 1)
		ce := assertCommandError(t, err, "GetUser", CommandFailure, errBoom, errFallback)
		assert.Same(t, errFallback, ce.FallbackErr)
		assert.Equal(t, "GetUser failed and fallback failed: cache down (cause: boom)", err.Error())
		assert.Equal(t, evs("FAILURE", "FALLBACK_FAILURE"), h.events())
		h.assertReleased("GetUser")
	})
}

// userError is an error type of the caller's, that must reach the caller
// unchanged inside the command's error.
type userError struct{ code int }

func (e *userError) Error() string { return fmt.Sprintf("user error %d", e.code) }

// 16, 39: run's own error type stays reachable with errors.As through the
// *Error (Hystrix's checked and not-wrapped exceptions).
func TestNotWrappedExceptionWithNoFallback(t *testing.T) {
	forEachModeAndIsolation(t, func(t *testing.T, h *harness, m execMode, iso Isolation) {
		c := New("GetUser", func(ctx context.Context, id int) (string, error) {
			return "", fmt.Errorf("calling users: %w", &userError{code: 503})
		}, WithRegistry(h.reg), WithConfig(Config{Isolation: iso}))
		_, err := m.exec(context.Background(), c, 1)
		var ue *userError
		require.ErrorAs(t, err, &ue)
		assert.Equal(t, 503, ue.code)
		assertCommandError(t, err, "GetUser", CommandFailure, nil, ErrFallbackMissing)
		assert.Equal(t, evs("FAILURE", "FALLBACK_MISSING"), h.events())
	})
}

// 16: the 1.5.12 behaviour: the fallback is attempted whatever run's
// error.
func TestNotWrappedExceptionWithFallback(t *testing.T) {
	h := newHarness(t)
	c := New("GetUser", func(ctx context.Context, id int) (string, error) {
		return "", &userError{code: 500}
	}, WithRegistry(h.reg)).WithFallback(fallbackName)
	v, err := c.Execute(context.Background(), 1)
	require.NoError(t, err)
	assert.Equal(t, "anonymous", v)
	assert.Equal(t, evs("FAILURE", "FALLBACK_SUCCESS"), h.events())
}

// 17: a bad request wrapping the caller's error type: the caller gets it
// as run returned it, no fallback runs, BAD_REQUEST only.
func TestNotWrappedBadRequestWithFallback(t *testing.T) {
	forEachModeAndIsolation(t, func(t *testing.T, h *harness, m execMode, iso Isolation) {
		bad := BadRequest(&userError{code: 400})
		fallbackRan := false
		c := New("GetUser", func(ctx context.Context, id int) (string, error) { return "", bad }, WithRegistry(h.reg), WithConfig(Config{Isolation: iso})).WithFallback(func(ctx context.Context, id int, err error) (string, error) {
			fallbackRan = true
			return "anonymous", nil
		})
		_, err := m.exec(context.Background(), c, -1)
		assert.Same(t, bad, err, "the bad request is returned as run returned it")
		var ue *userError
		require.ErrorAs(t, err, &ue)
		assert.Equal(t, 400, ue.code)
		assert.ErrorIs(t, err, ErrBadRequest)
		var ce *Error
		assert.False(t, errors.As(err, &ce), "a bad request is not wrapped in an *Error")
		assert.False(t, fallbackRan, "no fallback for a bad request")
		assert.Equal(t, evs("BAD_REQUEST"), h.events())
		h.assertReleased("GetUser")
	})
}

// 17: the same without a fallback.
func TestNotWrappedBadRequestWithNoFallback(t *testing.T) {
	h := newHarness(t)
	bad := BadRequest(&userError{code: 422})
	c := New("GetUser", func(ctx context.Context, id int) (string, error) { return "", bad },
		WithRegistry(h.reg))
	_, err := c.Execute(context.Background(), 1)
	assert.Same(t, bad, err)
	assert.Equal(t, "bad request: user error 422", err.Error())
	assert.Equal(t, evs("BAD_REQUEST"), h.events())
}

// 18: Queue(...).Get fails with the *Error of a failing command.
func TestQueueKnownFailureWithNoFallback(t *testing.T) {
	h := newHarness(t)
	c := New("GetUser", failRun, WithRegistry(h.reg))
	f := c.Queue(context.Background(), 1)
	_, err := f.Get(context.Background())
	assertCommandError(t, err, "GetUser", CommandFailure, errBoom, ErrFallbackMissing)
	assert.Equal(t, evs("FAILURE", "FALLBACK_MISSING"), h.events())
}

// 37: a bad request propagates as it is, with no fallback and nothing
// counted in the breaker's health, under pool isolation...
func TestBadRequestExceptionInThread(t *testing.T) {
	testBadRequest(t, PoolIsolation)
}

// ...and under semaphore isolation.
func TestBadRequestExceptionInSemaphore(t *testing.T) {
	testBadRequest(t, SemaphoreIsolation)
}

func testBadRequest(t *testing.T, iso Isolation) {
	forEachMode(t, func(t *testing.T, h *harness, m execMode) {
		bad := BadRequest(errors.New("id must be positive"))
		c := New("GetUser", func(ctx context.Context, id int) (string, error) { return "", bad }, WithRegistry(h.reg), WithConfig(Config{Isolation: iso})).WithFallback(fallbackName)
		for range 3 {
			_, err := m.exec(context.Background(), c, -1)
			assert.Same(t, bad, err)
			assert.True(t, IsBadRequest(err))
			assert.Equal(t, evs("BAD_REQUEST"), h.events())
		}
		h.clock.Advance(snapshotInterval(h.reg, "GetUser"))
		assert.Zero(t, c.Metrics().HealthCounts().Total, "bad requests do not count in health")
		h.closeBuckets("GetUser")
		assert.Equal(t, int64(3), c.Metrics().CumulativeCount(ms.BadRequest))
		assert.Equal(t, int64(3), c.Metrics().CumulativeCount(ms.ExceptionThrown))
		assert.Zero(t, c.Metrics().CumulativeCount(ms.FallbackSuccess))
		h.assertReleased("GetUser")
	})
}

// 40: a panic in run is recovered and recorded as FAILURE with a
// *PanicError cause that holds the value and the stack; with no fallback
// the caller gets the *Error.
func TestRecoverableErrorWithNoFallbackThrowsError(t *testing.T) {
	forEachModeAndIsolation(t, func(t *testing.T, h *harness, m execMode, iso Isolation) {
		c := New("GetUser", func(ctx context.Context, id int) (string, error) {
			var users map[int]string
			users[id] = "x" // assignment to entry in nil map
			return "", nil
		}, WithRegistry(h.reg), WithConfig(Config{Isolation: iso}))
		_, err := m.exec(context.Background(), c, 1)
		ce := assertCommandError(t, err, "GetUser", CommandFailure, nil, ErrFallbackMissing)
		var pe *PanicError
		require.ErrorAs(t, ce.Cause, &pe)
		assert.Contains(t, fmt.Sprint(pe.Value), "assignment to entry in nil map")
		assert.Contains(t, string(pe.Stack), "command_test.go", "the stack is the panicking goroutine's")
		var re interface{ RuntimeError() }
		assert.ErrorAs(t, err, &re, "a runtime.Error panic value is reachable with errors.As")
		assert.Equal(t, evs("FAILURE", "FALLBACK_MISSING"), h.events())
		h.assertReleased("GetUser")
	})
}

// 40: the fallback masks a panic in run.
func TestRecoverableErrorMaskedByFallbackButLogged(t *testing.T) {
	forEachModeAndIsolation(t, func(t *testing.T, h *harness, m execMode, iso Isolation) {
		var seen error
		c := New("GetUser", func(ctx context.Context, id int) (string, error) { panic("users unreachable") }, WithRegistry(h.reg), WithConfig(Config{Isolation: iso})).WithFallback(func(ctx context.Context, id int, err error) (string, error) {
			seen = err
			return "anonymous", nil
		})
		v, err := m.exec(context.Background(), c, 1)
		require.NoError(t, err)
		assert.Equal(t, "anonymous", v)
		var pe *PanicError
		require.ErrorAs(t, seen, &pe)
		assert.Equal(t, "users unreachable", pe.Value)
		assert.Equal(t, "panic: users unreachable", pe.Error())
		assert.Equal(t, evs("FAILURE", "FALLBACK_SUCCESS"), h.events())
	})
}

// A panic in the fallback is recovered and recorded as FALLBACK_FAILURE.
func TestPanicInFallbackIsFallbackFailure(t *testing.T) {
	forEachModeAndIsolation(t, func(t *testing.T, h *harness, m execMode, iso Isolation) {
		c := New("GetUser", failRun, WithRegistry(h.reg), WithConfig(Config{Isolation: iso})).WithFallback(func(ctx context.Context, id int, err error) (string, error) { panic("fallback broke") })
		_, err := m.exec(context.Background(), c, 1)
		var ce *Error
		require.ErrorAs(t, err, &ce)
		assert.Equal(t, CommandFailure, ce.Failure)
		assert.Same(t, errBoom, ce.Cause)
		assert.Equal(t, "GetUser failed and fallback failed: panic: fallback broke (cause: boom)", err.Error())
		var pe *PanicError
		require.ErrorAs(t, ce.FallbackErr, &pe)
		assert.Equal(t, "fallback broke", pe.Value)
		assert.NotEmpty(t, pe.Stack)
		assert.Equal(t, evs("FAILURE", "FALLBACK_FAILURE"), h.events())
		h.assertReleased("GetUser")
	})
}

// 42: with the fallback disabled, the fallback never runs and no fallback
// event is recorded (Hystrix 1.5.12).
func TestExecutionFailureWithFallbackImplementedButDisabled(t *testing.T) {
	forEachModeAndIsolation(t, func(t *testing.T, h *harness, m execMode, iso Isolation) {
		ran := false
		c := New("GetUser", failRun, WithRegistry(h.reg), WithConfig(Config{Isolation: iso, FallbackDisabled: true})).WithFallback(func(ctx context.Context, id int, err error) (string, error) {
			ran = true
			return "anonymous", nil
		})
		_, err := m.exec(context.Background(), c, 1)
		assertCommandError(t, err, "GetUser", CommandFailure, errBoom, ErrFallbackDisabled)
		assert.Equal(t, "GetUser failed and fallback disabled (cause: boom)", err.Error())
		assert.False(t, ran)
		assert.Equal(t, evs("FAILURE"), h.events())
		h.assertReleased("GetUser")
	})
}

// A run that returns nil error completes with its value even when the
// value is the zero value.
func TestExecutionSuccessWithZeroValue(t *testing.T) {
	forEachModeAndIsolation(t, func(t *testing.T, h *harness, m execMode, iso Isolation) {
		c := New("GetUser", func(ctx context.Context, id int) (string, error) { return "", nil }, WithRegistry(h.reg), WithConfig(Config{Isolation: iso})).WithFallback(fallbackName)
		v, err := m.exec(context.Background(), c, 1)
		require.NoError(t, err)
		assert.Empty(t, v)
		assert.Equal(t, evs("SUCCESS"), h.events())
	})
}

// A context already done when the call starts: nothing executes and
// nothing is recorded.
func TestUnsubscribeBeforeSubscribe(t *testing.T) {
	forEachModeAndIsolation(t, func(t *testing.T, h *harness, m execMode, iso Isolation) {
		ran := false
		c := New("GetUser", func(ctx context.Context, id int) (string, error) {
			ran = true
			return "x", nil
		}, WithRegistry(h.reg), WithConfig(Config{Isolation: iso}))
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := m.exec(ctx, c, 1)
		assert.ErrorIs(t, err, context.Canceled)
		assert.False(t, ran)
		h.noMoreCompletions()
		h.assertReleased("GetUser")
	})
}

// 57: the values of the caller's context reach run and the fallback,
// whichever goroutine runs them (a pool worker, the timer).
func TestContextValuesReachRunAndFallback(t *testing.T) {
	type ctxKey struct{}
	cases := []struct {
		name    string
		run     func(g *gate) func(ctx context.Context, id int) (string, error)
		timeout bool
	}{
		{"success", func(*gate) func(context.Context, int) (string, error) {
			return func(ctx context.Context, id int) (string, error) { return fmt.Sprint(ctx.Value(ctxKey{})), nil }
		}, false},
		{"failure", func(*gate) func(context.Context, int) (string, error) { return failRun }, false},
		{"timeout", func(g *gate) func(context.Context, int) (string, error) {
			return func(ctx context.Context, id int) (string, error) {
				return "", g.wait(ctx, true)
			}
		}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			forEachModeAndIsolation(t, func(t *testing.T, h *harness, m execMode, iso Isolation) {
				g := newGate()
				defer g.release()
				c := New("GetUser", tc.run(g), WithRegistry(h.reg), WithConfig(Config{Isolation: iso})).WithFallback(func(ctx context.Context, id int, err error) (string, error) {
					return fmt.Sprint("fallback:", ctx.Value(ctxKey{})), nil
				})
				ctx := context.WithValue(context.Background(), ctxKey{}, "request-42")
				call := goCall(func() (string, error) { return m.exec(ctx, c, 1) })
				if tc.timeout {
					runCtx := g.arrived(t)
					assert.Equal(t, "request-42", runCtx.Value(ctxKey{}))
					h.clock.Advance(DefaultTimeout)
				}
				res := awaitCall(t, call)
				require.NoError(t, res.err)
				if tc.name == "success" {
					assert.Equal(t, "request-42", res.v)
				} else {
					assert.Equal(t, "fallback:request-42", res.v)
				}
				h.completion()
			})
		})
	}
}

// A Command can have an Observable fallback (Hystrix's
// resumeWithFallback); its last value is the command's.
func TestExecutionFailureWithObservableFallback(t *testing.T) {
	forEachModeAndIsolation(t, func(t *testing.T, h *harness, m execMode, iso Isolation) {
		c := New("GetUser", failRun, WithRegistry(h.reg), WithConfig(Config{Isolation: iso})).WithFallbackObservable(func(ctx context.Context, id int, err error) observable.Observable[string] {
			return observable.Just("stale", "cached")
		})
		v, err := m.exec(context.Background(), c, 1)
		require.NoError(t, err)
		assert.Equal(t, "cached", v)
		assert.Equal(t, evs("FAILURE", "FALLBACK_SUCCESS"), h.events())

		empty := New("GetOther", failRun, WithRegistry(h.reg), WithConfig(Config{Isolation: iso})).WithFallbackObservable(func(ctx context.Context, id int, err error) observable.Observable[string] {
			return observable.Empty[string]()
		})
		_, err = m.exec(context.Background(), empty, 1)
		ce := assertCommandError(t, err, "GetOther", CommandFailure, errBoom, observable.ErrEmpty)
		assert.Same(t, observable.ErrEmpty, ce.FallbackErr, "a fallback without a value failed")
		assert.Equal(t, evs("FAILURE", "FALLBACK_FAILURE"), h.events())
	})
}

// An execution has given back its permits and published its Completion
// when its caller gets the value, whichever way it executes: a caller who
// executes again at once never finds its own previous execution still
// holding the only fallback permit.
func TestExecutionEndsBeforeItsValueIsDelivered(t *testing.T) {
	forEachModeAndIsolation(t, func(t *testing.T, h *harness, m execMode, iso Isolation) {
		failing := New("GetUser", failRun, WithRegistry(h.reg), WithConfig(Config{Isolation: iso, FallbackMaxConcurrentRequests: 1})).WithFallback(fallbackName)
		passing := New("GetOther", succeedRun, WithRegistry(h.reg), WithConfig(Config{Isolation: iso}))
		for i := range 200 {
			v, err := m.exec(context.Background(), failing, i)
			require.NoError(t, err, "execution %d", i)
			require.Equal(t, "anonymous", v)
			require.Zero(t, h.fallbackPermits("GetUser"), "execution %d still holds its fallback permit", i)
			select {
			case done := <-h.completions:
				require.Equal(t, evs("FAILURE", "FALLBACK_SUCCESS"), eventNames(done.Events))
			default:
				require.Fail(t, "the Completion was not published when the value was delivered")
			}

			_, err = m.exec(context.Background(), passing, i)
			require.NoError(t, err)
			require.Zero(t, passing.Metrics().ConcurrentExecutions(), "execution %d still counted as running", i)
			require.Len(t, h.completions, 1)
			h.completion()
		}
	})
}

// 39: any error of run, whatever its type, is a FAILURE and the caller
// gets the *Error wrapping it.
func TestCheckedExceptionViaExecute(t *testing.T) {
	h := newHarness(t)
	c := New("GetUser", func(ctx context.Context, id int) (string, error) {
		return "", &userError{code: 418}
	}, WithRegistry(h.reg))
	_, err := c.Execute(context.Background(), 1)
	var ue *userError
	require.ErrorAs(t, err, &ue)
	assert.Equal(t, "GetUser failed and no fallback available (cause: user error 418)", err.Error())
	assert.Equal(t, evs("FAILURE", "FALLBACK_MISSING"), h.events())
}
