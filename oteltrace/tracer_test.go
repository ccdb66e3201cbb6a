package oteltrace_test

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/rxhystrix/rxhystrix/breaker"
	"github.com/rxhystrix/rxhystrix/clock"
	"github.com/rxhystrix/rxhystrix/command"
	"github.com/rxhystrix/rxhystrix/metricsstream"
	"github.com/rxhystrix/rxhystrix/observable"
	"github.com/rxhystrix/rxhystrix/oteltrace"
)

var t0 = time.Date(2026, 12, 5, 9, 0, 0, 0, time.UTC)

// traced is a registry on a manual clock whose executions are traced
// into a span recorder, and a tracer for the callers' spans.
type traced struct {
	provider *sdktrace.TracerProvider
	reg      *command.Registry
	clock    *clock.Manual
	recorder *tracetest.SpanRecorder
	tracer   trace.Tracer
}

func newTraced(t *testing.T) *traced {
	t.Helper()
	tr := &traced{clock: clock.NewManual(t0), recorder: tracetest.NewSpanRecorder()}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(tr.recorder))
	tr.provider = tp
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	tr.reg = command.NewRegistry(command.WithClock(tr.clock))
	t.Cleanup(tr.reg.Close)
	tr.reg.SetTracer(oteltrace.New(tp))
	tr.tracer = tp.Tracer("caller")
	return tr
}

// span returns the one ended span named name.
func (tr *traced) span(t *testing.T, name string) sdktrace.ReadOnlySpan {
	t.Helper()
	var found []sdktrace.ReadOnlySpan
	for _, s := range tr.recorder.Ended() {
		if s.Name() == name {
			found = append(found, s)
		}
	}
	require.Len(t, found, 1, "spans named %s", name)
	return found[0]
}

// waitForSpans waits until n spans have ended, and returns them.
func (tr *traced) waitForSpans(t *testing.T, n int) []sdktrace.ReadOnlySpan {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ended := tr.recorder.Ended()
		if len(ended) >= n {
			return ended
		}
		require.False(t, time.Now().After(deadline), "%d spans ended, not %d", len(ended), n)
		runtime.Gosched()
	}
}

func attrs(s sdktrace.ReadOnlySpan) map[attribute.Key]attribute.Value {
	out := map[attribute.Key]attribute.Value{}
	for _, kv := range s.Attributes() {
		out[kv.Key] = kv.Value
	}
	return out
}

// An execution's span is the child of its caller's span and the parent
// of the spans its run makes, timed on the registry's clock.
func TestAnExecutionIsASpanBetweenItsCallerAndItsDownstream(t *testing.T) {
	tr := newTraced(t)
	getUser := command.New("GetUser", func(ctx context.Context, id int) (string, error) {
		_, db := tr.tracer.Start(ctx, "SELECT users")
		db.End()
		tr.clock.Advance(30 * time.Millisecond)
		return "ann", nil
	}, command.WithRegistry(tr.reg), command.WithConfig(command.Config{Group: "Users", Isolation: command.SemaphoreIsolation}))

	ctx, request := tr.tracer.Start(context.Background(), "GET /profile")
	v, err := getUser.Execute(ctx, 7)
	request.End()
	require.NoError(t, err)
	assert.Equal(t, "ann", v)

	exec, db := tr.span(t, "GetUser"), tr.span(t, "SELECT users")
	assert.Equal(t, request.SpanContext().SpanID(), exec.Parent().SpanID(), "the caller's span is its parent")
	assert.Equal(t, exec.SpanContext().SpanID(), db.Parent().SpanID(), "it is the parent of run's spans")
	assert.Equal(t, trace.SpanKindInternal, exec.SpanKind())
	assert.Equal(t, oteltrace.ScopeName, exec.InstrumentationScope().Name)
	assert.True(t, t0.Equal(exec.StartTime()))
	assert.True(t, t0.Add(30*time.Millisecond).Equal(exec.EndTime()), "on the registry's clock")
	assert.Equal(t, map[attribute.Key]attribute.Value{
		"rxhystrix.command.name":     attribute.StringValue("GetUser"),
		"rxhystrix.command.group":    attribute.StringValue("Users"),
		"rxhystrix.execution.events": attribute.StringSliceValue([]string{"SUCCESS"}),
		"rxhystrix.execution.ran":    attribute.BoolValue(true),
	}, attrs(exec))
	assert.Equal(t, codes.Unset, exec.Status().Code)
}

