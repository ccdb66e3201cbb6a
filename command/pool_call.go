package command

import (
	"context"
	"runtime"
	"sync/atomic"
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
	state atomic.Int32
	done  chan struct{} // buffered 1; signalled when run returned in time

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
	call.ctx, call.in, call.out, call.err = nil, zeroIn, zeroOut, nil
	call.concurrency.Store(0)
	call.cmd.calls.Put(call)
}

// runTask runs on a pool worker.
func (call *poolCall[In, Out]) runTask(p *pool) {
	if !call.state.CompareAndSwap(callQueued, callRunning) {
		p.release()
		call.recycle()
		return
	}
	k := call.cmd.k
	call.concurrency.Store(k.metrics.MarkStart())
	if global, local := k.registry.plugins.p.Load(), k.plugins.p.Load(); global != nil || local != nil {
		callHooks(global, local, func(h ExecutionHook) { h.ExecutionStart(k.key) })
	}
	out, err := callRun(call.cmd.run, call.ctx, call.in)
	call.out, call.err = out, err
	p.release()
	if call.state.CompareAndSwap(callRunning, callDone) {
		call.done <- struct{}{}
		return
	}
	call.recycle()
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
func (c *Command[In, Out]) executeInPool(ctx context.Context, e *execution, in In) (Out, error) {
	p := c.poolFor(e, in)
	runCtx, cancel := ctx, context.CancelFunc(nil)
	if e.cfg.Timeout > 0 {
		runCtx, cancel = c.k.registry.clock.WithTimeout(ctx, e.cfg.Timeout)
	}
	call := c.getCall(runCtx, in)
	if !p.submit(call, e.start.UnixNano()) {
		call.recycle()
		if cancel != nil {
			cancel()
		}
		e.poolRejected()
		return c.recover(ctx, e, in, PoolRejectedFailure, ErrPoolRejected)
	}
	var v Out
	var err error
	o := outcomeSuccess
	select {
	case <-call.done:
		v, err = call.out, call.err
		e.executed, e.concurrency = true, call.concurrency.Load()
		o = classifyInTime(ctx, runCtx, err)
		call.recycle()
	case <-runCtx.Done():
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
			v, err = call.out, call.err
			e.executed, e.concurrency = true, call.concurrency.Load()
			o = classifyInTime(ctx, runCtx, err)
			call.recycle()
		}
	}
	if cancel != nil {
		cancel()
	}
	return c.conclude(ctx, e, in, o, v, err)
}

// poolFor returns the pool of this call.
func (c *Command[In, Out]) poolFor(e *execution, in In) *pool {
	if c.poolKey != nil {
		name := c.poolKey(in)
		e.pool = name
		return c.k.registry.pool(name, true)
	}
	return c.k.registry.pool(e.pool, false)
}
