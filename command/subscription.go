package command

import (
	"context"
	"sync"
	"time"

	"github.com/rxhystrix/rxhystrix/internal/clock"
	"github.com/rxhystrix/rxhystrix/observable"
)

// The phases of a subscription's execution.
const (
	phaseAdmitting   = iota // begun; the breaker and permits are being asked
	phaseRunning            // run runs, or waits in the pool's queue
	phaseFallingBack        // the fallback runs
	phaseDone               // the Completion is published and the result told
)

// subscription is one execution for a subscriber: the driver of Queue,
// Observe and every subscription to ToObservable that is not a First (see
// stages.go). Unlike Command.call's caller, its subscriber may leave while
// run or the fallback still runs, and under semaphore isolation a timer
// may answer it at the timeout while run still holds its goroutine, as
// Hystrix's timeout operator does. So the goroutines that move the
// execution on (the subscriber's, a pool worker, the timer, an
// unsubscriber) take mu, and whichever ends it first tells r; later
// arrivals find phaseDone and drop what they bring.
type subscription[In, Out any] struct {
	c   *Command[In, Out]
	in  In
	r   observable.SingleObserver[Out]
	rec executionRecorder

	callerCtx context.Context // the fallback's context
	ctx       context.Context // run's parent: the subscription's and the caller's joined
	unjoin    func()

	mu       sync.Mutex
	e        execution
	phase    int
	runCtx   context.Context
	deadline *deadlineContext
	endRun   context.CancelFunc
	timer    clock.Timer
	unwatch  [2]func() bool
	queued   *poolCall[In, Out] // submitted to pl; taken out of its queue by an interrupt
	pl       *pool
}

// subscribe runs one execution for a subscriber whose context is subCtx,
// and tells r its result.
func (c *Command[In, Out]) subscribe(callerCtx, subCtx context.Context, in In, collapsed int, rec executionRecorder, r observable.SingleObserver[Out]) {
	if err := subCtx.Err(); err != nil {
		var zero Out
		r.OnResult(zero, err)
		return
	}
	s := &subscription[In, Out]{c: c, in: in, r: r, rec: rec, callerCtx: callerCtx}
	s.ctx, s.unjoin = joinContexts(subCtx, callerCtx)
	s.e.begin(c.k)
	if collapsed > 0 {
		s.e.markCollapsed(collapsed)
	}
	// Installed before anything is taken: a subscriber that leaves from
	// here on ends the execution, once, with every permit back.
	unwatch := s.watch(subCtx, callerCtx)
	s.mu.Lock()
	if s.phase == phaseDone {
		s.mu.Unlock()
		stopAll(unwatch)
		return
	}
	s.unwatch = unwatch
	if failure := s.e.admit(); failure != noFailure {
		s.fallBack(failure, failure.sentinel())
		return
	}
	s.phase = phaseRunning
	s.runCtx, s.deadline, s.endRun = runContextFor(s.ctx, c.k.registry.clock, s.e.start, s.e.cfg.Timeout)
	if s.e.cfg.Isolation == SemaphoreIsolation {
		s.e.runStarted()
		s.armTimeout()
		s.mu.Unlock()
		v, err := callRun(c.run, s.runCtx, in)
		s.runReturned(v, err, c.k.registry.now(), false)
		return
	}
	s.submit()
}

// watch arranges for the end of the subscriber's and the caller's
// contexts to cancel the execution, and returns what stops that. A
// context that can tell its end synchronously (the subscription's does)
// does: the execution has ended, and its permits are back, when
// Unsubscribe returns.
func (s *subscription[In, Out]) watch(subCtx, callerCtx context.Context) (unwatch [2]func() bool) {
	unwatch[0] = afterEnd(subCtx, s.cancel)
	if callerCtx != subCtx {
		unwatch[1] = afterEnd(callerCtx, s.cancel)
	}
	return unwatch
}

// stopAll calls the functions of fs that are not nil.
func stopAll(fs [2]func() bool) {
	for _, stop := range fs {
		if stop != nil {
			stop()
		}
	}
}

// afterEnd calls f once ctx ends, on the goroutine that ends it where ctx
// can say so (as the contexts of package observable and of package
// context's own derivations do), and returns what stops it; for a context
// that never ends it does nothing.
func afterEnd(ctx context.Context, f func()) func() bool {
	if ctx.Done() == nil {
		return nil
	}
	if af, ok := ctx.(interface{ AfterFunc(func()) func() bool }); ok {
		return af.AfterFunc(f)
	}
	return context.AfterFunc(ctx, f)
}

// armTimeout starts the timer that answers the subscriber at the timeout,
// under s.mu.
func (s *subscription[In, Out]) armTimeout() {
	if s.e.cfg.Timeout <= 0 {
		return
	}
	due := deadlineAfter(s.e.start, s.e.cfg.Timeout)
	s.timer = s.c.k.registry.clock.AfterFunc(time.Duration(due-s.c.k.registry.now()), s.timeOut)
}

