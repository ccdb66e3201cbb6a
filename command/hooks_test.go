package command

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/breaker"
	ms "github.com/rxhystrix/rxhystrix/metricsstream"
)

// hookRecorder records every hook call as "Name" or "Name(detail)".
type hookRecorder struct {
	mu    sync.Mutex
	calls []string
}

func (r *hookRecorder) add(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, s)
}

func (r *hookRecorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	calls := r.calls
	r.calls = nil
	return calls
}

func (r *hookRecorder) Start(string)            { r.add("Start") }
func (r *hookRecorder) ExecutionStart(string)   { r.add("ExecutionStart") }
func (r *hookRecorder) ExecutionSuccess(string) { r.add("ExecutionSuccess") }
func (r *hookRecorder) ExecutionError(_ string, err error) {
	r.add(fmt.Sprintf("ExecutionError(%v)", err))
}
func (r *hookRecorder) FallbackStart(string)   { r.add("FallbackStart") }
func (r *hookRecorder) FallbackSuccess(string) { r.add("FallbackSuccess") }
func (r *hookRecorder) FallbackError(_ string, err error) {
	r.add(fmt.Sprintf("FallbackError(%v)", err))
}
func (r *hookRecorder) Success(string) { r.add("Success") }
func (r *hookRecorder) Error(_ string, f FailureType, err error) {
	r.add(fmt.Sprintf("Error(%v)", f))
}
func (r *hookRecorder) CacheHit(string)    { r.add("CacheHit") }
func (r *hookRecorder) Unsubscribe(string) { r.add("Unsubscribe") }