// What the caller got decides the status: a fallback's value is not an
// error; no value is, described by the failure.
func TestTheStatusIsWhatTheCallerGot(t *testing.T) {
	errDown := errors.New("downstream down")
	for _, tc := range []struct {
		name     string
		cfg      command.Config
		fallback bool
		events   []string
		status   codes.Code
		desc     string
		ran      bool
	}{
		{"failure, fallback", command.Config{}, true, []string{"FAILURE", "FALLBACK_SUCCESS"}, codes.Unset, "", true},
		{"failure", command.Config{}, false, []string{"FAILURE", "FALLBACK_MISSING"}, codes.Error, "FAILURE", true},
		{"short circuit", command.Config{Breaker: breaker.Config{ForceOpen: true}}, false, []string{"SHORT_CIRCUITED", "FALLBACK_MISSING"}, codes.Error, "SHORT_CIRCUITED", false},
		{"rate limited", command.Config{RateLimit: command.RateLimitConfig{Enabled: true, Rate: 1, Burst: 1}}, false, []string{"FALLBACK_MISSING", "RATE_LIMITED"}, codes.Error, "RATE_LIMITED", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTraced(t)
			tc.cfg.Isolation = command.PoolIsolation
			c := command.New("Lookup", func(ctx context.Context, id int) (string, error) { return "", errDown },
				command.WithRegistry(tr.reg), command.WithConfig(tc.cfg))
			if tc.fallback {
				c = c.WithFallback(func(context.Context, int, error) (string, error) { return "cached", nil })
			}
			if tc.cfg.RateLimit.Enabled {
				_, _ = c.Execute(context.Background(), 1) // takes the bucket's one token; the clock stands still
				tr.recorder.Reset()
			}
			_, _ = c.Execute(context.Background(), 1)
			s := tr.span(t, "Lookup")
			a := attrs(s)
			assert.Equal(t, tc.events, a["rxhystrix.execution.events"].AsStringSlice())
			assert.Equal(t, tc.ran, a["rxhystrix.execution.ran"].AsBool())
			assert.Equal(t, tc.status, s.Status().Code)
			assert.Equal(t, tc.desc, s.Status().Description)
			if tc.ran {
				assert.Equal(t, "Lookup", a["rxhystrix.pool.name"].AsString(), "the pool it ran in")
			}
		})
	}
}

// A caller that leaves is not the command's failure.
func TestACancelledExecutionIsNotAnError(t *testing.T) {
	tr := newTraced(t)
	started := make(chan struct{})
	c := command.New("Slow", func(ctx context.Context, id int) (string, error) {
		close(started)
		<-ctx.Done()
		return "", ctx.Err()
	}, command.WithRegistry(tr.reg), command.WithConfig(command.Config{Isolation: command.SemaphoreIsolation, Timeout: -1}))
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	_, err := c.Execute(ctx, 1)
	require.ErrorIs(t, err, context.Canceled)
	s := tr.span(t, "Slow")
	assert.Equal(t, []string{"CANCELLED"}, attrs(s)["rxhystrix.execution.events"].AsStringSlice())
	assert.Equal(t, codes.Unset, s.Status().Code)
}

