package command

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/breaker"
	"github.com/rxhystrix/rxhystrix/observable"
)

// errNoRows stands for an error a library returns as it is, which says
// the request was wrong, not the dependency.
var errNoRows = errors.New("no rows in result set")

func isNoRows(err error) bool { return errors.Is(err, errNoRows) }

// A command's errors that WithBadRequests picks are bad requests in
// every way of executing it: no fallback, no count against the breaker;
// its other errors stay failures.
func TestWithBadRequestsPicksBadRequests(t *testing.T) {
	forEachModeAndIsolation(t, func(t *testing.T, h *harness, m execMode, iso Isolation) {
		fallbacks := 0
		c := New("GetUser", func(ctx context.Context, id int) (string, error) {
			if id < 0 {
				return "", errBoom
			}
			return "", errNoRows
		}, WithRegistry(h.reg), WithConfig(Config{Isolation: iso, Timeout: -1, Breaker: breaker.Config{ConsecutiveFailures: 2}})).
			WithBadRequests(isNoRows).
			WithFallback(func(ctx context.Context, id int, err error) (string, error) { fallbacks++; return "fallback", nil })
		ctx := context.Background()
		for range 3 {
			_, err := m.exec(ctx, c, 1)
			require.ErrorIs(t, err, errNoRows, "the error as run returned it")
			assert.True(t, IsBadRequest(err))
			assert.Equal(t, []string{"BAD_REQUEST"}, h.events())
		}
		assert.Zero(t, fallbacks, "a bad request gets no fallback")
		assert.Equal(t, breaker.Closed, h.reg.Breaker("GetUser").State(), "nor counts as a failure")

		v, err := m.exec(ctx, c, -1)
		require.NoError(t, err)
		assert.Equal(t, "fallback", v, "another error is a failure")
		assert.Equal(t, []string{"FAILURE", "FALLBACK_SUCCESS"}, h.events())
	})
}

// An ObservableCommand's stream error that WithBadRequests picks is a
// bad request.
func TestObservableWithBadRequests(t *testing.T) {
	h := newHarness(t)
	c := NewObservable("Stream", func(ctx context.Context, in int) observable.Observable[int] {
		return observable.Error[int](errNoRows)
	}, WithRegistry(h.reg), WithConfig(Config{Isolation: SemaphoreIsolation, Timeout: -1})).WithBadRequests(isNoRows)
	_, err := c.ToObservable(context.Background(), 1).First(context.Background())
	require.ErrorIs(t, err, errNoRows)
	assert.True(t, IsBadRequest(err))
	assert.Equal(t, []string{"BAD_REQUEST"}, h.events())
}

func TestWithBadRequestsRefusesNil(t *testing.T) {
	h := newHarness(t)
	c := New("GetUser", func(ctx context.Context, id int) (string, error) { return "", nil }, WithRegistry(h.reg))
	assert.PanicsWithValue(t, `command: WithBadRequests of "GetUser" with nil f`, func() { c.WithBadRequests(nil) })
	o := NewObservable("Stream", func(ctx context.Context, in int) observable.Observable[int] { return observable.Just(in) }, WithRegistry(h.reg))
	assert.PanicsWithValue(t, `command: WithBadRequests of "Stream" with nil f`, func() { o.WithBadRequests(nil) })
}

