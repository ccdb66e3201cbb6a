package command

import (
	"context"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/rxhystrix/rxhystrix/internal/clock"
)

// The states of a poolCall.
const (
	callQueued    int32 = iota // submitted, not yet picked by a worker
	callRunning                // a worker is running it
	callDone                   // run returned and the caller was told
	callAbandoned              // the caller left (timeout or cancel) first
)

// poolCall is one run handed to a pool worker. Whoever loses the race
// between the worker finishing and the caller leaving recycles it: the
// caller after it read the result, the worker when the caller has gone.
type poolCall[In, Out any] struct {
	cmd   *Command[In, Out]
	ctx   context.Context
	in    In
	out   Out
	err   error
	end   time.Time // when run returned; written before done is signalled
	state atomic.Int32
	done  chan struct{} // buffered 1; signalled when run returned in time
	timer clock.Timer   // the caller's timeout, kept across uses

	concurrency atomic.Int64 // the command's concurrency when run started
}

func (c *Command[In, Out]) getCall(ctx context.Context, in In) *poolCall[In, Out] {
	call, _ := c.calls.Get().(*poolCall[In, Out])
	if call == nil {
		call = &poolCall[In, Out]{cmd: c, done: make(chan struct{}, 1)}
	}
	call.ctx, call.in = ctx, in
	call.state.Store(callQueued)
	return call
}

func (call *poolCall[In, Out]) recycle() {
	var zeroIn In
	var zeroOut Out
	call.ctx, call.in, call.out, call.err, call.end = nil, zeroIn, zeroOut, nil, time.Time{}
	call.concurrency.Store(0)
	call.cmd.calls.Put(call)
}

// runTask runs on a pool worker. It returns when run returned.
func (call *poolCall[In, Out]) runTask(p *pool, start time.Time) time.Time {
	if !call.state.CompareAndSwap(callQueued, callRunning) {
		p.release()
		call.recycle()
		return time.Time{}
	}
	k := call.cmd.k
	c := k.registry.clock
	if start.IsZero() {
		start = c.Now() // it waited in the queue
	}
	call.concurrency.Store(k.metrics.MarkStartAt(start))
	if global, local := k.registry.plugins.p.Load(), k.plugins.p.Load(); global != nil || local != nil {
		callHooks(global, local, func(h ExecutionHook) { h.ExecutionStart(k.key) })
	}
	out, err := callRun(call.cmd.run, call.ctx, call.in)
	end := c.Now()
	call.out, call.err, call.end = out, err, end
	p.release()
	if call.state.CompareAndSwap(callRunning, callDone) {
		call.done <- struct{}{}
		return end
	}
	call.recycle()
	return end
}

// awaitUntil waits for the run to be done or for the clock to reach
// deadline, and reports whether the run was done first.
func (call *poolCall[In, Out]) awaitUntil(c clock.Clock, deadline time.Time) bool {
	if call.timer == nil {
		call.timer = c.NewTimer(time.Hour)
	}
	if clock.ResetAt(c, call.timer, deadline) {
		call.disarmTimer()
		select {
		case <-call.done:
			return true
		default:
			return false
		}
	}
	select {
	case <-call.done:
		call.disarmTimer()
		return true
	case <-call.timer.C():
		return false
	}
}

// disarmTimer stops the caller's timeout timer, leaving its channel empty
// for the next use.
func (call *poolCall[In, Out]) disarmTimer() {
	if !call.timer.Stop() {
		select {
		case <-call.timer.C():
		default:
		}
	}
}

// startedConcurrency waits for a running call's worker to have recorded
// its start (it does so right after taking the call), so that the
// caller's Completion gives back the concurrency the worker took.
func (call *poolCall[In, Out]) startedConcurrency() int64 {
	for {
		if n := call.concurrency.Load(); n > 0 {
			return n
		}
		runtime.Gosched()
	}
}

