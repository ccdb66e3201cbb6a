package command

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/metricsstream"
	"github.com/rxhystrix/rxhystrix/observable"
)

// tracedKey is the context key of a recordingTracer's traces.
type tracedKey struct{}

// parentKey is the context key of a caller's value that a trace's
// parent must carry.
type parentKey struct{}

// recordingTracer keeps what it is told: each trace, its parent's value
// of parentKey, its start and, once it ends, its Completion.
type recordingTracer struct {
	mu     sync.Mutex
	traces []*recordedTrace
	ended  chan *recordedTrace
}

type recordedTrace struct {
	key    string
	parent any
	batch  *Batch // BatchOf the context Begin was given
	start  time.Time
	end    *metricsstream.Completion
	ends   int
}

func newRecordingTracer() *recordingTracer {
	return &recordingTracer{ended: make(chan *recordedTrace, 64)}
}

func (r *recordingTracer) Begin(ctx context.Context, key string, start time.Time) ExecutionTrace {
	t := &recordedTrace{key: key, parent: ctx.Value(parentKey{}), start: start}
	t.batch, _ = BatchOf(ctx)
	r.mu.Lock()
	r.traces = append(r.traces, t)
	r.mu.Unlock()
	return tracing{r, t}
}

// tracing is a recordedTrace as an ExecutionTrace.
type tracing struct {
	r *recordingTracer
	t *recordedTrace
}

func (t tracing) Context(ctx context.Context) context.Context {
	return context.WithValue(ctx, tracedKey{}, t.t)
}

func (t tracing) End(c *metricsstream.Completion) {
	t.r.mu.Lock()
	seen := *c
	t.t.end = &seen
	t.t.ends++
	t.r.mu.Unlock()
	t.r.ended <- t.t
}

// next waits for the next trace to end.
func (r *recordingTracer) next(t *testing.T) *recordedTrace {
	t.Helper()
	select {
	case tr := <-r.ended:
		return tr
	case <-time.After(stuckAfter):
		t.Fatal("no trace ended")
		return nil
	}
}

// Every execution is traced in every mode and isolation: begun under the
// caller's context, its run and fallback under the trace's, and ended
// once with its Completion.
func TestTracerTracesEachExecution(t *testing.T) {
	forEachModeAndIsolation(t, func(t *testing.T, h *harness, m execMode, iso Isolation) {
		tr := newRecordingTracer()
		h.reg.SetTracer(tr)
		var runTrace, fallbackTrace any
		c := New("GetUser", func(ctx context.Context, id int) (string, error) {
			runTrace = ctx.Value(tracedKey{})
			return "", errBoom
		}, WithRegistry(h.reg), WithConfig(Config{Isolation: iso})).WithFallback(func(ctx context.Context, id int, err error) (string, error) {
			fallbackTrace = ctx.Value(tracedKey{})
			return "anonymous", nil
		})
		ctx := context.WithValue(context.Background(), parentKey{}, "request-7")
		v, err := m.exec(ctx, c, 1)
		require.NoError(t, err)
		assert.Equal(t, "anonymous", v)
		done := h.completion()

		got := tr.next(t)
		assert.Equal(t, "GetUser", got.key)
		assert.Equal(t, "request-7", got.parent, "begun under the caller's context")
		assert.Equal(t, harnessStart, got.start.UTC(), "at the execution's start, on the registry's clock")
		assert.Same(t, got, runTrace, "run's context has the trace")
		assert.Same(t, got, fallbackTrace, "the fallback's context has the trace")
		assert.Equal(t, 1, got.ends)
		assert.Equal(t, evs("FAILURE", "FALLBACK_SUCCESS"), eventNames(got.end.Events))
		assert.Equal(t, done.Events, got.end.Events, "the Completion the metrics got")
		assert.Equal(t, harnessStart, got.end.End.UTC())
	})
}

// A short circuit never runs, and is traced all the same.
func TestTracerTracesAShortCircuit(t *testing.T) {
	h := newHarness(t)
	tr := newRecordingTracer()
	h.reg.SetTracer(tr)
	c := New("GetUser", failRun, WithRegistry(h.reg), WithConfig(Config{Isolation: SemaphoreIsolation, Breaker: tripAfterThree}))
	h.openBreaker(func() { c.Execute(context.Background(), 1) }, 3, "GetUser")
	for range 3 {
		assert.Equal(t, evs("FAILURE", "FALLBACK_MISSING"), eventNames(tr.next(t).end.Events))
	}
	_, err := c.Execute(context.Background(), 1)
	require.ErrorIs(t, err, ErrShortCircuited)
	h.completion()
	assert.Equal(t, evs("SHORT_CIRCUITED", "FALLBACK_MISSING"), eventNames(tr.next(t).end.Events))
}

