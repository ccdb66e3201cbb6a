package command

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rxhystrix/rxhystrix/internal/clock"
	"github.com/rxhystrix/rxhystrix/observable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// run's context carries the timeout as its deadline whichever way the
// command is executed, so that run can pass it on to the calls it makes.
func TestRunSeesTheTimeoutAsItsDeadline(t *testing.T) {
	forEachModeAndIsolation(t, func(t *testing.T, h *harness, m execMode, iso Isolation) {
		var deadline time.Time
		var ok bool
		c := New("Deadline", func(ctx context.Context, id int) (string, error) {
			deadline, ok = ctx.Deadline()
			return userName(id), nil
		}, WithRegistry(h.reg), WithConfig(Config{Isolation: iso, Timeout: 700 * time.Millisecond}))
		v, err := m.exec(context.Background(), c, 1)
		require.NoError(t, err)
		assert.Equal(t, userName(1), v)
		h.completion()
		require.True(t, ok, "run's context has no deadline")
		assert.WithinDuration(t, harnessStart.Add(700*time.Millisecond), deadline, 0, "the same instant")
	})
}

// A caller's deadline that comes before the timeout is run's deadline,
// whichever way the command is executed.
func TestRunSeesTheCallersEarlierDeadline(t *testing.T) {
	forEachModeAndIsolation(t, func(t *testing.T, h *harness, m execMode, iso Isolation) {
		for _, timeout := range []time.Duration{700 * time.Millisecond, -1} {
			c, deadline := deadlineRecorder(h, iso, timeout)
			ctx, cancel := h.clock.WithTimeout(context.Background(), 300*time.Millisecond)
			v, err := m.exec(ctx, c, 1)
			cancel()
			require.NoError(t, err)
			assert.Equal(t, userName(1), v)
			h.completion()
			assert.WithinDuration(t, harnessStart.Add(300*time.Millisecond), <-deadline, 0, "timeout %v", timeout)
		}
	})
}

// The deadline of the context ToObservable was given reaches run as the
// subscriber's does, though the subscriber's context has none.
func TestRunSeesTheDeadlineOfToObservablesContext(t *testing.T) {
	for _, m := range twoContextModes {
		for _, iso := range bothIsolations {
			t.Run(iso.String()+"/"+m.name, func(t *testing.T) {
				h := newHarness(t)
				c, deadline := deadlineRecorder(h, iso, 700*time.Millisecond)
				ctx, cancel := h.clock.WithTimeout(context.Background(), 300*time.Millisecond)
				defer cancel()
				_, err := m.exec(c, ctx, context.Background())
				require.NoError(t, err)
				h.completion()
				assert.WithinDuration(t, harnessStart.Add(300*time.Millisecond), <-deadline, 0)
			})
		}
	}
}

// deadlineRecorder returns a command of iso and timeout whose run sends
// its context's deadline (the zero time if none) on the channel.
func deadlineRecorder(h *harness, iso Isolation, timeout time.Duration) (*Command[int, string], <-chan time.Time) {
	deadlines := make(chan time.Time, 1)
	c := New("Deadline", func(ctx context.Context, id int) (string, error) {
		d, _ := ctx.Deadline()
		deadlines <- d
		return userName(id), nil
	}, WithRegistry(h.reg), WithConfig(Config{Isolation: iso, Timeout: timeout}))
	return c, deadlines
}

// A caller whose context's deadline passes while run runs: run's context
// ends with that context's error, context.DeadlineExceeded, in every mode
// and isolation, as doc.go says ("it ends with the caller's context, with
// its error and cause, as a context of context.WithTimeout would").
func TestRunContextEndsWithTheCallersDeadlineError(t *testing.T) {
	forEachModeAndIsolation(t, func(t *testing.T, h *harness, m execMode, iso Isolation) {
		g := newGate()
		defer g.release()
		c := New("GetUser", g.runLate, WithRegistry(h.reg), WithConfig(Config{Isolation: iso, Timeout: time.Second}))
		ctx := newExpiringContext()
		call := goCall(func() (string, error) { return m.exec(ctx, c, 1) })
		runCtx := g.arrived(t)
		ctx.expire()
		res := awaitCall(t, call)
		assert.ErrorIs(t, res.err, context.DeadlineExceeded)
		recv(t, runCtx.Done(), "run's context to end")
		assert.ErrorIs(t, runCtx.Err(), context.DeadlineExceeded, "run's context's error")
		assert.ErrorIs(t, context.Cause(runCtx), context.DeadlineExceeded, "run's context's cause")
		assert.Equal(t, evs("CANCELLED"), h.events())
	})
}

// Real does not follow steps of the system clock, from which callers'
// deadlines are read. After a step either way, run still sees the earlier
// of the timeout and the caller's deadline, measured rightly by
// time.Until, and is not ended before either has come.
func TestRunsDeadlineHoldsAcrossASystemClockStep(t *testing.T) {
	for _, step := range []time.Duration{time.Hour, -time.Hour} {
		for _, tc := range []struct {
			name             string
			callers, timeout time.Duration
		}{
			{"timeout first", time.Hour, 10 * time.Second},
			{"caller's deadline first", 10 * time.Second, time.Hour},
		} {
			for _, iso := range bothIsolations {
				for _, m := range execModes {
					t.Run(step.String()+"/"+tc.name+"/"+iso.String()+"/"+m.name, func(t *testing.T) {
						defer clock.StepSystemClock(step)()
						reg := NewRegistry()
						defer reg.Close()
						var remaining time.Duration
						var errAtStart error
						c := New("Stepped", func(ctx context.Context, id int) (string, error) {
							errAtStart = ctx.Err()
							deadline, ok := ctx.Deadline()
							require.True(t, ok, "run's context has no deadline")
							remaining = time.Until(deadline)
							return userName(id), nil
						}, WithRegistry(reg), WithConfig(Config{Isolation: iso, Timeout: tc.timeout}))
						ctx, cancel := context.WithTimeout(context.Background(), tc.callers)
						defer cancel()
						v, err := m.exec(ctx, c, 1)
						require.NoError(t, err)
						assert.Equal(t, userName(1), v)
						require.NoError(t, errAtStart)
						assert.Greater(t, remaining, time.Duration(0))
						assert.LessOrEqual(t, remaining, 10*time.Second)
					})
				}
			}
		}
	}
}