// abandon is the caller leaving; it returns the state it left in, or
// callDone if run had already returned, and for a running call the
// concurrency its worker recorded. That is read before the call is
// abandoned: once it is, the worker recycles the call as soon as run
// returns, and a later read could wait for ever on a recycled call.
func (call *poolCall[In, Out]) abandon() (int32, int64) {
	for {
		s := call.state.Load()
		var n int64
		switch s {
		case callDone:
			return callDone, 0
		case callRunning:
			n = call.startedConcurrency() // the worker keeps the call while it runs
		}
		if call.state.CompareAndSwap(s, callAbandoned) {
			return s, n
		}
	}
}

// executeInPool runs run on a worker of the command's pool. The caller
// returns at the timeout or when ctx ends, even if run ignores its
// context; run's context is cancelled then, and its worker stays taken
// until run returns.
//
// A run that nothing can end early (no timeout, and a caller's context
// that is never done) runs on the caller's goroutine when a slot is free:
// its caller waits for it to return in any case, so handing it to
// another goroutine would change nothing but the cost. It holds its slot
// and is counted by the pool as any other.
func (c *Command[In, Out]) executeInPool(ctx context.Context, e *execution, in In) (Out, error) {
	p := c.poolFor(e, in)
	clk := c.k.registry.clock
	runCtx, deadline, end := runContextFor(ctx, clk, e.start, e.cfg.Timeout)
	if deadline == nil && end == nil && ctx.Done() == nil && p.enter(e.start) {
		return c.executeHere(ctx, e, in, p)
	}
	call := c.getCall(runCtx, in)
	p, submitted := c.k.registry.submit(p, call, e.start)
	if !submitted {
		call.recycle()
		endRunContext(deadline, end)
		e.poolRejected()
		return c.recover(ctx, e, in, PoolRejectedFailure, ErrPoolRejected)
	}
	answered := false
	if deadline != nil {
		// The caller leaves at the timeout, which a deadlineContext tells
		// only when asked, so the caller keeps the time itself. A quick
		// run is done by the time the caller has let its worker run, and
		// needs no timer: one is armed only if the caller must block.
		runtime.Gosched()
		select {
		case <-call.done:
			answered = true
		default:
			answered = call.awaitUntil(clk, deadline.deadline)
			if !answered {
				deadline.timeOut()
			}
		}
	} else {
		// The caller leaves when runCtx ends.
		select {
		case <-call.done:
			answered = true
		case <-runCtx.Done():
		}
	}
	var v Out
	var err error
	var now time.Time
	o := outcomeSuccess
	if answered {
		v, err, now = call.out, call.err, call.end
		e.executed, e.concurrency = true, call.concurrency.Load()
		o = classifyInTime(ctx, runCtx, err)
		call.recycle()
	} else {
		switch state, concurrency := call.abandon(); state {
		case callQueued:
			if p.remove(call) {
				call.recycle()
			}
			o = classify(ctx, runCtx, err)
		case callRunning:
			e.executed, e.concurrency = true, concurrency
			o = classify(ctx, runCtx, err)
		case callDone:
			<-call.done
			v, err, now = call.out, call.err, call.end
			e.executed, e.concurrency = true, call.concurrency.Load()
			o = classifyInTime(ctx, runCtx, err)
			call.recycle()
		}
		if now.IsZero() {
			now = clk.Now()
		}
	}
	endRunContext(deadline, end)
	return c.conclude(ctx, e, in, o, v, err, now)
}

// executeHere runs run on the caller's goroutine in a slot of p that it
// has entered.
func (c *Command[In, Out]) executeHere(ctx context.Context, e *execution, in In, p *pool) (Out, error) {
	p.recorder.MarkStartAt(e.start)
	e.runStarted()
	v, err := callRun(c.run, ctx, in)
	now := c.k.registry.clock.Now()
	p.exit()
	p.recorder.MarkDoneAt(now)
	return c.conclude(ctx, e, in, classifyTimed(ctx, false, err), v, err, now)
}

// poolFor returns the pool of this call.
func (c *Command[In, Out]) poolFor(e *execution, in In) *pool {
	if c.poolKey != nil {
		name := c.poolKey(in)
		e.pool = name
		return c.k.registry.pool(name, true)
	}
	return c.k.namedPool(e.pool)
}
