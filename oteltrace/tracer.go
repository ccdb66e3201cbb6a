package oteltrace

import (
	"context"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/rxhystrix/rxhystrix/command"
	"github.com/rxhystrix/rxhystrix/internal/label"
	"github.com/rxhystrix/rxhystrix/internal/otelattr"
	"github.com/rxhystrix/rxhystrix/metricsstream"
)

// ScopeName is the instrumentation scope of the spans: the name of the
// tracer New asks its provider for.
const ScopeName = "github.com/rxhystrix/rxhystrix/oteltrace"

// The attributes of a span beside the command's, group's, pool's and
// collapser's, and of a batch's link to a caller.
const (
	EventsKey = attribute.Key("rxhystrix.execution.events")
	RanKey    = attribute.Key("rxhystrix.execution.ran")
	// BatchArgKey is the index, in a collapser's batch, of the argument
	// a linked caller asked for.
	BatchArgKey = attribute.Key("rxhystrix.collapser.batch.arg")
	// FaultDelayKey is the delay, in seconds, injected into an execution
	// (command.Config.Faults), and FaultErrorKey the text of the error
	// injected in place of its code's result.
	FaultDelayKey = attribute.Key("rxhystrix.fault.delay")
	FaultErrorKey = attribute.Key("rxhystrix.fault.error")
	// FaultKey is the kind of an injected fault, "delay" or "error", on
	// the span event FaultEvent; the name is that of the attribute of the
	// metrics that count them (package otelmetrics).
	FaultKey = otelattr.FaultKey
)

// FaultEvent is the name of a span's event for each fault injected into
// its execution, at the time the fault begins.
const FaultEvent = "rxhystrix.fault.injected"

// New returns a command.Tracer that makes a span of each execution with
// the tracer of tp named [ScopeName], for command.Registry.SetTracer. It
// panics if tp or an option is nil.
func New(tp trace.TracerProvider, opts ...Option) command.Tracer {
	if tp == nil {
		panic("oteltrace: New with nil TracerProvider")
	}
	t := tracer{t: tp.Tracer(ScopeName)}
	for i, o := range opts {
		if o == nil {
			panic(fmt.Sprintf("oteltrace: New: option %d is nil", i))
		}
		o(&t)
	}
	return t
}

// An Option changes what [New] makes.
type Option func(*tracer)

// WithKeys makes the tracer trace only the executions of the command keys
// that traced reports true for, so that a key called all the time (a
// health check, a cache) makes no spans: what the execution's run and
// fallback trace is then the caller's span's child. It is asked at each
// execution, and must be safe for concurrent use. It panics if traced is
// nil.
func WithKeys(traced func(key string) bool) Option {
	if traced == nil {
		panic("oteltrace: WithKeys with nil function")
	}
	return func(t *tracer) { t.traced = traced }
}

var _ command.CollapsedTracer = tracer{}

type tracer struct {
	t      trace.Tracer
	traced func(key string) bool // nil: every key
}

// Begin starts the execution's span under ctx's; an execution of a
// collapser's batch command, linked to its callers' spans.
func (t tracer) Begin(ctx context.Context, key string, start time.Time) command.ExecutionTrace {
	if t.traced != nil && !t.traced(key) {
		return nil
	}
	opts := []trace.SpanStartOption{
		trace.WithTimestamp(start),
		trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(otelattr.CommandKey.String(label.Value(key))),
	}
	if b, ok := command.BatchOf(ctx); ok && b.Command == key {
		opts = append(opts, trace.WithAttributes(otelattr.CollapserKey.String(label.Value(b.Collapser))), trace.WithLinks(callerLinks(b)...))
	}
	_, span := t.t.Start(ctx, key, opts...)
	return execution{span}
}