// A response from the request cache is a span of its own under its
// caller's: it did not run, and its status is what the served execution
// gave the caller.
func TestACacheHitIsASpanOfWhatItServed(t *testing.T) {
	tr := newTraced(t)
	errDown := errors.New("downstream down")
	for _, tc := range []struct {
		key    string
		err    error
		events []string
		status codes.Code
	}{
		{"Found", nil, []string{"SUCCESS", "RESPONSE_FROM_CACHE"}, codes.Unset},
		{"Failed", errDown, []string{"FAILURE", "FALLBACK_MISSING", "RESPONSE_FROM_CACHE"}, codes.Error},
	} {
		c := command.New(tc.key, func(ctx context.Context, id int) (string, error) { return "ann", tc.err },
			command.WithRegistry(tr.reg), command.WithConfig(command.Config{Isolation: command.SemaphoreIsolation})).
			WithCacheKey(func(id int) string { return "user-1" })
		ctx, caller := tr.tracer.Start(command.WithRequestContext(context.Background()), "request")
		_, _ = c.Execute(ctx, 1)
		tr.recorder.Reset()
		tr.clock.Advance(time.Second)
		_, err := c.Execute(ctx, 1)
		assert.ErrorIs(t, err, tc.err)
		caller.End()

		s := tr.span(t, tc.key)
		assert.Equal(t, caller.SpanContext().SpanID(), s.Parent().SpanID(), "the child of its caller's span")
		a := attrs(s)
		assert.Equal(t, tc.events, a["rxhystrix.execution.events"].AsStringSlice())
		assert.False(t, a["rxhystrix.execution.ran"].AsBool())
		assert.Equal(t, tc.status, s.Status().Code)
		assert.Equal(t, tr.clock.Now(), s.StartTime().UTC())
	}
}

// A caller's request of a collapser is a span under the caller's; the
// batch is a span linked to the span of each request it carries; what
// the batch function executes is its child, not linked again.
func TestABatchIsLinkedToItsRequests(t *testing.T) {
	tr := newTraced(t)
	nested := command.New("Audit", func(ctx context.Context, n int) (int, error) { return n, nil },
		command.WithRegistry(tr.reg), command.WithConfig(command.Config{Isolation: command.SemaphoreIsolation}))
	c := command.NewCollapser("GetUser", func(ctx context.Context, ids []int) ([]string, error) {
		_, err := nested.Execute(ctx, len(ids))
		return make([]string, len(ids)), err
	}, command.WithRegistry(tr.reg))
	ctx := command.WithRequestContext(context.Background())
	ann, annSpan := tr.tracer.Start(ctx, "ann")
	bob, bobSpan := tr.tracer.Start(ctx, "bob")
	fAnn, fBob := c.Queue(ann, 1), c.Queue(bob, 2)
	tr.clock.Advance(command.DefaultCollapserDelay)
	for _, f := range []*observable.Future[string]{fAnn, fBob} {
		_, err := f.Get(ctx)
		require.NoError(t, err)
	}
	annSpan.End()
	bobSpan.End()

	batch := tr.span(t, "GetUserBatch")
	assert.False(t, batch.Parent().IsValid(), "no caller is the batch's parent")
	assert.Equal(t, "GetUser", attrs(batch)["rxhystrix.collapser.name"].AsString())
	links := map[trace.SpanID]int64{}
	for _, l := range batch.Links() {
		require.Len(t, l.Attributes, 1)
		assert.Equal(t, oteltrace.BatchArgKey, l.Attributes[0].Key)
		links[l.SpanContext.SpanID()] = l.Attributes[0].Value.AsInt64()
	}
	requests := map[trace.SpanID]int64{}
	for _, s := range tr.recorder.Ended() {
		if s.Name() != "GetUser" {
			continue
		}
		a := attrs(s)
		assert.Equal(t, "GetUser", a["rxhystrix.collapser.name"].AsString())
		assert.Equal(t, []string{"SUCCESS", "COLLAPSED"}, a[oteltrace.EventsKey].AsStringSlice())
		assert.Equal(t, codes.Unset, s.Status().Code)
		assert.Equal(t, t0, s.StartTime())
		assert.Equal(t, t0.Add(command.DefaultCollapserDelay), s.EndTime(), "until the caller got its result")
		switch s.Parent().SpanID() {
		case annSpan.SpanContext().SpanID():
			requests[s.SpanContext().SpanID()] = 0
		case bobSpan.SpanContext().SpanID():
			requests[s.SpanContext().SpanID()] = 1
		default:
			t.Errorf("a request's span is not its caller's child: %v", s.Parent())
		}
	}
	assert.Len(t, requests, 2)
	assert.Equal(t, requests, links, "the batch links to each request's span, with its argument")

	audit := tr.span(t, "Audit")
	assert.Equal(t, batch.SpanContext().SpanID(), audit.Parent().SpanID())
	assert.Empty(t, audit.Links())
	assert.NotContains(t, attrs(audit), attribute.Key("rxhystrix.collapser.name"))
}