// An injected error stands in for run's, so WithBadRequests picks it as
// it would pick run's, in every way of executing the command and for an
// ObservableCommand too.
func TestWithBadRequestsPicksAnInjectedError(t *testing.T) {
	forEachModeAndIsolation(t, func(t *testing.T, h *harness, m execMode, iso Isolation) {
		c := New("GetUser", succeedRun, WithRegistry(h.reg), WithConfig(Config{Isolation: iso,
			Faults: FaultConfig{Enabled: true, ErrorPercentage: 100, Error: errNoRows}})).
			WithBadRequests(isNoRows).WithFallback(fallbackName)
		_, err := m.exec(context.Background(), c, 1)
		require.ErrorIs(t, err, errNoRows)
		assert.True(t, IsBadRequest(err))
		assert.Equal(t, []string{"BAD_REQUEST"}, h.events())
	})
	h := newHarness(t)
	o := NewObservable("Stream", func(ctx context.Context, in int) observable.Observable[int] { return observable.Just(in) },
		WithRegistry(h.reg), WithConfig(Config{Faults: FaultConfig{Enabled: true, ErrorPercentage: 100, Error: errNoRows}})).
		WithBadRequests(isNoRows)
	_, err := o.ToObservable(context.Background(), 1).First(context.Background())
	require.ErrorIs(t, err, errNoRows)
	assert.True(t, IsBadRequest(err))
	assert.Equal(t, []string{"BAD_REQUEST"}, h.events())
}

// A panic is never a bad request, even for a predicate that picks every
// error: it is a FAILURE that the fallback answers, for a Command's run and
// for an ObservableCommand's construct alike.
func TestWithBadRequestsLeavesPanicsFailures(t *testing.T) {
	everyError := func(error) bool { return true }
	forEachModeAndIsolation(t, func(t *testing.T, h *harness, m execMode, iso Isolation) {
		c := New("GetUser", func(ctx context.Context, id int) (string, error) { panic("boom") },
			WithRegistry(h.reg), WithConfig(Config{Isolation: iso, Timeout: -1})).
			WithBadRequests(everyError).WithFallback(fallbackName)
		v, err := m.exec(context.Background(), c, 1)
		require.NoError(t, err)
		assert.Equal(t, "anonymous", v)
		assert.Equal(t, []string{"FAILURE", "FALLBACK_SUCCESS"}, h.events())
	})
	h := newHarness(t)
	o := NewObservable("Stream", func(ctx context.Context, in int) observable.Observable[int] { panic("boom") },
		WithRegistry(h.reg), WithConfig(Config{Isolation: SemaphoreIsolation, Timeout: -1})).WithBadRequests(everyError)
	_, err := o.ToObservable(context.Background(), 1).First(context.Background())
	var p *PanicError
	require.ErrorAs(t, err, &p)
	assert.False(t, IsBadRequest(err))
	assert.Equal(t, []string{"FAILURE", "FALLBACK_MISSING"}, h.events())
}

// A WithBadRequests predicate that panics fails the execution as a panic
// of run's does: a FAILURE with a *PanicError that the fallback answers,
// in every way of executing and both isolations. The panic does not
// escape the frame that holds the execution's permit (the next
// execution is not refused for want of it) nor end a pool's worker.
func TestWithBadRequestsPredicateThatPanicsFailsTheExecution(t *testing.T) {
	panicking := func(error) bool { panic("predicate") }
	forEachModeAndIsolation(t, func(t *testing.T, h *harness, m execMode, iso Isolation) {
		c := New("GetUser", func(ctx context.Context, id int) (string, error) { return "", errNoRows },
			WithRegistry(h.reg), WithConfig(Config{Isolation: iso, Timeout: -1, MaxConcurrentRequests: 1})).
			WithBadRequests(panicking)
		for range 2 {
			_, err := m.exec(context.Background(), c, 1)
			var p *PanicError
			require.ErrorAs(t, err, &p)
			assert.Equal(t, "predicate", p.Value)
			assert.False(t, IsBadRequest(err))
			assert.Equal(t, []string{"FAILURE", "FALLBACK_MISSING"}, h.events())
		}
	})
}