// A semaphore-isolated run that outlives its timeout, whose context told
// it so (context.DeadlineExceeded at the timeout), and whose caller
// leaves only afterwards, timed out: TIMEOUT, which the breaker counts,
// in every mode, as the subscription's timer records it at the timeout
// (and as Hystrix's timer does). Execute and First recorded it CANCELLED
// alone, which no health counts: a slow dependency whose callers give up
// after the timeout never tripped the breaker. Where the execution is the
// caller's (Execute, First), no fallback runs for the caller who has left:
// the execution ends CANCELLED after its TIMEOUT; where it is hot (Queue,
// Observe), the fallback answers the future as at any timeout.
func TestTimeoutBeforeTheCallerLeavesIsATimeout(t *testing.T) {
	forEachMode(t, func(t *testing.T, h *harness, m execMode) {
		entered := make(chan context.Context, 1)
		sawTimeout := make(chan error, 1)
		release := make(chan struct{})
		var fallbacks atomic.Int32
		c := New("TimedOutThenLeft", func(ctx context.Context, id int) (string, error) {
			done := ctx.Done()
			entered <- ctx
			<-done
			sawTimeout <- ctx.Err()
			<-release // run goes on past its timeout
			return "late", nil
		}, WithRegistry(h.reg), WithConfig(Config{Isolation: SemaphoreIsolation, Timeout: 50 * time.Millisecond})).
			WithFallback(func(ctx context.Context, id int, err error) (string, error) {
				fallbacks.Add(1)
				return fallbackName(ctx, id, err)
			})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		call := goCall(func() (string, error) { return m.exec(ctx, c, 1) })
		recv(t, entered, "run to start")
		h.clock.Advance(50 * time.Millisecond)
		require.ErrorIs(t, recv(t, sawTimeout, "run to see its timeout"), context.DeadlineExceeded)
		cancel() // the caller leaves after the timeout
		close(release)
		awaitCall(t, call)
		done := h.completion()
		events := eventNames(done.Events)
		if slices.Contains(events, "CANCELLED") {
			assert.Equal(t, []string{"TIMEOUT", "CANCELLED"}, events)
			assert.Zero(t, fallbacks.Load(), "no fallback for a caller who left")
		} else {
			assert.Equal(t, []string{"TIMEOUT", "FALLBACK_SUCCESS"}, events)
			assert.Equal(t, int32(1), fallbacks.Load())
		}
		h.assertReleased("TimedOutThenLeft")
	})
	// The caller who leaves before the timeout is CANCELLED, as before.
	t.Run("caller leaves first", func(t *testing.T) {
		h := newHarness(t)
		entered := make(chan context.Context, 1)
		release := make(chan struct{})
		c := New("LeftThenTimedOut", func(ctx context.Context, id int) (string, error) {
			ctx.Done()
			entered <- ctx
			<-release
			return "late", nil
		}, WithRegistry(h.reg), WithConfig(Config{Isolation: SemaphoreIsolation, Timeout: 50 * time.Millisecond})).WithFallback(fallbackName)
		ctx, cancel := context.WithCancel(context.Background())
		call := goCall(func() (string, error) { return c.Execute(ctx, 1) })
		runCtx := recv(t, entered, "run to start")
		cancel()
		recv(t, runCtx.Done(), "run's context to follow the caller's")
		h.clock.Advance(60 * time.Millisecond)
		close(release)
		assert.ErrorIs(t, awaitCall(t, call).err, context.Canceled)
		assert.Equal(t, evs("CANCELLED"), h.events())
	})
}

// The first value of an ObservableCommand's stream disarms its timeout,
// and its context runs on past the timeout's time: from then on it must
// not report the timeout as its deadline, or code under it that honours
// deadlines (net.Dialer, gRPC, context.WithTimeout) gives up at once
// once that time has passed, while the context itself never ends there.
func TestObservableCommandsFirstValueLiftsTheReportedDeadline(t *testing.T) {
	for _, iso := range bothIsolations {
		t.Run(iso.String(), func(t *testing.T) {
			h := newHarness(t)
			running, finish := make(chan context.Context, 1), make(chan struct{})
			c := NewObservable("Late", func(context.Context, int) observable.Observable[bool] {
				return observable.Create(func(ctx context.Context, o observable.Observer[bool]) {
					_, before := ctx.Deadline()
					assert.True(t, before, "the timeout's deadline before the first value")
					o.OnNext(true)
					running <- ctx
					<-finish
					o.OnCompleted()
				})
			}, WithRegistry(h.reg), WithConfig(Config{Isolation: iso, Timeout: 70 * time.Millisecond}))
			call := goCall(func() ([]bool, error) { return c.Execute(context.Background(), 1) })
			runCtx := recv(t, running, "the first value")
			h.clock.Advance(time.Second)
			require.NoError(t, runCtx.Err(), "the stream's context after the timeout's time")
			d, ok := runCtx.Deadline()
			require.False(t, ok, "the stream's context reports the disarmed timeout's deadline %v", d)
			close(finish)
			res := awaitCall(t, call)
			require.NoError(t, res.err)
			require.Equal(t, evs("EMIT", "SUCCESS"), h.events())
		})
	}
}