// A request whose batch failed is an error, one whose caller left is
// not.
func TestACollapsedRequestsStatusIsWhatItsCallerGot(t *testing.T) {
	tr := newTraced(t)
	c := command.NewCollapser("GetUser", func(ctx context.Context, ids []int) ([]string, error) {
		return nil, errors.New("users down")
	}, command.WithRegistry(tr.reg))
	ctx := command.WithRequestContext(context.Background())
	left, leave := context.WithCancel(ctx)
	failed, gone := c.Queue(ctx, 1), c.Queue(left, 2)
	leave()
	_, err := gone.Get(ctx)
	require.ErrorIs(t, err, context.Canceled)
	tr.waitForSpans(t, 1) // the request that left ends its span on a goroutine of its own
	tr.clock.Advance(command.DefaultCollapserDelay)
	_, err = failed.Get(ctx)
	require.Error(t, err)

	statuses := map[string]codes.Code{}
	for _, s := range tr.waitForSpans(t, 3) {
		if s.Name() == "GetUser" {
			statuses[strings.Join(attrs(s)[oteltrace.EventsKey].AsStringSlice(), " ")] = s.Status().Code
		}
	}
	assert.Equal(t, map[string]codes.Code{"FAILURE COLLAPSED": codes.Error, "CANCELLED COLLAPSED": codes.Unset}, statuses)
}

// WithKeys leaves the executions of other keys untraced: what their run
// traces is the caller's span's child.
func TestWithKeysLeavesOtherKeysUntraced(t *testing.T) {
	tr := newTraced(t)
	tr.reg.SetTracer(oteltrace.New(tr.provider, oteltrace.WithKeys(func(key string) bool { return key != "Health" })))
	run := func(ctx context.Context, id int) (string, error) {
		_, db := tr.tracer.Start(ctx, "db")
		db.End()
		return "ok", nil
	}
	cfg := command.WithConfig(command.Config{Isolation: command.SemaphoreIsolation})
	health := command.New("Health", run, command.WithRegistry(tr.reg), cfg)
	getUser := command.New("GetUser", run, command.WithRegistry(tr.reg), cfg)
	ctx, caller := tr.tracer.Start(context.Background(), "request")
	_, err := health.Execute(ctx, 1)
	require.NoError(t, err)
	require.Equal(t, caller.SpanContext().SpanID(), tr.span(t, "db").Parent().SpanID(), "the untraced key's downstream is the caller's child")
	tr.recorder.Reset()
	_, err = getUser.Execute(ctx, 1)
	require.NoError(t, err)
	caller.End()
	assert.Equal(t, tr.span(t, "GetUser").SpanContext().SpanID(), tr.span(t, "db").Parent().SpanID())
	for _, s := range tr.recorder.Ended() {
		assert.NotEqual(t, "Health", s.Name())
	}

	assert.PanicsWithValue(t, "oteltrace: WithKeys with nil function", func() { oteltrace.WithKeys(nil) })
	assert.PanicsWithValue(t, "oteltrace: New: option 0 is nil", func() { oteltrace.New(tr.provider, nil) })
}

