package command

import (
	"context"
	"errors"
	"math"
	"runtime"
	"sync/atomic"

	"github.com/rxhystrix/rxhystrix/internal/proc"
)

// The states of a poolCall.
const (
	callQueued    int32 = iota // submitted, not yet picked by a worker
	callRunning                // a worker is running it
	callDone                   // run returned and the caller was told
	callAbandoned              // the caller left (timeout or cancel) first
	callExpired                // a worker took it after its deadline and gave its slot back unrun
)

// yieldEvery is how many runs, on average, a pool caller hands to its
// worker between two yields. A caller that spawns its worker and parks,
// woken by the worker as it exits, forms a chain that the scheduler runs
// on one time slice (each goroutine readied in turn into the processor's
// next slot), and the goroutines preempted meanwhile wait in the shared
// queue, which a processor looks at once in 61 slices when its own queue
// is not empty: with 75 callers on two processors, a run waited for its
// worker to start for up to a second, and timed out. A yield ends the
// chain through the shared queue; after every run it costs more than the
// hand-off (the queue's lock), after one in 16 it kept the longest wait of
// 75 callers at milliseconds (bench/peers BenchmarkTail).
const yieldEvery = 16

// yieldSometimes yields to the scheduler once in yieldEvery calls on
// average: what a caller that handed a run to a new worker does, so that
// the worker gets a processor (see yieldEvery).
func yieldSometimes() { proc.YieldSometimes(yieldEvery) }

// poolCall is one run handed to a pool worker, or, under semaphore
// isolation, to a goroutine of its own (runHandedOver). Whoever loses the
// race between the worker finishing and the caller leaving recycles it:
// the caller after it read the result, the worker when the caller has
// gone.
type poolCall[In, Out any] struct {
	cmd   *core[In, Out]
	ctx   context.Context
	cfg   *Config // of the execution
	in    In
	out   Out
	err   error
	end   int64 // when run returned (see execution.start); written before wakeDone is sent
	state atomic.Int32
	// wait is what the caller waits on; the worker tells it that run
	// returned in time with wakeDone.
	wait *callWait

	concurrency atomic.Int64 // the command's concurrency when run started
	started     int64        // when run started; written before concurrency

	// owner, when not nil, is the subscription the call runs for: the
	// worker tells it, and nobody waits on wait.
	owner *subscription[In, Out]
	// global and local are the plugins of the execution (execution.global
	// and execution.local), whose ExecutionStart the worker tells: the
	// hooks of its Start, not those registered since.
	global, local *plugins

	// work is workOnPool as a function value, made with the call: starting
	// it with go allocates nothing, where go p.work(call, start) allocates
	// the closure that carries the arguments. The pool and start it needs
	// are set by startOn.
	work      func()
	workPool  *pool
	workStart int64
}

func (c *core[In, Out]) getCall(ctx context.Context, cfg *Config, in In) *poolCall[In, Out] {
	call, _ := c.calls.Get().(*poolCall[In, Out])
	if call == nil {
		call = &poolCall[In, Out]{cmd: c, wait: newCallWait(c.k.registry.clock)}
		call.work = call.workOnPool
	}
	call.ctx, call.cfg, call.in = ctx, cfg, in
	call.state.Store(callQueued)
	return call
}

func (call *poolCall[In, Out]) recycle() {
	var zeroIn In
	var zeroOut Out
	call.ctx, call.cfg, call.in, call.out, call.err, call.end, call.started = nil, nil, zeroIn, zeroOut, nil, 0, 0
	call.owner, call.global, call.local = nil, nil, nil
	call.concurrency.Store(0)
	call.cmd.calls.Put(call)
}

// startOn runs p.work(call, start) on a new goroutine.
func (call *poolCall[In, Out]) startOn(p *pool, start int64) {
	call.workPool, call.workStart = p, start
	go call.work()
}

// workOnPool is the worker goroutine that startOn starts. It reads what
// startOn set before the call runs: once it has, the call may be recycled.
// A subscription's worker concludes the execution itself, which outgrows
// a new goroutine's stack: it grows it here, with the fewest frames on it
// (see growStack). With no pool, it runs a semaphore-isolated run handed
// over by runHandedOver.
func (call *poolCall[In, Out]) workOnPool() {
	if call.owner != nil {
		growStack()
	}
	p, start := call.workPool, call.workStart
	if p == nil {
		call.runAlone()
		return
	}
	call.workPool = nil
	p.work(call, start)
}