// Each attempt of a call that retries is an execution, traced on its
// own under the caller's context.
func TestTracerTracesEachAttempt(t *testing.T) {
	h, spy := newSpiedHarness(t)
	tr := newRecordingTracer()
	h.reg.SetTracer(tr)
	calls := 0
	c := New("GetUser", func(ctx context.Context, id int) (string, error) {
		if calls++; calls == 1 {
			return "", errBoom
		}
		return "ann", nil
	}, WithRegistry(h.reg), WithConfig(Config{Isolation: SemaphoreIsolation, Retry: RetryConfig{MaxAttempts: 2, Backoff: exactBackoff}}))
	ctx := context.WithValue(context.Background(), parentKey{}, "request-8")
	done := goCall(func() (string, error) { return c.Execute(ctx, 1) })
	first := tr.next(t)
	// The backoff's timer, not any timer: a health snapshot's may be
	// pending already, and the clock moved before the backoff is armed
	// would leave it waiting.
	assert.Equal(t, exactBackoff.Initial, recv(t, spy.armed, "the backoff's timer"))
	h.clock.Advance(exactBackoff.Initial)
	res := <-done
	require.NoError(t, res.err)
	second := tr.next(t)
	assert.Equal(t, evs("FAILURE"), eventNames(first.end.Events))
	assert.Equal(t, evs("SUCCESS", "RETRIED"), eventNames(second.end.Events))
	assert.Equal(t, "request-8", second.parent, "a retry's parent is the caller's too")
}

// A tracer that panics never breaks a command, and SetTracer(nil) stops
// the tracing.
func TestTracerPanicsAreIgnoredAndNilStops(t *testing.T) {
	h := newHarness(t)
	c := New("GetUser", func(ctx context.Context, id int) (string, error) {
		return userName(id), nil
	}, WithRegistry(h.reg), WithConfig(Config{Isolation: SemaphoreIsolation}))
	for _, p := range []panickingTracer{{inBegin: true}, {inContext: true}, {inEnd: true}} {
		h.reg.SetTracer(p)
		v, err := c.Execute(context.Background(), 1)
		require.NoError(t, err, "%+v", p)
		assert.Equal(t, "user-1", v)
		h.completion()
	}
	tr := newRecordingTracer()
	h.reg.SetTracer(tr)
	h.reg.SetTracer(nil)
	_, err := c.Execute(context.Background(), 1)
	require.NoError(t, err)
	h.completion()
	assert.Empty(t, tr.traces)
}

type panickingTracer struct{ inBegin, inContext, inEnd bool }

func (p panickingTracer) Begin(context.Context, string, time.Time) ExecutionTrace {
	if p.inBegin {
		panic("Begin")
	}
	return p
}

func (p panickingTracer) Context(ctx context.Context) context.Context {
	if p.inContext {
		panic("Context")
	}
	return ctx
}

func (p panickingTracer) End(*metricsstream.Completion) {
	if p.inEnd {
		panic("End")
	}
}

// An ObservableCommand's stream is one execution, traced until it
// completes, its Observable made under the trace's context.
func TestTracerTracesAStream(t *testing.T) {
	h := newHarness(t)
	tr := newRecordingTracer()
	h.reg.SetTracer(tr)
	var constructTrace any
	c := NewObservable("Stream", func(ctx context.Context, n int) observable.Observable[int] {
		constructTrace = ctx.Value(tracedKey{})
		return observable.Just(1, 2, 3)
	}, WithRegistry(h.reg))
	got, err := c.ToObservable(context.Background(), 3).ToSlice(context.Background())
	require.NoError(t, err)
	assert.Equal(t, []int{1, 2, 3}, got)
	h.completion()
	trace := tr.next(t)
	assert.Same(t, trace, constructTrace)
	assert.Equal(t, evs("EMIT", "EMIT", "EMIT", "SUCCESS"), eventNames(trace.end.Events))
}