// An execution that injected faults failed says so on its span, with an
// event at the time each fault began; one without faults has none of it.
func TestASpanSaysWhichFaultsWereInjected(t *testing.T) {
	tr := newTraced(t)
	getUser := command.New("GetUser", func(ctx context.Context, id int) (string, error) {
		return "Ada", nil
	}, command.WithRegistry(tr.reg), command.WithConfig(command.Config{
		Isolation: command.SemaphoreIsolation,
		Timeout:   -1,
		Faults:    command.FaultConfig{Enabled: true, DelayPercentage: 100, Delay: 2 * time.Second, ErrorPercentage: 100},
	}))
	done := make(chan error)
	go func() {
		_, err := getUser.Execute(context.Background(), 1)
		done <- err
	}()
	delays := func() int64 {
		st, _ := tr.reg.Metrics().Command("GetUser", metricsstream.Config{}).Status()
		return st.Faults.Delays
	}
	for deadline := time.Now().Add(10 * time.Second); delays() == 0; runtime.Gosched() {
		require.False(t, time.Now().After(deadline), "the delay did not begin")
	}
	tr.clock.Advance(2 * time.Second)
	require.ErrorIs(t, <-done, command.ErrInjectedFault)

	span := tr.span(t, "GetUser")
	a := attrs(span)
	assert.Equal(t, 2.0, a[oteltrace.FaultDelayKey].AsFloat64())
	assert.Equal(t, "command: injected fault", a[oteltrace.FaultErrorKey].AsString())
	assert.Equal(t, codes.Error, span.Status().Code)
	require.Len(t, span.Events(), 2)
	delay, failure := span.Events()[0], span.Events()[1]
	assert.Equal(t, oteltrace.FaultEvent, delay.Name)
	assert.Equal(t, t0, delay.Time.UTC())
	assert.Contains(t, delay.Attributes, oteltrace.FaultKey.String("delay"))
	assert.Contains(t, delay.Attributes, oteltrace.FaultDelayKey.Float64(2))
	assert.Equal(t, oteltrace.FaultEvent, failure.Name)
	assert.Equal(t, t0.Add(2*time.Second), failure.Time.UTC())
	assert.Contains(t, failure.Attributes, oteltrace.FaultKey.String("error"))

	tr.recorder.Reset()
	plain := command.New("Plain", func(ctx context.Context, id int) (string, error) {
		return "Ada", nil
	}, command.WithRegistry(tr.reg), command.WithConfig(command.Config{Isolation: command.SemaphoreIsolation}))
	_, err := plain.Execute(context.Background(), 1)
	require.NoError(t, err)
	span = tr.span(t, "Plain")
	assert.NotContains(t, attrs(span), oteltrace.FaultDelayKey)
	assert.NotContains(t, attrs(span), oteltrace.FaultErrorKey)
	assert.Empty(t, span.Events())
}

func TestNewPanicsWithoutAProvider(t *testing.T) {
	assert.PanicsWithValue(t, "oteltrace: New with nil TracerProvider", func() { oteltrace.New(nil) })
}

// Under pool isolation an execution's span names its pool whether or not
// the command's code ran there: a short circuit or a rate limit of a
// pool-isolated command names the pool, beside rxhystrix.execution.ran
// false, so that the spans of one pool's executions can be read together.
func TestAnExecutionThatDidNotRunNamesItsPool(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  command.Config
	}{
		{"short circuit", command.Config{Breaker: breaker.Config{ForceOpen: true}}},
		{"rate limited", command.Config{RateLimit: command.RateLimitConfig{Enabled: true, Rate: 1, Burst: 1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTraced(t)
			tc.cfg.Isolation = command.PoolIsolation
			tc.cfg.Pool = "Users"
			c := command.New("Lookup", func(ctx context.Context, id int) (string, error) { return "ann", nil },
				command.WithRegistry(tr.reg), command.WithConfig(tc.cfg)).
				WithFallback(func(context.Context, int, error) (string, error) { return "cached", nil })
			if tc.cfg.RateLimit.Enabled {
				_, _ = c.Execute(context.Background(), 1) // takes the bucket's one token; the clock stands still
				tr.recorder.Reset()
			}
			v, err := c.Execute(context.Background(), 1)
			require.NoError(t, err)
			require.Equal(t, "cached", v)
			a := attrs(tr.span(t, "Lookup"))
			assert.False(t, a[oteltrace.RanKey].AsBool())
			assert.Equal(t, "Users", a[attribute.Key("rxhystrix.pool.name")].AsString())
		})
	}
}
