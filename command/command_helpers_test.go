package command

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/internal/clock"
	"github.com/rxhystrix/rxhystrix/metricsstream"
	"github.com/rxhystrix/rxhystrix/observable"
)

// harnessStart is where the manual clock of every harness starts.
var harnessStart = time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)

// stuckAfter bounds, in real time, how long a test waits for something
// that should already have happened before it reports the command as
// stuck. It never paces a test: time in the tests is the manual clock's.
const stuckAfter = 10 * time.Second

// harness is a Registry on a manual clock that records every Completion
// it publishes, in order, through the registry's onCompletion hook.
type harness struct {
	t           testing.TB
	clock       *clock.Manual
	reg         *Registry
	completions chan metricsstream.Completion
}

// newHarness returns a harness whose registry is closed when the test
// ends.
func newHarness(t testing.TB, opts ...RegistryOption) *harness {
	t.Helper()
	mc := clock.NewManual(harnessStart)
	r := NewRegistry(append([]RegistryOption{WithClock(mc)}, opts...)...)
	h := &harness{t: t, clock: mc, reg: r, completions: make(chan metricsstream.Completion, 1024)}
	r.onCompletion = func(c *metricsstream.Completion) { h.completions <- *c }
	t.Cleanup(r.Close)
	return h
}

// completion waits for the next Completion the registry publishes. A
// pipeline may publish from a pool worker or a timer callback just after
// its subscriber got the result, so the tests wait rather than peek.
func (h *harness) completion() metricsstream.Completion {
	h.t.Helper()
	select {
	case c := <-h.completions:
		return c
	case <-time.After(stuckAfter):
		h.t.Fatalf("no Completion published within %v", stuckAfter)
		return metricsstream.Completion{}
	}
}

// events waits for the next Completion and returns its events by name,
// in Hystrix's order, each Emit and FallbackEmit as many times as it
// happened: what Hystrix's assertCommandExecutionEvents compares.
func (h *harness) events() []string {
	h.t.Helper()
	return eventNames(h.completion().Events)
}

// noMoreCompletions asserts that every execution published exactly one
// Completion: none is waiting.
func (h *harness) noMoreCompletions() {
	h.t.Helper()
	select {
	case c := <-h.completions:
		h.t.Errorf("unexpected extra Completion of %s: %v", c.CommandKey, eventNames(c.Events))
	default:
	}
}

// eventNames lists the events of one execution by name.
func eventNames(ec metricsstream.EventCounts) []string {
	var names []string
	for e := range metricsstream.NumEventTypes {
		for range ec.Count(e) {
			if e == metricsstream.ExceptionThrown {
				continue // derived, never recorded
			}
			names = append(names, e.String())
		}
	}
	return names
}

// names is a short way to write an expected list of events.
func evs(events ...string) []string { return events }

// closeBuckets advances the clock by one rolling window, so that every
// bucket holding the executions so far has closed and the cumulative and
// rolling counts include them.
func (h *harness) closeBuckets(key string) {
	h.t.Helper()
	cfg, ok := h.reg.Config(key)
	require.True(h.t, ok, "unknown key %q", key)
	window := cfg.Metrics.RollingWindow
	if window == 0 {
		window = metricsstream.DefaultRollingWindow
	}
	h.clock.Advance(window)
}

// openBreaker fails calls of c until its health counts trip the breaker:
// requestVolume failures, then one health snapshot.
func (h *harness) openBreaker(failRun func(), requestVolume int, key string) {
	h.t.Helper()
	for range requestVolume {
		failRun()
		h.completion()
	}
	h.clock.Advance(snapshotInterval(h.reg, key))
	require.True(h.t, h.reg.Breaker(key).IsOpen(), "breaker of %s should be open", key)
}

// snapshotInterval returns the health snapshot interval of key.
func snapshotInterval(r *Registry, key string) time.Duration {
	cfg, _ := r.Config(key)
	if cfg.Metrics.HealthSnapshotInterval == 0 {
		return metricsstream.DefaultHealthSnapshotInterval
	}
	return cfg.Metrics.HealthSnapshotInterval
}

