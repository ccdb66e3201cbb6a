// Package oteltrace traces the executions of rxhystrix commands as
// OpenTelemetry spans. Each execution is a span: the child of its
// caller's span, and the parent of the spans its run and its fallback
// make (an HTTP client's, a database driver's), so that a trace shows
// where a call was short-circuited, rejected, rate limited, timed out,
// retried, hedged or answered by its fallback, beside what the downstream
// did. It is a package of its own so that programs that do not use
// OpenTelemetry do not link it.
//
//	command.DefaultRegistry.SetTracer(oteltrace.New(otel.GetTracerProvider()))
//
// Every key is traced, unless [WithKeys] names those that are: a health
// check called every second need not fill the traces.
//
// # The span
//
// A span is named after the command's key, of kind internal, and lasts
// from the execution's start, before its breaker is asked, to its end
// ([metricsstream.Completion]'s End), both read on the registry's clock.
// A retry and a hedge are executions of their own, each a span under the
// caller's. Its attributes:
//
//	rxhystrix.command.name      string    the command key, set when the span starts
//	rxhystrix.command.group     string    its group
//	rxhystrix.pool.name         string    its worker pool, under pool isolation, whether it ran there or not (none for a response from the request cache)
//	rxhystrix.execution.events  string[]  Hystrix's events of the execution, in Hystrix's order ("TIMEOUT", "FALLBACK_SUCCESS")
//	rxhystrix.execution.ran     bool      whether the command's code ran: false for a short circuit or a rejection
//
// An execution that command.Config.Faults delayed or failed says so, so
// that nobody takes the failure for the downstream's:
//
//	rxhystrix.fault.delay       float64   the delay injected, in seconds
//	rxhystrix.fault.error       string    the text of the error injected in place of the code's result
//
// and has an event named rxhystrix.fault.injected for each, at the time
// it began, with the same attribute and rxhystrix.fault, its kind ("delay"
// or "error").
//
// The names of the command, the group, the pool and a fault's kind are
// those of package otelmetrics's attributes, and their values are the
// keys escaped as otelmetrics escapes them (a key that is not valid UTF-8,
// or that holds `\x`), so that a span and the metrics of its command can
// be joined.
//
// Its status is Error when the execution failed and no fallback made up
// for it: it ended with neither SUCCESS nor FALLBACK_SUCCESS, and was not
// CANCELLED (its caller left, which is not the command's failure). A
// stream that failed part way is an error though its caller got the
// values it emitted before. The description is the failure: FAILURE,
// TIMEOUT, BAD_REQUEST, SHORT_CIRCUITED, THREAD_POOL_REJECTED,
// SEMAPHORE_REJECTED or RATE_LIMITED. An execution whose fallback answered
// is not an error, and its events say what the fallback answered for.
//
// A caller's request of a collapser is a span under the caller's, named
// after the collapser, with its name (rxhystrix.collapser.name), from
// when the caller asked to when it got its result or left: its events
// are COLLAPSED with SUCCESS, FAILURE or CANCELLED, and
// RESPONSE_FROM_CACHE when the request cache served it
// (command.CollapsedTracer). The batch is one execution of the batch
// command for many requests, so no request is its parent: its span is a
// root, or the child of the span in the batch's context, with the
// collapser's name and a link to the span of each request it carries,
// marked with the index of the request's argument in the batch
// (rxhystrix.collapser.batch.arg), as OpenTelemetry links a batch to the
// requests it serves (command.BatchOf). WithKeys is asked of the
// collapser's name for its requests, of the batch command's key for its
// batches.
//
// A response from the request cache is a span too, under its caller's,
// from when the caller asked to when it was served: its code did not run
// (ran is false), and its events are those of the execution it was served
// from with RESPONSE_FROM_CACHE, or RESPONSE_FROM_CACHE and CANCELLED when
// the caller left first, as the request log shows them; so its status is
// what the served execution gave the caller.
package oteltrace