// 51: the order of the hooks for each kind of outcome, the same through
// every way of executing and under both isolations. (Hystrix's
// onThreadStart, onThreadComplete, onEmit and its deprecated hooks have no
// counterpart; ExecutionError is also told of timeouts.)
func TestExecutionHookOrder(t *testing.T) {
	errFallback := errors.New("fallback down")
	cases := []struct {
		name     string
		cfg      Config
		run      func(g *gate) func(context.Context, int) (string, error)
		fallback func(context.Context, int, error) (string, error)
		// provoke executes the command and returns once it ended.
		provoke func(t *testing.T, h *harness, m execMode, c *Command[int, string], g *gate)
		want    []string
	}{
		{
			name: "success",
			run:  func(*gate) func(context.Context, int) (string, error) { return succeedRun },
			want: []string{"Start", "ExecutionStart", "ExecutionSuccess", "Success"},
		},
		{
			name:     "failure, fallback success",
			run:      func(*gate) func(context.Context, int) (string, error) { return failRun },
			fallback: fallbackName,
			want:     []string{"Start", "ExecutionStart", "ExecutionError(boom)", "FallbackStart", "FallbackSuccess", "Success"},
		},
		{
			name: "failure, no fallback",
			run:  func(*gate) func(context.Context, int) (string, error) { return failRun },
			want: []string{"Start", "ExecutionStart", "ExecutionError(boom)", "Error(COMMAND_EXCEPTION)"},
		},
		{
			name: "failure, fallback failure",
			run:  func(*gate) func(context.Context, int) (string, error) { return failRun },
			fallback: func(context.Context, int, error) (string, error) {
				return "", errFallback
			},
			want: []string{"Start", "ExecutionStart", "ExecutionError(boom)", "FallbackStart",
				"FallbackError(fallback down)", "Error(COMMAND_EXCEPTION)"},
		},
		{
			name: "timeout, fallback success",
			run: func(g *gate) func(context.Context, int) (string, error) {
				return func(ctx context.Context, id int) (string, error) { return "", g.wait(ctx, true) }
			},
			fallback: fallbackName,
			provoke: func(t *testing.T, h *harness, m execMode, c *Command[int, string], g *gate) {
				call := goCall(func() (string, error) { return m.exec(context.Background(), c, 1) })
				g.arrived(t)
				h.clock.Advance(DefaultTimeout)
				awaitCall(t, call)
			},
			want: []string{"Start", "ExecutionStart", "ExecutionError(command timed out)", "FallbackStart", "FallbackSuccess", "Success"},
		},
		{
			name: "short-circuit, no fallback",
			cfg:  Config{Breaker: breaker.Config{ForceOpen: true}},
			run:  func(*gate) func(context.Context, int) (string, error) { return succeedRun },
			want: []string{"Start", "Error(SHORTCIRCUIT)"},
		},
		{
			name:     "short-circuit, fallback success",
			cfg:      Config{Breaker: breaker.Config{ForceOpen: true}},
			run:      func(*gate) func(context.Context, int) (string, error) { return succeedRun },
			fallback: fallbackName,
			want:     []string{"Start", "FallbackStart", "FallbackSuccess", "Success"},
		},
		{
			name: "fallback disabled",
			cfg:  Config{FallbackDisabled: true},
			run:  func(*gate) func(context.Context, int) (string, error) { return failRun },
			want: []string{"Start", "ExecutionStart", "ExecutionError(boom)", "Error(COMMAND_EXCEPTION)"},
		},
		{
			name: "bad request",
			run: func(*gate) func(context.Context, int) (string, error) {
				return func(context.Context, int) (string, error) { return "", BadRequest(errBoom) }
			},
			fallback: fallbackName,
			want:     []string{"Start", "ExecutionStart", "ExecutionError(bad request: boom)", "Error(BAD_REQUEST_EXCEPTION)"},
		},
		{
			name: "early unsubscribe",
			run: func(g *gate) func(context.Context, int) (string, error) {
				return func(ctx context.Context, id int) (string, error) { return "", g.wait(ctx, true) }
			},
			fallback: fallbackName,
			provoke: func(t *testing.T, h *harness, m execMode, c *Command[int, string], g *gate) {
				ctx, cancel := context.WithCancel(context.Background())
				call := goCall(func() (string, error) { return m.exec(ctx, c, 1) })
				g.arrived(t)
				cancel()
				awaitCall(t, call)
			},
			want: []string{"Start", "ExecutionStart", "Unsubscribe"},
		},
	}
	// A hook of the whole registry and a hook of the key alone hear the
	// same calls: the fused paths check for either.
	for _, tc := range cases {
		for _, keyHook := range []bool{false, true} {
			name := tc.name + "/registry hook"
			if keyHook {
				name = tc.name + "/key hook"
			}
			t.Run(name, func(t *testing.T) {
				forEachModeAndIsolation(t, func(t *testing.T, h *harness, m execMode, iso Isolation) {
					rec := &hookRecorder{}
					if keyHook {
						h.reg.AddKeyHook("GetUser", rec)
					} else {
						h.reg.AddHook(rec)
					}
					g := newGate()
					defer g.release()
					cfg := tc.cfg
					cfg.Isolation = iso
					c := New("GetUser", tc.run(g), WithRegistry(h.reg), WithConfig(cfg))
					if tc.fallback != nil {
						c = c.WithFallback(tc.fallback)
					}
					if tc.provoke != nil {
						tc.provoke(t, h, m, c, g)
					} else {
						m.exec(context.Background(), c, 1)
					}
					h.completion() // the hooks have all been called by then
					assert.Equal(t, tc.want, rec.take())
				})
			})
		}
	}
}

// 51: the rejections: pool full and semaphore full, without a fallback,
// are Start then Error.
func TestExecutionHookRejections(t *testing.T) {
	for _, iso := range bothIsolations {
		t.Run(iso.String(), func(t *testing.T) {
			forEachMode(t, func(t *testing.T, h *harness, m execMode) {
				rec := &hookRecorder{}
				h.reg.AddKeyHook("GetUser", rec)
				require.NoError(t, h.reg.ConfigurePool("GetUser", PoolConfig{CoreSize: 1}))
				g := newGate()
				defer g.release()
				c := New("GetUser", func(ctx context.Context, id int) (string, error) { return "", g.wait(ctx, true) },
					WithRegistry(h.reg), WithConfig(Config{Isolation: iso, MaxConcurrentRequests: 1, Timeout: -1}))
				holder := goCall(func() (string, error) { return c.Execute(context.Background(), 1) })
				g.arrived(t)
				rec.take()
				m.exec(context.Background(), c, 2)
				h.completion()
				want := "Error(REJECTED_THREAD_EXECUTION)"
				if iso == SemaphoreIsolation {
					want = "Error(REJECTED_SEMAPHORE_EXECUTION)"
				}
				assert.Equal(t, []string{"Start", want}, rec.take())
				g.release()
				awaitCall(t, holder)
				h.completion()
			})
		})
	}
}