// result is what an execution returned.
type callResult[Out any] struct {
	v   Out
	err error
}

// goCall runs f on a new goroutine and delivers its result.
func goCall[Out any](f func() (Out, error)) <-chan callResult[Out] {
	ch := make(chan callResult[Out], 1)
	go func() {
		v, err := f()
		ch <- callResult[Out]{v, err}
	}()
	return ch
}

// fatalT is what the waiting helpers need of a test: a *testing.T, or a
// *rapid.T in a property test.
type fatalT interface {
	Helper()
	Fatalf(format string, args ...any)
}

// await waits for the result of an async call.
func awaitCall[Out any](t fatalT, ch <-chan callResult[Out]) callResult[Out] {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(stuckAfter):
		t.Fatalf("the call did not return within %v", stuckAfter)
		return callResult[Out]{}
	}
}

// notReturned asserts that an async call is still blocked.
func notReturned[Out any](t testing.TB, ch <-chan callResult[Out]) {
	t.Helper()
	select {
	case r := <-ch:
		t.Fatalf("the call returned (%v, %v); it should still be running", r.v, r.err)
	default:
	}
}

// waitFor spins until cond holds: for goroutines to reach a state that no
// event announces (a run waiting in a pool's queue, say).
func waitFor(t fatalT, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(stuckAfter)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		runtime.Gosched()
	}
}

// receive waits for a value from ch.
func recv[T any](t fatalT, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(stuckAfter):
		t.Fatalf("timed out waiting for %s", what)
		var zero T
		return zero
	}
}

// gate is a run that blocks until the test opens it, and tells the test
// each time a call has entered it.
type gate struct {
	entered chan context.Context // the context of each call that entered
	open    chan struct{}
	once    sync.Once
	running atomic.Int64 // calls inside now
	most    atomic.Int64 // the most calls inside at once
}

func newGate() *gate {
	return &gate{entered: make(chan context.Context, 100), open: make(chan struct{})}
}

