package command

import "context"

// runHandedOver is runHere for a caller that only waits for the result
// (join): run, under the execution permit admit took, is handed to a
// goroutine of its own, and the caller waits for it as a pool caller
// waits for its worker, so that it has the fallback at the timeout while
// a run that ignores its context still runs, as Queue's and Observe's
// subscribers have. The permit goes back with the execution's Completion,
// as a subscription's does at the timeout.
//
// The caller concludes the execution on its own goroutine, and the run's
// goroutine only runs run: where the execution's subscription, on a
// goroutine of its own, concluded it there (its state, the watch of its
// contexts, the stack growth its conclusion needs), a Get with a context
// that cannot end now takes Queue's execution over as under no timeout
// (bench/peers rxhystrix-semaphore-timeout-queue, -observe).
func (c *core[In, Out]) runHandedOver(ctx context.Context, e *execution, in In) (Out, error) {
	e.runStarted()
	runCtx, deadline := runContextFor(ctx, c.k.registry.clock, e.start, e.cfg.Timeout)
	call := c.getCall(runCtx, e.cfg, in)
	// What a pool worker records when it starts run, recorded here:
	// awaitRun gives it back to e, and a caller that leaves waits for it.
	call.started = e.runStart
	call.concurrency.Store(e.concurrency)
	call.state.Store(callRunning)
	call.startOn(nil, e.start)
	return c.awaitRun(ctx, e, in, call, runCtx, deadline, nil)
}