// Registry-wide hooks are called before the key's own, and only the
// key's commands call a key hook.
func TestExecutionHooksGlobalThenKey(t *testing.T) {
	h := newHarness(t)
	var order []string
	h.reg.AddHook(orderHook{name: "global", order: &order})
	h.reg.AddHook(orderHook{name: "global2", order: &order})
	h.reg.AddKeyHook("GetUser", orderHook{name: "key", order: &order})
	c := New("GetUser", succeedRun, WithRegistry(h.reg), WithConfig(Config{Isolation: SemaphoreIsolation}))
	other := New("Other", succeedRun, WithRegistry(h.reg), WithConfig(Config{Isolation: SemaphoreIsolation}))
	_, err := c.Execute(context.Background(), 1)
	require.NoError(t, err)
	assert.Equal(t, []string{"global", "global2", "key"}, order)
	order = nil
	_, err = other.Execute(context.Background(), 1)
	require.NoError(t, err)
	assert.Equal(t, []string{"global", "global2"}, order)
}

// orderHook records its name at Start.
type orderHook struct {
	NoOpHook
	name  string
	order *[]string
}

func (o orderHook) Start(string) { *o.order = append(*o.order, o.name) }

// EventNotifier is told of each event as it happens, before the
// Completion is published, through every way of executing.
func TestEventNotifier(t *testing.T) {
	forEachModeAndIsolation(t, func(t *testing.T, h *harness, m execMode, iso Isolation) {
		var mu sync.Mutex
		var events []string
		var keyEvents []string
		h.reg.AddEventNotifier(EventNotifierFunc(func(key string, e ms.EventType) {
			mu.Lock()
			defer mu.Unlock()
			events = append(events, key+":"+e.String())
		}))
		h.reg.AddKeyEventNotifier("GetUser", EventNotifierFunc(func(key string, e ms.EventType) {
			mu.Lock()
			defer mu.Unlock()
			keyEvents = append(keyEvents, e.String())
		}))
		c := New("GetUser", failRun, WithRegistry(h.reg), WithConfig(Config{Isolation: iso})).WithFallback(fallbackName)
		other := New("Other", succeedRun, WithRegistry(h.reg), WithConfig(Config{Isolation: iso}))
		m.exec(context.Background(), c, 1)
		h.completion()
		m.exec(context.Background(), other, 1)
		h.completion()
		mu.Lock()
		defer mu.Unlock()
		assert.Equal(t, []string{"GetUser:FAILURE", "GetUser:FALLBACK_SUCCESS", "Other:SUCCESS"}, events)
		assert.Equal(t, []string{"FAILURE", "FALLBACK_SUCCESS"}, keyEvents)
	})
}

// panicky panics in every hook and notifier method.
type panicky struct{}

func (panicky) Start(string)                     { panic("hook") }
func (panicky) ExecutionStart(string)            { panic("hook") }
func (panicky) ExecutionSuccess(string)          { panic("hook") }
func (panicky) ExecutionError(string, error)     { panic("hook") }
func (panicky) FallbackStart(string)             { panic("hook") }
func (panicky) FallbackSuccess(string)           { panic("hook") }
func (panicky) FallbackError(string, error)      { panic("hook") }
func (panicky) Success(string)                   { panic("hook") }
func (panicky) Error(string, FailureType, error) { panic("hook") }
func (panicky) CacheHit(string)                  { panic("hook") }
func (panicky) Unsubscribe(string)               { panic("hook") }
func (panicky) Notify(string, ms.EventType)      { panic("notifier") }

// A panicking hook or notifier never breaks a command, and the hooks
// after it are still called.
func TestPanickingHookNeverBreaksACommand(t *testing.T) {
	forEachModeAndIsolation(t, func(t *testing.T, h *harness, m execMode, iso Isolation) {
		h.reg.AddHook(panicky{})
		h.reg.AddEventNotifier(panicky{})
		rec := &hookRecorder{}
		h.reg.AddHook(rec)
		h.reg.AddKeyHook("GetUser", panicky{})
		h.reg.AddKeyEventNotifier("GetUser", panicky{})
		ok := New("GetUser", succeedRun, WithRegistry(h.reg), WithConfig(Config{Isolation: iso}))
		v, err := m.exec(context.Background(), ok, 2)
		require.NoError(t, err)
		assert.Equal(t, "user-2", v)
		assert.Equal(t, evs("SUCCESS"), h.events())

		broken := New("GetUser", failRun, WithRegistry(h.reg), WithConfig(Config{Isolation: iso})).WithFallback(fallbackName)
		v, err = m.exec(context.Background(), broken, 2)
		require.NoError(t, err)
		assert.Equal(t, "anonymous", v)
		assert.Equal(t, evs("FAILURE", "FALLBACK_SUCCESS"), h.events())
		assert.Contains(t, rec.take(), "FallbackSuccess")
		h.assertReleased("GetUser")
	})
}