// runAlone runs a run that runHandedOver handed to this goroutine, whose
// start its caller recorded.
func (call *poolCall[In, Out]) runAlone() {
	out, err := call.cmd.invoke(call.ctx, call.cfg, call.in)
	call.out, call.err, call.end = out, err, call.cmd.k.registry.now()
	call.returned()
}

// returned tells the caller that run returned, unless it has left: then
// run's value is dropped (core.drop) and the call recycled.
func (call *poolCall[In, Out]) returned() {
	if call.state.CompareAndSwap(callRunning, callDone) {
		call.wait.wake <- wakeDone
		return
	}
	call.cmd.drop(call.out, call.err)
	call.recycle()
}

// runTask runs on a pool worker, which has read start if the call waited
// in the queue. It returns when run returned.
func (call *poolCall[In, Out]) runTask(p *pool, start int64) {
	if call.owner != nil {
		call.runFor(call.owner, p, start)
		return
	}
	// A run taken from the queue after its deadline does not start, as a
	// subscription's does not (starting), though its caller, whose timer
	// fired or is about to, may not have taken it out of the queue yet:
	// Hystrix's worker finds the command TIMED_OUT and runs nothing. The
	// slot goes back here; the caller, told by its timer, owns the call
	// again (awaitRun).
	if d, ok := call.ctx.(*deadlineContext); ok && d.expiredAt(start) && call.state.CompareAndSwap(callQueued, callExpired) {
		p.release()
		return
	}
	if !call.state.CompareAndSwap(callQueued, callRunning) {
		// The caller left first and gave the slot back (awaitRun).
		call.recycle()
		return
	}
	k := call.cmd.k
	call.started = start
	n := k.metrics.MarkStartAt(start)
	if call.global != nil || call.local != nil {
		callHooks(call.global, call.local, func(h ExecutionHook) { h.ExecutionStart(k.key) })
	}
	// Published once ExecutionStart is told: a caller that leaves now
	// waits for it (startedConcurrency) before it concludes, so that the
	// hooks hear the run start before they hear how the execution ended.
	call.concurrency.Store(n)
	out, err := call.cmd.invoke(call.ctx, call.cfg, call.in)
	end := k.registry.now()
	call.out, call.err, call.end = out, err, end
	p.ran(end)
	call.returned()
}