// A panic in run is a FAILURE that the fallback answers, whatever it
// panicked with (doc.go: "A panic in run or in a fallback is an error
// ([*PanicError])"; WithBadRequests: "a panic of run's (*PanicError) is
// never a bad request"): a panic with a BadRequest error, or an error
// wrapping one (a Must-style helper panicking with a nested command's
// bad request), is no bad request that skips the fallback and the
// breaker's health.
func TestPanicWithABadRequestIsAFailure(t *testing.T) {
	forEachModeAndIsolation(t, func(t *testing.T, h *harness, m execMode, iso Isolation) {
		c := New("PanicBad", func(ctx context.Context, id int) (string, error) {
			panic(BadRequest(errBoom))
		}, WithRegistry(h.reg), WithConfig(Config{Isolation: iso})).WithFallback(fallbackName)
		v, err := m.exec(context.Background(), c, 1)
		require.NoError(t, err)
		assert.Equal(t, "anonymous", v)
		assert.Equal(t, evs("FAILURE", "FALLBACK_SUCCESS"), h.events())
		h.assertReleased("PanicBad")
	})
	t.Run("ObservableCommand", func(t *testing.T) {
		h := newHarness(t)
		oc := NewObservable("PanicBadStream", func(ctx context.Context, id int) observable.Observable[string] {
			panic(BadRequest(errBoom))
		}, WithRegistry(h.reg)).WithFallback(fallbackName)
		vs, err := oc.Execute(context.Background(), 1)
		require.NoError(t, err)
		assert.Equal(t, []string{"anonymous"}, vs)
		assert.Equal(t, evs("FAILURE", "FALLBACK_EMIT", "FALLBACK_SUCCESS"), h.events())
	})
	t.Run("hedged", func(t *testing.T) {
		h := newHarness(t)
		first := make(chan struct{}, 1)
		first <- struct{}{}
		c := New("PanicBadHedged", func(ctx context.Context, id int) (string, error) {
			select {
			case <-first:
				panic(BadRequest(errBoom))
			default:
				return userName(id), nil
			}
		}, WithRegistry(h.reg), WithConfig(Config{Isolation: SemaphoreIsolation,
			Hedge: HedgeConfig{MaxHedges: 1, Delay: time.Millisecond, OnError: true}})).WithFallback(fallbackName)
		v, err := c.Execute(context.Background(), 1)
		require.NoError(t, err)
		assert.Equal(t, userName(1), v, "a panic is no final answer: the hedge answers")
	})
}

// WithBadRequests says that a timeout or a cancellation is decided before
// its predicate is asked: the predicate never sees the context error of
// a run, or of an injected delay, that the timeout ended.
func TestBadRequestPredicateNotAskedAboutATimeout(t *testing.T) {
	for _, delayed := range []bool{false, true} {
		name := "run"
		if delayed {
			name = "injected delay"
		}
		t.Run(name, func(t *testing.T) {
			h := newHarness(t)
			var mu sync.Mutex
			var asked []error
			cfg := Config{Isolation: SemaphoreIsolation, Timeout: time.Second}
			if delayed {
				cfg.Faults = FaultConfig{Enabled: true, DelayPercentage: 100, Delay: time.Hour}
			}
			c := New("GetUser", func(ctx context.Context, _ int) (string, error) {
				<-ctx.Done()
				return "", ctx.Err()
			}, WithRegistry(h.reg), WithConfig(cfg)).WithBadRequests(func(err error) bool {
				mu.Lock()
				defer mu.Unlock()
				asked = append(asked, err)
				return true
			}).WithFallback(fallbackName)
			call := goCall(func() (string, error) { return c.Execute(context.Background(), 1) })
			if delayed {
				waitFor(t, "the delay to begin", func() bool { return h.state("GetUser").faults[faultDelay].Load() == 1 })
			} else {
				waitFor(t, "run to start", func() bool { return h.execPermits("GetUser") == 1 })
			}
			h.clock.Advance(time.Second)
			res := awaitCall(t, call)
			require.NoError(t, res.err)
			assert.Equal(t, evs("TIMEOUT", "FALLBACK_SUCCESS"), h.events())
			mu.Lock()
			defer mu.Unlock()
			assert.Empty(t, asked, "the predicate was asked about a timeout")
		})
	}
}