// eventLog is an EventNotifier that records the events it hears, and
// whether the registry had published the execution's Completion by then.
type eventLog struct {
	mu        sync.Mutex
	events    []string
	published func() int // the Completions published so far
	late      []string   // events heard after their Completion was published
}

func (l *eventLog) Notify(key string, e ms.EventType) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, e.String())
	if l.published != nil && l.published() > 0 {
		l.late = append(l.late, e.String())
	}
}

func (l *eventLog) take() (events, late []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	events, late = l.events, l.late
	l.events, l.late = nil, nil
	return events, late
}

// EventNotifier "is told of each event the moment it happens": a retry the
// budget refuses is recorded RETRY_BUDGET_EXHAUSTED, which the notifiers
// must hear, as they hear every other event of the key.
func TestEventNotifierHearsRetryBudgetExhausted(t *testing.T) {
	h, spy := newSpiedHarness(t)
	heard := &eventLog{}
	h.reg.AddKeyEventNotifier("Budget", heard)
	c := New("Budget", failRun, WithRegistry(h.reg), WithConfig(Config{
		Isolation: SemaphoreIsolation,
		Timeout:   -1,
		Retry:     RetryConfig{MaxAttempts: 2, Backoff: exactBackoff, Budget: RetryBudget{MinConcurrency: 1}},
	})).WithFallback(fallbackName)
	first := goCall(func() (string, error) { return c.Execute(context.Background(), 1) })
	assert.Equal(t, evs("FAILURE"), h.events())
	recv(t, spy.armed, "the first call's backoff")

	_, err := c.Execute(context.Background(), 2)
	require.NoError(t, err)
	assert.Equal(t, evs("RETRY_BUDGET_EXHAUSTED"), h.events())
	assert.Equal(t, evs("FAILURE", "FALLBACK_SUCCESS"), h.events())

	h.clock.Advance(exactBackoff.Initial)
	awaitCall(t, first)
	h.completion()
	events, _ := heard.take()
	assert.Contains(t, events, "RETRY_BUDGET_EXHAUSTED", "the notifier never heard the refused retry: %v", events)
}

// EventNotifier is told of each event "before the execution's Completion
// is published": a cache hit's RESPONSE_FROM_CACHE too.
func TestEventNotifierHearsCacheHitBeforeItsCompletion(t *testing.T) {
	h := newHarness(t)
	heard := &eventLog{published: func() int { return len(h.completions) }}
	c := New("Cached", succeedRun, WithRegistry(h.reg), WithConfig(Config{Isolation: SemaphoreIsolation})).
		WithCacheKey(func(id int) string { return userName(id) })
	ctx := WithRequestContext(context.Background())
	_, err := c.Execute(ctx, 1)
	require.NoError(t, err)
	h.completion()
	h.reg.AddKeyEventNotifier("Cached", heard)
	_, err = c.Execute(ctx, 1)
	require.NoError(t, err)
	assert.Equal(t, evs("RESPONSE_FROM_CACHE"), h.events())
	events, late := heard.take()
	assert.Equal(t, []string{"RESPONSE_FROM_CACHE"}, events)
	assert.Empty(t, late, "heard after the cache hit's Completion was published")
}

// A caller that leaves while the fallback runs ends the execution
// CANCELLED; its ExecutionLatency (the request log's execution time) is
// still how long run ran, not run and the fallback, even when run took no
// time on the registry's clock.
func TestLeavingDuringFallbackKeepsRunsLatency(t *testing.T) {
	forEachModeAndIsolation(t, func(t *testing.T, h *harness, m execMode, iso Isolation) {
		ctx, cancel := context.WithCancel(WithRequestContext(context.Background()))
		defer cancel()
		c := New("GetUser", failRun, WithRegistry(h.reg), WithConfig(Config{Isolation: iso})).
			WithFallback(func(context.Context, int, error) (string, error) {
				h.clock.Advance(30 * time.Millisecond)
				cancel()
				return "anonymous", nil
			})
		_, err := m.exec(ctx, c, 1)
		require.ErrorIs(t, err, context.Canceled)
		done := h.completion()
		assert.Equal(t, evs("FAILURE", "CANCELLED"), eventNames(done.Events))
		assert.Equal(t, time.Duration(0), done.ExecutionLatency, "run took no time")
		assert.Equal(t, []string{"GetUser[FAILURE, CANCELLED][0ms]"}, []string{RequestLogFrom(ctx).String()})
	})
}