// BeginCollapsed starts the span of a request of a collapser under
// ctx's, named after the collapser, with its name; the span of the batch
// that serves it links to it (command.CollapsedTracer).
func (t tracer) BeginCollapsed(ctx context.Context, collapser string, start time.Time) command.ExecutionTrace {
	if t.traced != nil && !t.traced(collapser) {
		return nil
	}
	_, span := t.t.Start(ctx, collapser,
		trace.WithTimestamp(start),
		trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(otelattr.CollapserKey.String(label.Value(collapser))))
	return collapsedRequest{span}
}

// collapsedRequest is the span of one request of a collapser.
type collapsedRequest struct{ span trace.Span }

// Context puts the span in ctx.
func (r collapsedRequest) Context(ctx context.Context) context.Context {
	return trace.ContextWithSpan(ctx, r.span)
}

// End ends the span with what the request's caller got.
func (r collapsedRequest) End(c *metricsstream.Completion) {
	r.span.SetAttributes(EventsKey.StringSlice(c.Events.Names()))
	if failure, failed := failureOf(&c.Events); failed {
		r.span.SetStatus(codes.Error, failure)
	}
	r.span.End(trace.WithTimestamp(c.End))
}

// callerLinks are the links of a batch's span to its callers' spans: one
// per caller that has a span, with the index of its argument.
func callerLinks(b *command.Batch) []trace.Link {
	links := make([]trace.Link, 0, len(b.Callers))
	for _, c := range b.Callers {
		if sc := trace.SpanContextFromContext(c.Context); sc.IsValid() {
			links = append(links, trace.Link{SpanContext: sc, Attributes: []attribute.KeyValue{BatchArgKey.Int(c.Arg)}})
		}
	}
	return links
}

// execution is the span of one execution.
type execution struct{ span trace.Span }

var _ command.FaultTrace = execution{}

// Context puts the span in ctx.
func (e execution) Context(ctx context.Context) context.Context {
	return trace.ContextWithSpan(ctx, e.span)
}

// End ends the span with what c says of the execution.
func (e execution) End(c *metricsstream.Completion) {
	attrs := []attribute.KeyValue{
		otelattr.GroupKey.String(label.Value(c.GroupKey)),
		EventsKey.StringSlice(c.Events.Names()),
		RanKey.Bool(c.Executed),
	}
	if c.PoolKey != "" {
		attrs = append(attrs, otelattr.PoolKey.String(label.Value(c.PoolKey)))
	}
	e.span.SetAttributes(attrs...)
	if failure, failed := failureOf(&c.Events); failed {
		e.span.SetStatus(codes.Error, failure)
	}
	e.span.End(trace.WithTimestamp(c.End))
}

// InjectedDelay marks the span as delayed by d, from at.
func (e execution) InjectedDelay(at time.Time, d time.Duration) {
	delay := FaultDelayKey.Float64(d.Seconds())
	e.span.SetAttributes(delay)
	e.span.AddEvent(FaultEvent, trace.WithTimestamp(at), trace.WithAttributes(FaultKey.String("delay"), delay))
}

// InjectedError marks the span as failed by err, at at.
func (e execution) InjectedError(at time.Time, err error) {
	text := FaultErrorKey.String(err.Error())
	e.span.SetAttributes(text)
	e.span.AddEvent(FaultEvent, trace.WithTimestamp(at), trace.WithAttributes(FaultKey.String("error"), text))
}

// failures are the events that say why an execution's code did not
// give the value, in Hystrix's order.
var failures = []metricsstream.EventType{
	metricsstream.Failure,
	metricsstream.Timeout,
	metricsstream.BadRequest,
	metricsstream.ShortCircuited,
	metricsstream.PoolRejected,
	metricsstream.SemaphoreRejected,
	metricsstream.RateLimited,
}

// failureOf returns the failure of an execution whose caller got no
// value, and false for one whose caller got a value or left.
func failureOf(ev *metricsstream.EventCounts) (string, bool) {
	if ev.Contains(metricsstream.Success) || ev.Contains(metricsstream.FallbackSuccess) || ev.Contains(metricsstream.Cancelled) {
		return "", false
	}
	for _, f := range failures {
		if ev.Contains(f) {
			return f.String(), true
		}
	}
	return "", true
}
