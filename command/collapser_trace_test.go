package command

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/observable"
)

// collapsedRecorder is a recordingTracer that traces collapsed requests
// too, as traces whose key is "request of " and the collapser's.
type collapsedRecorder struct{ *recordingTracer }

func (r collapsedRecorder) BeginCollapsed(ctx context.Context, collapser string, start time.Time) ExecutionTrace {
	return r.Begin(ctx, "request of "+collapser, start)
}

// traceOf returns the trace that ctx carries, the one a recording
// tracer's trace put in it.
func traceOf(ctx context.Context) *recordedTrace {
	tr, _ := ctx.Value(tracedKey{}).(*recordedTrace)
	return tr
}

// Each caller's request of a collapser is traced, whatever way it asks,
// from when it asks to when it gets its result: begun under its
// caller's context, which is the context the batch holds for it, and
// ended before the caller gets its value.
func TestCollapsedRequestsAreTraced(t *testing.T) {
	r, mc := newManualRegistry(t)
	rec := collapsedRecorder{newRecordingTracer()}
	r.SetTracer(rec)
	var batch *Batch
	c := NewCollapser("GetUser", func(ctx context.Context, ids []int) ([]string, error) {
		batch, _ = BatchOf(ctx)
		return (&batches{}).getUsers(ctx, ids)
	}, WithRegistry(r))
	request := WithRequestContext(context.Background())
	caller := func(name string) context.Context { return context.WithValue(request, parentKey{}, name) }
	start := mc.Now()
	futures := []*observable.Future[string]{
		c.Queue(caller("queue"), 1),
		c.ToObservable(caller("toObservable"), 2).ToFuture(context.Background()),
		c.Observe(caller("observe"), 3).ToFuture(context.Background()),
	}
	executed := make(chan string)
	go func() {
		v, err := c.Execute(caller("execute"), 4)
		assert.NoError(t, err)
		executed <- v
	}()
	b := c.batcherOf(requestContextOf(request))
	waitFor(t, "the four requests in the batch", func() bool {
		b.mu.Lock()
		defer b.mu.Unlock()
		return b.pending != nil && len(b.pending.requests) == 4
	})
	mc.Advance(DefaultCollapserDelay)
	for i, f := range futures {
		assert.Equal(t, "user"+itoa(i+1), get(t, f))
	}
	assert.Equal(t, "user4", <-executed)

	requests := map[string]*recordedTrace{}
	rec.mu.Lock()
	for _, tr := range rec.traces {
		if strings.HasPrefix(tr.key, "request of ") {
			requests[tr.parent.(string)] = tr
		}
	}
	rec.mu.Unlock()
	require.Len(t, requests, 4)
	require.NotNil(t, batch)
	require.Len(t, batch.Callers, 4)
	for _, bc := range batch.Callers {
		req := traceOf(bc.Context)
		require.NotNil(t, req, "the batch holds the request's trace")
		assert.Same(t, requests[bc.Context.Value(parentKey{}).(string)], req)
	}
	for name, req := range requests {
		assert.Equal(t, "request of GetUser", req.key, name)
		assert.Equal(t, start, req.start, name)
		require.NotNil(t, req.end, "%s: ended", name)
		assert.Equal(t, 1, req.ends, name)
		assert.Equal(t, "GetUser", req.end.CommandKey, name)
		assert.Equal(t, DefaultCollapserDelay, req.end.TotalLatency, name)
		assert.Equal(t, "[SUCCESS, COLLAPSED]", req.end.Events.String(), name)
	}
}

// A request whose caller left is CANCELLED; one that got the batch's
// error is a FAILURE; one the request cache served says so.
func TestCollapsedRequestTracesSayWhatTheCallerGot(t *testing.T) {
	r, mc := newManualRegistry(t)
	rec := collapsedRecorder{newRecordingTracer()}
	r.SetTracer(rec)
	failing := errors.New("users down")
	c := NewCollapser("GetUser", func(ctx context.Context, ids []int) ([]string, error) {
		if ids[0] == 0 {
			return nil, failing
		}
		return (&batches{}).getUsers(ctx, ids)
	}, WithRegistry(r)).WithCacheKey(func(id int) string { return itoa(id) })

	left, leave := context.WithCancel(WithRequestContext(context.Background()))
	f := c.Queue(left, 1)
	leave()
	_, err := f.Get(context.Background())
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, "[CANCELLED, COLLAPSED]", nextRequest(t, rec))

	ctx := WithRequestContext(context.Background())
	first, cached := c.Queue(ctx, 2), c.Queue(ctx, 2)
	mc.Advance(DefaultCollapserDelay)
	get(t, first)
	get(t, cached)
	got := []string{nextRequest(t, rec), nextRequest(t, rec)}
	assert.ElementsMatch(t, []string{"[SUCCESS, COLLAPSED]", "[SUCCESS, RESPONSE_FROM_CACHE, COLLAPSED]"}, got)

	f = c.Queue(WithRequestContext(context.Background()), 0)
	mc.Advance(DefaultCollapserDelay)
	_, err = f.Get(context.Background())
	require.ErrorIs(t, err, failing)
	assert.Equal(t, "[FAILURE, COLLAPSED]", nextRequest(t, rec))
}

// nextRequest returns the events of the next collapsed request's trace
// to end, skipping the traces of batches.
func nextRequest(t *testing.T, rec collapsedRecorder) string {
	t.Helper()
	tr := rec.next(t)
	for !strings.HasPrefix(tr.key, "request of ") {
		tr = rec.next(t)
	}
	return tr.end.Events.String()
}

// panickingCollapsed traces executions, and panics when asked to trace
// a collapsed request.
type panickingCollapsed struct{ *recordingTracer }

func (panickingCollapsed) BeginCollapsed(context.Context, string, time.Time) ExecutionTrace {
	panic("BeginCollapsed")
}

// A tracer that is not a CollapsedTracer traces the batch and no
// request; one whose BeginCollapsed panics leaves the requests untraced,
// and their callers served.
func TestCollapsedRequestsUntraced(t *testing.T) {
	r, mc := newManualRegistry(t)
	c := NewCollapser("GetUser", (&batches{}).getUsers, WithRegistry(r))
	plain, panicking := newRecordingTracer(), newRecordingTracer()
	for _, tc := range []struct {
		tracer Tracer
		rec    *recordingTracer
	}{{plain, plain}, {panickingCollapsed{panicking}, panicking}} {
		r.SetTracer(tc.tracer)
		f := c.Queue(WithRequestContext(context.Background()), 1)
		mc.Advance(DefaultCollapserDelay)
		assert.Equal(t, "user1", get(t, f))
		assert.Equal(t, "GetUserBatch", tc.rec.next(t).key)
		tc.rec.mu.Lock()
		assert.Len(t, tc.rec.traces, 1, "the batch alone")
		tc.rec.mu.Unlock()
	}
}