// startLeaver is a hookRecorder whose ExecutionStart, on the pool worker,
// makes the caller leave and gives it every chance to conclude before
// ExecutionStart is recorded.
type startLeaver struct {
	*hookRecorder
	leave func()
}

func (s startLeaver) ExecutionStart(key string) {
	s.leave()
	for range 10000 {
		if slices.Contains(s.snapshot(), "Unsubscribe") {
			break
		}
		runtime.Gosched()
	}
	s.hookRecorder.ExecutionStart(key)
}

func (r *hookRecorder) snapshot() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.calls)
}

// A pool worker tells ExecutionStart before the caller, leaving as run
// starts, concludes the execution: Hystrix's order of an early
// unsubscribe is onStart, onExecutionStart, onUnsubscribe, and a hook that
// pairs ExecutionStart with the hook that ends the execution (a span,
// say) must not see the end first.
func TestExecutionStartHookBeforeTheCallerConcludes(t *testing.T) {
	h := newHarness(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rec := &hookRecorder{}
	h.reg.AddKeyHook("GetUser", startLeaver{rec, cancel})
	c := New("GetUser", func(ctx context.Context, id int) (string, error) {
		<-ctx.Done()
		return "", ctx.Err()
	}, WithRegistry(h.reg), WithConfig(Config{Isolation: PoolIsolation}))
	_, err := c.Execute(ctx, 1)
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, evs("CANCELLED"), h.events())
	assert.Equal(t, []string{"Start", "ExecutionStart", "Unsubscribe"}, rec.take())
	h.waitIdle(t, "GetUser")
}

// A hook registered while an execution waits in its pool's queue is told
// nothing of that execution, which began before it: the execution's hooks
// are those of its Start. A worker that told it ExecutionStart would leave
// a hook that pairs ExecutionStart with the end of the execution (a span,
// an in-flight count) with a start that never ends.
func TestHookAddedMidExecutionHearsNoUnpairedExecutionStart(t *testing.T) {
	h := newHarness(t)
	require.NoError(t, h.reg.ConfigurePool("GetUser", PoolConfig{CoreSize: 1, MaxQueueSize: 1}))
	g := newGate()
	defer g.release()
	c := New("GetUser", func(ctx context.Context, id int) (string, error) {
		if id == 1 {
			return "", g.wait(ctx, true)
		}
		return userName(id), nil
	}, WithRegistry(h.reg), WithConfig(Config{Timeout: time.Hour}))
	first := goCall(func() (string, error) { return c.Execute(context.Background(), 1) })
	g.arrived(t)
	second := goCall(func() (string, error) { return c.Execute(context.Background(), 2) })
	h.waitQueued(t, "GetUser", 1)

	rec := &hookRecorder{}
	h.reg.AddHook(rec)
	g.release()
	awaitCall(t, first)
	awaitCall(t, second)
	h.completion()
	h.completion()
	assert.Empty(t, rec.take(), "both executions began before the hook was added")
}

// A nil hook or notifier is refused where it is added, naming what is
// nil: taken, it would panic, recovered, at every step of every
// execution, and nothing would say why.
func TestANilHookOrNotifierIsRefused(t *testing.T) {
	r := NewRegistry()
	t.Cleanup(r.Close)
	assert.PanicsWithValue(t, "command: a nil ExecutionHook", func() { r.AddHook(nil) })
	assert.PanicsWithValue(t, "command: a nil ExecutionHook", func() { r.AddKeyHook("GetUser", nil) })
	assert.PanicsWithValue(t, "command: a nil EventNotifier", func() { r.AddEventNotifier(nil) })
	assert.PanicsWithValue(t, "command: a nil EventNotifier", func() { r.AddKeyEventNotifier("GetUser", EventNotifierFunc(nil)) })
}