// submit hands run to a worker of the command's pool, under s.mu, which
// it releases.
func (s *subscription[In, Out]) submit() {
	c := s.c
	p, err := poolOf(&s.e, c.poolKey, s.in)
	if err != nil {
		s.runFailedLocked(err, c.k.registry.now())
		return
	}
	call := c.getCall(s.runCtx, s.in)
	call.owner = s
	p, submitted := c.k.registry.submit(p, call, s.e.start)
	if !submitted {
		call.recycle()
		s.e.poolRejected()
		s.fallBack(PoolRejectedFailure, ErrPoolRejected)
		return
	}
	s.queued, s.pl = call, p
	s.armTimeout()
	s.mu.Unlock()
}

// starting is a pool worker about to run the call: it reports whether run
// should start, and records that it does.
func (s *subscription[In, Out]) starting(start int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queued = nil // a worker has it: an interrupt no longer takes it out
	if s.phase != phaseRunning || s.runCtx.Err() != nil {
		return false
	}
	s.e.concurrency = s.c.k.metrics.MarkStartAt(start)
	s.e.runStarted()
	return true
}

// runReturned concludes the execution with run's result, returned at now,
// unless it has ended meanwhile. inTime says the caller still waited for
// run when it returned (see classifyInTime).
func (s *subscription[In, Out]) runReturned(v Out, err error, now int64, inTime bool) {
	s.mu.Lock()
	if s.phase != phaseRunning {
		s.mu.Unlock()
		return // cancelled or timed out: the result is dropped
	}
	var o outcome
	if inTime {
		o = classifyInTime(s.ctx, s.runCtx, err)
	} else {
		o = classifyTimed(s.ctx, s.runCtx != s.ctx && timedOut(s.runCtx, s.deadline, now), err)
	}
	switch failure, cause := s.e.concluded(o, err, now); failure {
	case noFailure:
		s.end(now, v, nil)
	case runCancelled:
		var zero Out
		s.end(now, zero, s.ctx.Err())
	default:
		s.fallBack(failure, cause)
	}
}

// runFailedLocked concludes the execution with err before run could start.
func (s *subscription[In, Out]) runFailedLocked(err error, now int64) {
	failure, cause := s.e.concluded(outcomeFailure, err, now)
	s.fallBack(failure, cause)
}

// timeOut is the timeout's timer: unless run returned first, the execution
// times out, run's context is cancelled with context.DeadlineExceeded, and
// the fallback answers the subscriber.
func (s *subscription[In, Out]) timeOut() {
	s.mu.Lock()
	if s.phase != phaseRunning {
		s.mu.Unlock()
		return
	}
	s.dequeue()
	if s.deadline != nil {
		s.deadline.timeOut()
	}
	failure, cause := s.e.concluded(outcomeTimeout, nil, s.c.k.registry.now())
	s.fallBack(failure, cause)
}

// cancel is the subscriber or the caller leaving: unless the execution has
// ended, it is CANCELLED, and its permits go back at once; run and the
// fallback, which may still run, see their contexts end.
func (s *subscription[In, Out]) cancel() {
	s.mu.Lock()
	if s.phase == phaseDone {
		s.mu.Unlock()
		return
	}
	s.dequeue()
	now := s.c.k.registry.now()
	s.e.cancelled(now)
	var zero Out
	err := s.ctx.Err()
	if err == nil {
		err = context.Canceled
	}
	s.end(now, zero, err)
}

// dequeue takes a run no worker has taken out of the pool's queue, under
// s.mu: it will not start.
func (s *subscription[In, Out]) dequeue() {
	if call := s.queued; call != nil && s.pl.remove(call) {
		s.queued = nil
		call.recycle()
	}
}

// fallBack is the fallback stage for the subscriber, entered under s.mu,
// which it releases: the fallback runs without it, and its result is
// dropped if the subscriber left meanwhile.
func (s *subscription[In, Out]) fallBack(failure FailureType, cause error) {
	var zero Out
	if failure == BadRequestFailure {
		s.end(s.e.endTime(), zero, s.e.badRequest(cause))
		return
	}
	cmdErr, ok := fallbackPermitted(&s.e, s.c.fallback != nil, failure, cause)
	if !ok {
		s.end(s.e.endTime(), zero, cmdErr)
		return
	}
	s.phase = phaseFallingBack
	s.mu.Unlock()
	v, err := callFallback(s.c.fallback, s.callerCtx, s.in, cmdErr)
	s.mu.Lock()
	if s.phase != phaseFallingBack {
		s.mu.Unlock()
		return
	}
	if err = s.e.fallbackDone(cmdErr, err); err != nil {
		v = zero
	}
	s.end(s.e.endTime(), v, err)
}

// end publishes the Completion at now, gives every permit back, lets go
// of the contexts and the timer, and tells the subscriber v and err. It
// is entered under s.mu, which it releases before telling: a subscriber
// may start the next execution from OnResult, or unsubscribe.
func (s *subscription[In, Out]) end(now int64, v Out, err error) {
	s.phase = phaseDone
	if s.rec != nil {
		s.rec.recordExecution(s.e.logRecord())
	}
	s.e.finish(now)
	timer, unwatch := s.timer, s.unwatch
	s.timer, s.unwatch = nil, [2]func() bool{}
	s.mu.Unlock()
	if timer != nil {
		timer.Stop()
	}
	stopAll(unwatch)
	endRunContext(s.deadline, s.endRun)
	s.unjoin()
	s.r.OnResult(v, err)
}
