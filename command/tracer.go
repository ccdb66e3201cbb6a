package command

import (
	"context"
	"time"

	"github.com/rxhystrix/rxhystrix/metricsstream"
)

// Tracer traces the executions of a registry's commands
// ([Registry.SetTracer]): as OpenTelemetry spans, in package oteltrace.
// Each execution is traced on its own, a retry's and a hedge's too, from
// before its breaker is asked to its Completion, so a short circuit, a
// rejection and a fallback are in the trace as much as a run; and what
// run and the fallback trace is the execution's child. A response from
// the request cache is traced once it is served: Begin, with the time
// its caller asked, then End, with the events the request log shows (the
// served execution's and RESPONSE_FROM_CACHE). A collapser's requests
// are traced when the Tracer is a [CollapsedTracer] too. A Tracer must be
// safe for concurrent use; a panic in it is recovered and ignored, as a
// hook's is, and never breaks a command.
//
// Hystrix has no tracer: its hooks (ExecutionHook here) are told of an
// execution's steps without its context, which a span needs, both to find
// its parent and to be the parent of what run does.
type Tracer interface {
	// Begin is told that an execution of the command key begins, at
	// start on the registry's clock, on the goroutine that begins it.
	// ctx is the context of the execution's caller, where its trace's
	// parent is. It must not block. It may return nil: the execution is
	// then not traced, and run and the fallback get ctx as it is.
	Begin(ctx context.Context, key string, start time.Time) ExecutionTrace
}

// ExecutionTrace is the trace of one execution, which a [Tracer] began.
type ExecutionTrace interface {
	// Context returns ctx with the trace in it: the execution's run and
	// fallback get it in place of ctx. It must return a context made
	// from ctx by context.WithValue (or ctx itself), which keeps ctx's
	// deadline and cancellation.
	Context(ctx context.Context) context.Context
	// End is told, once, how the execution ended: its Completion, whose
	// End is set. c is End's only while it runs. It must not block.
	End(c *metricsstream.Completion)
}

// FaultTrace is an [ExecutionTrace] that is told of the faults
// [Config.Faults] injects into its execution, so that a trace tells an
// injected delay or failure from the downstream's. Its methods are called
// on the goroutine that would run the user's code, at the time the fault
// begins on the registry's clock: before the execution ends, unless a
// timeout or the caller ended it first. They must not block.
type FaultTrace interface {
	ExecutionTrace
	// InjectedDelay is told that the user's code starts d late.
	InjectedDelay(at time.Time, d time.Duration)
	// InjectedError is told that err stands in for the user's code's
	// result.
	InjectedError(at time.Time, err error)
}

// SetTracer makes t trace every execution of r's commands that begins
// from now on; nil stops the tracing. An execution keeps the tracer it
// began with. Without a tracer an execution pays one load of a pointer
// for it.
func (r *Registry) SetTracer(t Tracer) {
	if t == nil {
		r.tracer.Store(nil)
		return
	}
	r.tracer.Store(&t)
}

// traced begins the execution's trace with its registry's tracer *t,
// under the caller's context ctx, and returns the context run and the
// fallback get: ctx with the trace in it. The drivers load the tracer
// themselves and call it only when there is one, so that an execution
// without one pays a load and a comparison, not a call.
func (e *execution) traced(t *Tracer, ctx context.Context) context.Context {
	trace := e.beginTrace(t, ctx)
	if trace == nil {
		return ctx
	}
	return e.faultTraced(trace, tracedContext(trace, ctx))
}

// tracedSubscription is traced for a subscription: its trace begins under
// the context run sees, the subscriber's values over the caller's, and
// goes into both the subscriber's context and the caller's, the one a
// context, if they are one.
func (e *execution) tracedSubscription(t *Tracer, subCtx, callerCtx context.Context) (context.Context, context.Context) {
	trace := e.beginTrace(t, valuesOf(subCtx, callerCtx))
	if trace == nil {
		return subCtx, callerCtx
	}
	traced := e.faultTraced(trace, tracedContext(trace, subCtx))
	switch callerCtx {
	case nil:
		return traced, nil
	case subCtx:
		return traced, traced
	}
	return traced, tracedContext(trace, callerCtx)
}

// beginTrace begins the execution's trace with *t under ctx, and keeps its
// End; nil if *t has no trace for it, or panics.
func (e *execution) beginTrace(t *Tracer, ctx context.Context) (trace ExecutionTrace) {
	defer func() {
		if recover() != nil {
			trace = nil
		}
	}()
	trace = (*t).Begin(ctx, e.k.key, time.Unix(0, e.start))
	if trace != nil {
		e.traceEnd = trace.End
	}
	return trace
}

// faultTrace is the FaultTrace of an execution of key, in the context
// its user's code runs under.
type faultTrace struct {
	key   string
	trace FaultTrace
}

type faultTraceKey struct{}

// faultTraced returns ctx, traced by trace, with trace in it for the
// faults injected into the execution, if trace is a FaultTrace and the
// execution's Config injects faults. Others pay nothing.
func (e *execution) faultTraced(trace ExecutionTrace, ctx context.Context) context.Context {
	if !e.cfg.Faults.Enabled {
		return ctx
	}
	ft, ok := trace.(FaultTrace)
	if !ok {
		return ctx
	}
	return context.WithValue(ctx, faultTraceKey{}, &faultTrace{key: e.k.key, trace: ft})
}

// faultTraceOf returns the FaultTrace of the execution of key whose user's
// code would run under ctx, or nil. The key tells it from the trace of an
// execution whose user's code calls this one, and whose faultTrace ctx
// inherits when this one's trace is not a FaultTrace.
func faultTraceOf(ctx context.Context, key string) FaultTrace {
	if t, _ := ctx.Value(faultTraceKey{}).(*faultTrace); t != nil && t.key == key {
		return t.trace
	}
	return nil
}

// traceDelay tells the FaultTrace in ctx, if any, of a delay of d injected
// at at into an execution of key, recovering a panic of the trace's.
func traceDelay(ctx context.Context, key string, at time.Time, d time.Duration) {
	if t := faultTraceOf(ctx, key); t != nil {
		defer func() { _ = recover() }()
		t.InjectedDelay(at, d)
	}
}

// traceError is traceDelay for an injected error.
func traceError(ctx context.Context, key string, at time.Time, err error) {
	if t := faultTraceOf(ctx, key); t != nil {
		defer func() { _ = recover() }()
		t.InjectedError(at, err)
	}
}

// tracedContext returns ctx with trace in it, or ctx itself if the
// trace's Context panics.
func tracedContext(trace ExecutionTrace, ctx context.Context) (traced context.Context) {
	defer func() {
		if recover() != nil {
			traced = ctx
		}
	}()
	return trace.Context(ctx)
}

// traceCacheHit traces an execution that the request cache served, once
// it is over: begun at start under ctx, the context of the caller it was
// served to, and ended at once with c, whose Events are those the request
// log shows (the served execution's and RESPONSE_FROM_CACHE), so that the
// trace says whether the caller got a value. A panic of the tracer's is
// recovered.
func traceCacheHit(t *Tracer, ctx context.Context, c *metricsstream.Completion, start time.Time) {
	defer func() { _ = recover() }()
	if trace := (*t).Begin(ctx, c.CommandKey, start); trace != nil {
		trace.End(c)
	}
}

// endTrace tells an execution's trace, whose End is end, of the
// execution's Completion c (see execution.showCompletion), recovering a
// panic of end's.
func endTrace(end func(*metricsstream.Completion), c *metricsstream.Completion) {
	defer func() { _ = recover() }()
	end(c)
}