// wait is the body of a blocking run: it returns when the gate opens, or
// with ctx's error when honourCtx and ctx ends first.
func (g *gate) wait(ctx context.Context, honourCtx bool) error {
	n := g.running.Add(1)
	defer g.running.Add(-1)
	storeMax(&g.most, n)
	g.entered <- ctx
	if !honourCtx {
		<-g.open
		return nil
	}
	select {
	case <-g.open:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// runLate is a run that answers "late" once the gate opens, or ends with
// its context's error first.
func (g *gate) runLate(ctx context.Context, _ int) (string, error) {
	return "late", g.wait(ctx, true)
}

// arrived waits for the next call to enter the gate and returns its
// context.
func (g *gate) arrived(t testing.TB) context.Context {
	t.Helper()
	return recv(t, g.entered, "a call to enter run")
}

// release opens the gate for every call, now and later.
func (g *gate) release() { g.once.Do(func() { close(g.open) }) }

// execModeOf is one way of executing a Command: the fused Execute or one
// of the layers on the Observable pipeline.
type execModeOf[In any] struct {
	name string
	exec func(ctx context.Context, c *Command[In, string], in In) (string, error)
}

// execMode is the mode of the tests' usual Command[int, string].
type execMode = execModeOf[int]

// execModesOf are the four ways of executing a Command; every scenario
// that matters runs through all of them, which proves the fused path and
// the pipeline identical.
func execModesOf[In any]() []execModeOf[In] {
	return []execModeOf[In]{
		{"Execute", func(ctx context.Context, c *Command[In, string], in In) (string, error) {
			return c.Execute(ctx, in)
		}},
		{"ToObservable.First", func(ctx context.Context, c *Command[In, string], in In) (string, error) {
			return c.ToObservable(ctx, in).First(ctx)
		}},
		{"Queue.Get", func(ctx context.Context, c *Command[In, string], in In) (string, error) {
			return c.Queue(ctx, in).Get(ctx)
		}},
		{"Observe.Last", func(ctx context.Context, c *Command[In, string], in In) (string, error) {
			return c.Observe(ctx, in).Last(ctx)
		}},
		// An operator that does not take a Single's result directly: a
		// subscription, on the subscribing goroutine.
		{"ToObservable.Map.First", func(ctx context.Context, c *Command[In, string], in In) (string, error) {
			return observable.Map(c.ToObservable(ctx, in), func(v string) string { return v }).First(ctx)
		}},
		{"Zip2.First", func(ctx context.Context, c *Command[In, string], in In) (string, error) {
			return observable.Zip2(c.ToObservable(ctx, in), observable.Just(""), func(v, _ string) string { return v }).First(ctx)
		}},
	}
}

// twoContextMode executes a Command[int, string] of input 1 with cmdCtx
// given to ToObservable and subCtx to the subscription.
type twoContextMode struct {
	name string
	exec func(c *Command[int, string], cmdCtx, subCtx context.Context) (string, error)
}

// twoContextModes are the ways of giving ToObservable one context and
// subscribing with another: in a call (First, Zip2's First) and in a
// subscription (Map's).
var twoContextModes = []twoContextMode{
	{"First", func(c *Command[int, string], cmdCtx, subCtx context.Context) (string, error) {
		return c.ToObservable(cmdCtx, 1).First(subCtx)
	}},
	{"Map.First", func(c *Command[int, string], cmdCtx, subCtx context.Context) (string, error) {
		return observable.Map(c.ToObservable(cmdCtx, 1), func(v string) string { return v }).First(subCtx)
	}},
	{"Zip2.First", func(c *Command[int, string], cmdCtx, subCtx context.Context) (string, error) {
		return observable.Zip2(c.ToObservable(cmdCtx, 1), observable.Just(""), func(v, _ string) string { return v }).First(subCtx)
	}},
}

// execModes are the modes of Command[int, string].
var execModes = execModesOf[int]()

// bothIsolations are the two isolation strategies.
var bothIsolations = []Isolation{PoolIsolation, SemaphoreIsolation}

// forEachModeAndIsolation runs f as a subtest for every execMode under both
// isolations, each with a fresh harness.
func forEachModeAndIsolation(t *testing.T, f func(t *testing.T, h *harness, m execMode, iso Isolation)) {
	for _, iso := range bothIsolations {
		for _, m := range execModes {
			t.Run(iso.String()+"/"+m.name, func(t *testing.T) {
				f(t, newHarness(t), m, iso)
			})
		}
	}
}

// forEachMode runs f as a subtest for every execMode, each with a fresh
// harness.
func forEachMode(t *testing.T, f func(t *testing.T, h *harness, m execMode)) {
	for _, m := range execModes {
		t.Run(m.name, func(t *testing.T) { f(t, newHarness(t), m) })
	}
}

// errBoom is the error of failing runs.
var errBoom = errors.New("boom")

// succeedRun is a run that returns the user's name.
func succeedRun(ctx context.Context, id int) (string, error) { return userName(id), nil }

// failRun is a run that fails with errBoom.
func failRun(ctx context.Context, id int) (string, error) { return "", errBoom }

// fallbackName is a fallback that returns a placeholder.
func fallbackName(ctx context.Context, id int, err error) (string, error) { return "anonymous", nil }

func userName(id int) string { return "user-" + string(rune('0'+id%10)) }

// assertCommandError asserts that err is an *Error of key with the given
// failure, cause and fallback error, and returns it.
func assertCommandError(t testing.TB, err error, key string, failure FailureType, cause, fallbackErr error) *Error {
	t.Helper()
	var ce *Error
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, key, ce.Command, "Command")
	assert.Equal(t, failure, ce.Failure, "Failure")
	if cause != nil {
		assert.ErrorIs(t, ce.Cause, cause, "Cause")
		assert.ErrorIs(t, err, cause)
	}
	if fallbackErr != nil {
		assert.ErrorIs(t, ce.FallbackErr, fallbackErr, "FallbackErr")
	} else {
		assert.NoError(t, ce.FallbackErr, "FallbackErr")
	}
	return ce
}

// goroutineID returns the id of the calling goroutine, read from its
// stack header ("goroutine 42 [running]:"), to tell whether two calls ran
// on the same goroutine.
func goroutineID() int64 {
	var buf [64]byte
	n := runtime.Stack(buf[:], false)
	var id int64
	for _, c := range buf[len("goroutine "):n] {
		if c < '0' || c > '9' {
			break
		}
		id = id*10 + int64(c-'0')
	}
	return id
}

// execPermits and fallbackPermits report the permits of key in use.
func (h *harness) execPermits(key string) int64 { return h.state(key).metrics.ConcurrentExecutions() }

func (h *harness) fallbackPermits(key string) int64 { return h.state(key).fallbackSem.used() }

func (h *harness) state(key string) *keyState {
	h.t.Helper()
	k, ok := h.reg.keys.Load(key)
	require.True(h.t, ok, "unknown key %q", key)
	return k.(*keyState)
}

// pool returns the pool named key.
func (h *harness) pool(key string) *pool {
	h.t.Helper()
	p, ok := h.reg.pools.Load(key)
	require.True(h.t, ok, "no pool %q", key)
	return p.(*pool)
}

// waitIdle waits until the pool named key runs and queues nothing.
func (h *harness) waitIdle(t fatalT, key string) {
	t.Helper()
	waitFor(t, "pool "+key+" to be idle", func() bool { return h.pool(key).idle() })
}

// waitQueued waits until n tasks wait in the queue of the pool named key.
func (h *harness) waitQueued(t fatalT, key string, n int) {
	t.Helper()
	waitFor(t, fmt.Sprintf("%d tasks queued in pool %s", n, key), func() bool {
		_, queued := h.pool(key).size()
		return queued == n
	})
}

// assertReleased asserts that an ended execution of key gave everything
// back: no permit held, no execution counted as running.
func (h *harness) assertReleased(key string) {
	h.t.Helper()
	assert.Zero(h.t, h.execPermits(key), "execution permits in use")
	assert.Zero(h.t, h.fallbackPermits(key), "fallback permits in use")
	assert.Zero(h.t, h.state(key).metrics.ConcurrentExecutions(), "concurrent executions")
}

// collect subscribes to o and gathers its values and terminal event.
type collected[T any] struct {
	mu     sync.Mutex
	values []T
	err    error
	done   chan struct{}
	sub    observable.Subscription
}

func subscribeAll[T any](ctx context.Context, o observable.Observable[T]) *collected[T] {
	c := &collected[T]{done: make(chan struct{})}
	c.sub = o.SubscribeFunc(ctx,
		func(v T) { c.mu.Lock(); c.values = append(c.values, v); c.mu.Unlock() },
		func(err error) { c.mu.Lock(); c.err = err; c.mu.Unlock(); close(c.done) },
		func() { close(c.done) })
	return c
}

// wait waits for the terminal event and returns the values and error.
func (c *collected[T]) wait(t testing.TB) ([]T, error) {
	t.Helper()
	recv(t, c.done, "the terminal event")
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.values, c.err
}

// poolWorkerRunning reports whether any goroutine is a pool's worker.
func poolWorkerRunning() bool {
	buf := make([]byte, 1<<20)
	return strings.Contains(string(buf[:runtime.Stack(buf, true)]), "command.(*pool).work(")
}

// handedOverWorkPending reports whether an execution that Queue or
// Observe handed over may still begin: the starter has work in its lists,
// or a goroutine it or a waiter started has not subscribed yet.
func handedOverWorkPending() bool {
	buf := make([]byte, 1<<20)
	stacks := string(buf[:runtime.Stack(buf, true)])
	return strings.Contains(stacks, "observable.runStarter(") || strings.Contains(stacks, "observable.(*unstarted[")
}

// deadlineCtx is a caller's context whose deadline passes when the test
// closes done, with no real time: Done is closed, and Err is
// DeadlineExceeded.
type deadlineCtx struct {
	context.Context
	done chan struct{}
}

func newDeadlineCtx() *deadlineCtx {
	return &deadlineCtx{Context: context.Background(), done: make(chan struct{})}
}

func (c *deadlineCtx) Done() <-chan struct{} { return c.done }

func (c *deadlineCtx) Err() error {
	select {
	case <-c.done:
		return context.DeadlineExceeded
	default:
		return nil
	}
}