// A request cache's hit is traced under its caller's context: it did not
// run, and its trace shows the served execution's events with
// RESPONSE_FROM_CACHE, as the request log does.
func TestTracerTracesACacheHit(t *testing.T) {
	for name, hit := range map[string]func(ctx context.Context, c *Command[int, string]) (string, error){
		"Execute": func(ctx context.Context, c *Command[int, string]) (string, error) { return c.Execute(ctx, 1) },
		"ToObservable": func(ctx context.Context, c *Command[int, string]) (string, error) {
			return queueNow(ctx, c.ToObservable(ctx, 1)).Get(ctx)
		},
	} {
		t.Run(name, func(t *testing.T) {
			r, mc := newManualRegistry(t)
			tr := newRecordingTracer()
			r.SetTracer(tr)
			c := New("GetUser", func(ctx context.Context, id int) (string, error) { return "ann", nil },
				WithRegistry(r), WithConfig(Config{Isolation: SemaphoreIsolation})).WithCacheKey(itoa)
			ctx := WithRequestContext(context.WithValue(context.Background(), parentKey{}, "request-9"))
			_, err := c.Execute(ctx, 1)
			require.NoError(t, err)
			assert.Equal(t, evs("SUCCESS"), eventNames(tr.next(t).end.Events))

			mc.Advance(time.Second)
			v, err := hit(ctx, c)
			require.NoError(t, err)
			assert.Equal(t, "ann", v)
			got := tr.next(t)
			assert.Equal(t, "GetUser", got.key)
			assert.Equal(t, "request-9", got.parent, "begun under the caller's context")
			assert.Equal(t, requestT0.Add(time.Second), got.start)
			assert.Equal(t, evs("SUCCESS", "RESPONSE_FROM_CACHE"), eventNames(got.end.Events))
			assert.False(t, got.end.Executed)
			assert.Equal(t, 1, got.ends)
		})
	}
}

// A cache hit whose caller leaves is traced as CANCELLED when it leaves;
// one that waits for the shared execution, from when it asked to when it
// is served.
func TestTracerTracesCacheHitsThatWait(t *testing.T) {
	r, mc := newManualRegistry(t)
	tr := newRecordingTracer()
	r.SetTracer(tr)
	hits := cacheHits(r, "GetUser")
	c, _, started, release, _ := asyncCacheable(t, r, "GetUser")
	ctx := WithRequestContext(context.Background())

	original := queueNow(ctx, c.ToObservable(ctx, 1))
	<-started
	hitCtx, cancelHit := context.WithCancel(context.WithValue(ctx, parentKey{}, "leaves"))
	hitErr := make(chan error, 1)
	go func() {
		_, err := c.Execute(hitCtx, 1)
		hitErr <- err
	}()
	<-hits
	mc.Advance(3 * time.Millisecond)
	waiting := queueNow(ctx, c.ToObservable(context.WithValue(ctx, parentKey{}, "waits"), 1))
	<-hits
	cancelHit()
	require.ErrorIs(t, <-hitErr, context.Canceled)
	left := tr.next(t)
	assert.Equal(t, "leaves", left.parent)
	assert.Equal(t, evs("RESPONSE_FROM_CACHE", "CANCELLED"), eventNames(left.end.Events))
	assert.Equal(t, requestT0, left.start)
	assert.Equal(t, requestT0.Add(3*time.Millisecond), left.end.End)

	mc.Advance(2 * time.Millisecond)
	close(release)
	_, err := original.Get(ctx)
	require.NoError(t, err)
	_, err = waiting.Get(ctx)
	require.NoError(t, err)
	var served *recordedTrace
	for range 2 {
		if tr := tr.next(t); tr.parent == "waits" {
			served = tr
		}
	}
	require.NotNil(t, served)
	assert.Equal(t, evs("SUCCESS", "RESPONSE_FROM_CACHE"), eventNames(served.end.Events))
	assert.Equal(t, requestT0.Add(3*time.Millisecond), served.start)
	assert.Equal(t, requestT0.Add(5*time.Millisecond), served.end.End)
}

// untracedKeys is a Tracer that leaves every execution untraced.
type untracedKeys struct{ begun chan string }

func (u untracedKeys) Begin(_ context.Context, key string, _ time.Time) ExecutionTrace {
	u.begun <- key
	return nil
}

// A Tracer may leave an execution untraced: run gets the caller's
// context as it is, and the execution, a cache hit too, goes on.
func TestTracerMayLeaveAnExecutionUntraced(t *testing.T) {
	forEachModeAndIsolation(t, func(t *testing.T, h *harness, m execMode, iso Isolation) {
		u := untracedKeys{begun: make(chan string, 4)}
		h.reg.SetTracer(u)
		ctx := context.WithValue(context.Background(), parentKey{}, "request-10")
		var runCtx context.Context
		c := New("GetUser", func(ctx context.Context, id int) (string, error) {
			runCtx = ctx
			return "ann", nil
		}, WithRegistry(h.reg), WithConfig(Config{Isolation: iso}))
		v, err := m.exec(ctx, c, 1)
		require.NoError(t, err)
		assert.Equal(t, "ann", v)
		h.completion()
		assert.Equal(t, "GetUser", <-u.begun)
		assert.Nil(t, runCtx.Value(tracedKey{}))
		assert.Equal(t, "request-10", runCtx.Value(parentKey{}))
	})
}