// runFor runs the call for its subscription s, which concludes the
// execution on this goroutine once the slot is free again.
//
// A subscriber that leaves before a worker starts the run gives the slot
// back itself (see subscription.dequeue), rather than leave it to a
// worker that may wait for a processor behind the very callers it would
// turn away: the worker then finds the call abandoned and frees nothing.
func (call *poolCall[In, Out]) runFor(s *subscription[In, Out], p *pool, start int64) {
	if !call.state.CompareAndSwap(callQueued, callRunning) {
		call.recycle()
		return
	}
	ctx, in := call.ctx, call.in
	starts := s.starting(p, start) // s forgets the call first, so that it cannot take out of the queue the call's next use
	call.recycle()
	if !starts {
		return // s gave the slot back
	}
	s.runOnWorker(p, ctx, in)
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
// concurrency its worker recorded and when run started. They are read
// before the call is abandoned: once it is, the worker recycles the call
// as soon as run returns, and a later read could wait for ever on a
// recycled call.
func (call *poolCall[In, Out]) abandon() (state int32, concurrency, started int64) {
	for {
		s := call.state.Load()
		var n, start int64
		switch s {
		case callDone:
			return callDone, 0, 0
		case callRunning:
			n = call.startedConcurrency() // the worker keeps the call while it runs
			start = call.started
		}
		if call.state.CompareAndSwap(s, callAbandoned) {
			return s, n, start
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
func (c *core[In, Out]) executeInPool(ctx context.Context, e *execution, in In) (Out, error) {
	p, err := c.poolFor(e, in)
	if err != nil {
		var zero Out
		return c.conclude(ctx, e, in, outcomeFailure, zero, err, c.k.registry.now())
	}
	clk := c.k.registry.clock
	runCtx, deadline := runContextFor(ctx, clk, e.start, e.cfg.Timeout)
	if deadline == nil && ctx.Done() == nil && p.enter(e.start) {
		return c.executeHere(ctx, e, in, p)
	}
	call := c.getCall(runCtx, e.cfg, in)
	call.global, call.local = e.global, e.local
	p, submitted := c.k.registry.submit(p, call, e.start)
	if !submitted {
		call.recycle()
		endRunContext(deadline)
		e.poolRejected()
		return c.fallBack(ctx, e, in, PoolRejectedFailure, ErrPoolRejected)
	}
	return c.awaitRun(ctx, e, in, call, runCtx, deadline, p)
}

// awaitRun waits for the run handed to call, on a worker of p or, with p
// nil, on a goroutine of its own, until it returns, the timeout passes or
// ctx ends, and concludes the execution on the caller's goroutine.
func (c *core[In, Out]) awaitRun(ctx context.Context, e *execution, in In, call *poolCall[In, Out], runCtx context.Context, deadline *deadlineContext, p *pool) (Out, error) {
	var err error
	answered := false
	yieldSometimes()
	// The caller leaves at the timeout, which a deadlineContext tells only
	// when asked, so the caller keeps the time itself, or when ctx ends.
	due := int64(math.MaxInt64) // no timeout: a deadline that never comes
	if deadline != nil {
		due = deadline.due
	}
	switch call.wait.until(due, ctx) {
	case wakeDone:
		answered = true
	case wakeTimeUp:
		deadline.timeOut()
	case wakeLeft:
		if deadline != nil {
			deadline.leave()
		}
	}
	var v Out
	now := int64(unread)
	o := outcomeSuccess
	if answered {
		v, err, now = call.out, call.err, call.end
		e.ranOnWorker(call.concurrency.Load(), call.started)
		o = classifyInTime(ctx, runCtx, err)
		call.recycle()
	} else if p != nil && call.state.Load() == callQueued && p.remove(call) {
		// No worker took the run, and none can now: the caller owns the
		// call again. The removal comes before the call is abandoned, under
		// the pool's lock: a worker that took the run first finds it
		// abandoned and recycles it, and a caller that removed it after
		// that could take out of the queue the call's next use.
		o = classify(ctx, runCtx, err)
		call.recycle()
		now = c.k.registry.now()
	} else {
		switch state, concurrency, started := call.abandon(); state {
		case callQueued:
			// A worker took the run, and a slot for it, and will find it
			// abandoned: the slot goes back now, as a subscriber's does
			// (subscription.dequeue), not when the worker, which may
			// wait for a processor behind the callers it would turn
			// away, gets to it. The worker may have looked for the next
			// queued run before the slot came back, and left: the caller
			// starts it (exitUnrun).
			p.exitUnrun()
			o = classify(ctx, runCtx, err)
		case callRunning:
			e.ranOnWorker(concurrency, started)
			o = classify(ctx, runCtx, err)
		case callExpired:
			// A worker took the run after its deadline and gave its slot
			// back without running it (runTask): nobody else holds the
			// call now.
			o = classify(ctx, runCtx, err)
			call.recycle()
		case callDone:
			<-call.wait.wake
			answered = true
			v, err, now = call.out, call.err, call.end
			e.ranOnWorker(call.concurrency.Load(), call.started)
			o = classifyInTime(ctx, runCtx, err)
			call.recycle()
		}
		if now == unread {
			now = c.k.registry.now()
		}
	}
	if !answered {
		err = errNoAnswer
	}
	endRunContext(deadline)
	return c.conclude(ctx, e, in, o, v, err, now)
}

// errNoAnswer is the error awaitRun concludes with when the caller left
// before run returned: there is no value of run's, to give or to drop.
// The outcome is then TIMEOUT or CANCELLED, whose causes do not read it.
var errNoAnswer = errors.New("command: run did not return before its caller left")

// executeHere runs run on the caller's goroutine in a slot of p that it
// has entered.
func (c *core[In, Out]) executeHere(ctx context.Context, e *execution, in In, p *pool) (Out, error) {
	p.recorder.MarkStartedAt(e.start, p.active())
	e.runStarted()
	v, err := c.invoke(ctx, e.cfg, in)
	now := c.k.registry.now()
	p.exit(now)
	return c.conclude(ctx, e, in, classifyTimed(ctx.Err() != nil, false, err), v, err, now)
}

// poolFor returns the pool of this call, or the *KeyFuncError of a pool
// key function that failed.
func (c *core[In, Out]) poolFor(e *execution, in In) (*pool, error) {
	return poolOf(e, c.poolKey, in)
}

// poolOf returns the pool the execution runs in: the one poolKey names for
// in, when there is a poolKey, or the key's Config.Pool. The execution
// samples the pool's adaptive limit, if it has one.
func poolOf[In any](e *execution, poolKey func(In) string, in In) (*pool, error) {
	var p *pool
	if poolKey == nil {
		p = e.k.namedPool(e.pool)
	} else {
		name, err := poolKeyOf(e.k.key, poolKey, in)
		if err != nil {
			return nil, err
		}
		e.pool = name
		p = e.k.registry.pool(name, true)
	}
	if l := p.limiter.Load(); l != nil {
		e.limiter, e.limitPool = l, p
	}
	return p, nil
}
