package command

import (
	"context"
	"time"

	"github.com/rxhystrix/rxhystrix/clock"
	"github.com/rxhystrix/rxhystrix/metricsstream"
)

// CollapsedTracer is a [Tracer] that traces a collapser's requests too,
// as package oteltrace's does: each from when its caller asks for a
// result to when it gets one or leaves, so that the caller's trace shows
// its wait for the batch, and the trace of the batch command's execution
// that serves it (whose context carries the batch, [BatchOf]) links to
// the request's rather than to the caller's. A registry's tracer that is
// not a CollapsedTracer traces the batches only.
type CollapsedTracer interface {
	Tracer
	// BeginCollapsed is told that a caller asks the collapser key for a
	// result, at start on the registry's clock, under ctx, its context.
	// It must not block, and may return nil. The trace's End gets a
	// Completion of the collapser's key (CommandKey), whose TotalLatency
	// is the wait, and whose Events are COLLAPSED with SUCCESS when the
	// caller got a value, FAILURE when it got an error (the batch's, or
	// one that kept the request out of any batch), or CANCELLED when it
	// left first; and RESPONSE_FROM_CACHE when the request cache served
	// it the result of a request of the same cache key.
	BeginCollapsed(ctx context.Context, collapser string, start time.Time) ExecutionTrace
}

// collapsedTrace is the trace of one collapsed request. A nil
// *collapsedTrace is no trace: its methods do nothing.
type collapsedTrace struct {
	end       func(*metricsstream.Completion)
	key       string
	clock     clock.Clock
	start     time.Time
	fromCache bool
}

// traceRequest begins the trace of a request of c under ctx, when c's
// registry has a CollapsedTracer, and returns the context the request
// joins its batch with (ctx with the trace in it) and the trace. A panic
// of the tracer's leaves the request untraced.
func (c *Collapser[In, Out]) traceRequest(ctx context.Context) (context.Context, *collapsedTrace) {
	t := c.cmd.k.registry.tracer.Load()
	if t == nil {
		return ctx, nil
	}
	ct, ok := (*t).(CollapsedTracer)
	if !ok {
		return ctx, nil
	}
	start := c.clock.Now()
	trace := beginCollapsed(ct, ctx, c.key, start)
	if trace == nil {
		return ctx, nil
	}
	return tracedContext(trace, ctx), &collapsedTrace{end: trace.End, key: c.key, clock: c.clock, start: start}
}

// beginCollapsed calls t.BeginCollapsed, recovering a panic.
func beginCollapsed(t CollapsedTracer, ctx context.Context, key string, start time.Time) (trace ExecutionTrace) {
	defer func() {
		if recover() != nil {
			trace = nil
		}
	}()
	return t.BeginCollapsed(ctx, key, start)
}

// servedFromCache notes that the request cache served the request.
func (t *collapsedTrace) servedFromCache(fromCache bool) {
	if t != nil {
		t.fromCache = fromCache
	}
}

// finish ends the trace with what the caller got: a value (err nil) or
// err, or nothing when it left first.
func (t *collapsedTrace) finish(err error, left bool) {
	if t == nil {
		return
	}
	end := t.clock.Now()
	c := metricsstream.Completion{CommandKey: t.key, TotalLatency: end.Sub(t.start), End: end}
	c.Events.Add(metricsstream.Collapsed, 1)
	switch {
	case left:
		c.Events.Add(metricsstream.Cancelled, 1)
	case err == nil:
		c.Events.Add(metricsstream.Success, 1)
	default:
		c.Events.Add(metricsstream.Failure, 1)
	}
	if t.fromCache {
		c.Events.Add(metricsstream.ResponseFromCache, 1)
	}
	endTrace(t.end, &c)
}
