package command

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/rxhystrix/rxhystrix/internal/clock"
	"github.com/rxhystrix/rxhystrix/internal/timerlist"
	"github.com/rxhystrix/rxhystrix/observable"
)

// The states of subscription.admission.
const (
	admissionOver int32 = iota
	admissionWaiting
	admissionLeft
)

// The phases of a subscription's execution.
const (
	phaseAdmitting   = iota // begun; the breaker and permits are being asked
	phaseRunning            // the user's code runs, or waits in the pool's queue
	phaseFallingBack        // the fallback runs
	phaseDone               // the Completion is published; the terminal event is told or due
)

// subscription is one execution for a subscriber: the driver of Queue,
// Observe, every subscription to a Command's ToObservable that is not a
// First, and every execution of an ObservableCommand (see stages.go).
// Unlike Command.call's caller, the subscriber may leave while the user's
// code or the fallback still runs, and a timer may answer it at the
// timeout while run still holds its goroutine, as Hystrix's timeout
// operator does. So the goroutines that move the execution on (the
// subscriber's, a pool worker, the user's Observable's, the timer, an
// unsubscriber) take mu, and whichever ends the execution first tells the
// subscriber; later arrivals find phaseDone and drop what they bring.
//
// The subscriber is a Single's observer (single) for a Command, or a
// stream's (stream) for an ObservableCommand, whose values are told as
// they come. A terminal event is never told while a value is being told:
// one that comes meanwhile, from another goroutine or from the subscriber
// leaving inside OnNext, is left to the goroutine telling the value.
type subscription[In, Out any] struct {
	c      *core[In, Out]
	in     In
	single observable.SingleObserver[Out]
	stream observable.Observer[Out]
	rec    executionRecorder

	callerCtx context.Context // the caller's (ToObservable's) context
	subCtx    context.Context

	mu       sync.Mutex
	e        execution
	phase    int
	deadline *deadlineContext   // run's context, when not subCtx (runContext); ended by the subscription
	fbCtx    *deadlineContext   // the fallback's, likewise (fallbackContext)
	timeout  timerlist.Entry    // in a list of the registry's while the timeout may still pass
	watches  contextWatches     // of the subscriber's and the caller's contexts, which call leave
	leave    func()             // cancel, kept where the contexts may hold its address
	queued   *poolCall[In, Out] // submitted to pl; taken out of its queue by an interrupt
	pl       *pool
	emitted  bool // the user's Observable emitted: the timeout no longer applies
	// theirs is set once the subscriber's OnNext, OnError or OnCompleted
	// panicked: the panic is passed on by the recovers of the user's code
	// (see tellNext, tellEnd).
	theirs atomic.Bool
	// admission is admissionWaiting while subscribe's admit runs under
	// mu, and admissionLeft once leave came meanwhile.
	admission atomic.Int32

	teller valueTeller // a value being told to stream, and the terminal event left to its teller
	slot   slotHold    // the pool slot an ObservableCommand's worker holds
}

// subscribe runs one execution for a subscriber whose context is subCtx,
// and tells single (or stream) its result.
func (c *core[In, Out]) subscribe(callerCtx, subCtx context.Context, in In, rec executionRecorder, single observable.SingleObserver[Out], stream observable.Observer[Out], of *attemptInfo) {
	s := &subscription[In, Out]{c: c, in: in, single: single, stream: stream, rec: rec, callerCtx: callerCtx, subCtx: subCtx}
	s.e.begin(c.k, of)
	if t := c.k.registry.tracer.Load(); t != nil {
		subCtx, callerCtx = s.e.tracedSubscription(t, subCtx, callerCtx)
		s.subCtx, s.callerCtx = subCtx, callerCtx
	}
	var watches contextWatches
	if s.leftErr() == nil {
		// Installed before anything is taken: a subscriber that leaves
		// from here on ends the execution, once, with every permit back.
		// A context that has ended already would only be told so on a
		// goroutine of its own.
		watches = s.watch(subCtx, callerCtx)
	}
	s.mu.Lock()
	if s.phase == phaseDone {
		s.mu.Unlock()
		watches.stop(subCtx, callerCtx, &s.leave)
		return
	}
	s.watches = watches
	if s.leftErr() != nil {
		// The subscriber left before it subscribed (a Future cancelled
		// before its work started), or before the watch was in place: the
		// execution ends CANCELLED with nothing taken for it, as
		// Hystrix's does when its subscriber leaves before the run starts.
		s.cancelLocked()
		return
	}
	// admit may wait (for a token, in the backlog) under s.mu, on the
	// contexts' Done channels; a context may call leave before it closes
	// its channel (an observable scope does), so leave must not wait for
	// s.mu meanwhile: it leaves a mark, seen here (see cancel).
	s.admission.Store(admissionWaiting)
	failure := s.e.admit(subCtx, callerCtx)
	left := s.admission.Swap(admissionOver) == admissionLeft
	if left && failure == noFailure {
		failure = runCancelled
	}
	switch failure {
	case noFailure:
	case runCancelled:
		s.cancelLocked()
		return
	default:
		s.fallBack(failure, failure.sentinel())
		if left {
			s.cancel() // the leave that came during admit, as it would have after
		}
		return
	}
	s.phase = phaseRunning
	if s.e.cfg.Timeout > 0 || addsValues(callerCtx, subCtx) {
		// Run's context ends when the subscription ends it: at the
		// timeout, when the subscriber or the caller leaves (the watch
		// above), once the execution has ended. It is made, too, for a
		// caller's context that never ends but carries values (the
		// request context), which run must see.
		s.deadline = newCommandContext(valuesOf(subCtx, callerCtx), c.k.registry.clock, s.e.start, s.e.cfg.Timeout)
	}
	if s.e.cfg.Isolation != SemaphoreIsolation {
		s.submit()
		return
	}
	s.e.runStarted()
	s.armTimeout()
	s.mu.Unlock()
	growStack()
	if c.run != nil {
		v, err := c.callUser(s.runContext(), s.e.cfg, in)
		s.runReturned(v, err, c.k.registry.now(), false)
		return
	}
	s.subscribeBody(s.runContext(), false)
}

// runContext is the context of the user's code: the subscriber's, or the
// one the subscription ends at the timeout and when the caller leaves.
// It is not kept in a field of its own, so that a subscription fits the
// allocator's size class of 640 bytes, not 704 (see execution's fields
// and TestSubscriptionFitsItsSizeClass).
func (s *subscription[In, Out]) runContext() context.Context {
	if s.deadline != nil {
		return s.deadline
	}
	return s.subCtx
}

// armTimeout starts the timer that answers the subscriber at the timeout,
// under s.mu.
func (s *subscription[In, Out]) armTimeout() {
	if s.e.cfg.Timeout <= 0 {
		return
	}
	// A deadline already passed is acted on when the clock next moves, as
	// a clock's timer armed for the past is; a worker that finds the run
	// timed out in the queue says so itself (see starting).
	s.c.k.registry.timeouts.PickFor(&s.timeout).Add(&s.timeout, s, clock.UnixNanoAfter(s.e.start, s.e.cfg.Timeout))
}

// Expire is the timeout passing, told by the registry's timer list. The
// timeout runs the fallback, which may take long, so it runs on a
// goroutine of its own, as a function of the clock's timer would, except
// on a Manual clock, which runs its timers' functions on the goroutine
// that moves it.
func (s *subscription[In, Out]) Expire(int64) {
	if _, manual := s.c.k.registry.clock.(*clock.Manual); manual {
		s.timeOut()
		return
	}
	go s.timeOut()
}

// submit hands the user's code to a worker of the command's pool, under
// s.mu, which it releases.
func (s *subscription[In, Out]) submit() {
	c := s.c
	p, err := poolOf(&s.e, c.poolKey, s.in)
	if err != nil {
		failure, cause := s.e.concluded(outcomeFailure, err, c.k.registry.now())
		s.fallBack(failure, cause)
		return
	}
	// Armed before the run is queued, so that whoever sees it queued may
	// count on its timeout.
	s.armTimeout()
	call := c.getCall(s.runContext(), s.e.cfg, s.in)
	call.owner = s
	p, submitted := c.k.registry.submit(p, call, s.e.start)
	if !submitted {
		call.recycle()
		s.e.poolRejected()
		s.fallBack(PoolRejectedFailure, ErrPoolRejected)
		return
	}
	s.queued, s.pl = call, p
	s.mu.Unlock()
	yieldSometimes()
}

// starting is a pool worker about to run the user's code in a slot of p:
// it reports whether the code should start, and records that it does.
// When it should not, the slot goes back before the execution is
// concluded: the fallback of a run that timed out in the queue does not
// hold it, as it does not when the timer answers first.
func (s *subscription[In, Out]) starting(p *pool, start int64) bool {
	s.mu.Lock()
	s.queued = nil // a worker has it: an interrupt no longer takes it out
	if s.phase != phaseRunning {
		s.mu.Unlock()
		p.release()
		return false
	}
	switch {
	case s.deadline != nil && s.deadline.expiredAt(s.c.k.registry.now()):
		// It timed out in the queue. The worker says so, since the timer
		// may not have: a manual clock fires a timer armed for a time
		// already past only when it next moves. The next queued task
		// starts now, not once the fallback has run on this worker.
		p.exitUnrun()
		s.timeOutLocked()
		return false
	case s.leftErr() != nil:
		p.exitUnrun()
		s.cancelLocked()
		return false
	}
	s.e.concurrency, s.e.runStart = s.c.k.metrics.MarkStartAt(start), start
	s.e.runStarted()
	s.mu.Unlock()
	return true
}

// runReturned concludes the execution with the user's code's result,
// ended at now, unless the execution has ended meanwhile. inTime says the
// caller still waited when it ended (see classifyInTime).
func (s *subscription[In, Out]) runReturned(v Out, err error, now int64, inTime bool) {
	s.mu.Lock()
	if s.phase != phaseRunning {
		s.mu.Unlock()
		s.dropResult(v, err) // cancelled or timed out: nobody waits for it
		return
	}
	var o outcome
	switch {
	case s.leftErr() != nil:
		o = outcomeCancelled
	case inTime && err == nil:
		o = outcomeSuccess
	default:
		// A stream's first value stopped the timeout: a failure after it
		// is the stream's own, however late, as in Hystrix.
		timedOut := !s.emitted && s.deadline != nil && s.deadline.expiredAt(now)
		o = classifyTimed(false, timedOut, err)
	}
	switch failure, cause := s.e.concluded(o, err, now); failure {
	case noFailure:
		s.end(now, v, nil)
	case runCancelled:
		var zero Out
		s.end(now, zero, s.leftErr())
		s.dropResult(v, err)
	default:
		s.fallBack(failure, cause)
		s.dropResult(v, err)
	}
}

// dropResult drops v and err, what run or the fallback returned, which no
// subscriber receives. Only a Command's has a value: an
// ObservableCommand's values come through value, and what ends its
// Observable carries none.
func (s *subscription[In, Out]) dropResult(v Out, err error) {
	if s.single != nil {
		s.c.drop(v, err)
	}
}

// timeOut is the timeout's timer: unless the user's code ended or emitted
// first, the execution times out, run's context is cancelled with
// context.DeadlineExceeded, and the fallback answers the subscriber.
func (s *subscription[In, Out]) timeOut() {
	s.mu.Lock()
	if s.phase != phaseRunning || s.emitted {
		s.mu.Unlock()
		return
	}
	s.timeOutLocked()
}

// timeOutLocked is timeOut under s.mu, which it releases.
func (s *subscription[In, Out]) timeOutLocked() {
	s.dequeue()
	if s.deadline != nil {
		s.deadline.timeOut()
	}
	failure, cause := s.e.concluded(outcomeTimeout, nil, s.c.k.registry.now())
	s.fallBack(failure, cause)
}

// cancel is the subscriber or the caller leaving: unless the execution has
// ended, it is CANCELLED, and its permits go back at once; the user's code
// and the fallback, which may still run, see their contexts end.
func (s *subscription[In, Out]) cancel() {
	if s.admission.CompareAndSwap(admissionWaiting, admissionLeft) {
		return // admit holds s.mu, and subscribe acts on the mark
	}
	s.mu.Lock()
	if s.phase == phaseDone {
		s.mu.Unlock()
		return
	}
	s.cancelLocked()
}

// cancelLocked is cancel under s.mu, which it releases.
func (s *subscription[In, Out]) cancelLocked() {
	s.dequeue()
	now := s.c.k.registry.now()
	s.e.cancelled(now)
	var zero Out
	err := s.leftErr()
	if err == nil {
		err = context.Canceled
	}
	s.end(now, zero, err)
}

// dequeue makes sure a run no worker has started will not start, under
// s.mu: it takes it out of the pool's queue, or gives back the slot a
// worker took for it.
func (s *subscription[In, Out]) dequeue() {
	call := s.queued
	if call == nil {
		return
	}
	s.queued = nil
	switch {
	case s.pl.remove(call):
		call.recycle() // it waited in the queue, holding no slot
	case call.state.CompareAndSwap(callQueued, callAbandoned):
		// A worker holds a slot for it but has not started it: the slot
		// goes back now, and the worker recycles the call. The worker
		// may have looked for the next queued run before the slot came
		// back, and left: the run starts here (exitUnrun).
		s.pl.exitUnrun()
	}
}

// fallBack is the fallback stage for the subscriber, entered under s.mu,
// which it releases: the fallback runs without it, and what it produces
// is dropped if the subscriber left meanwhile. An ObservableCommand's
// execution that has emitted asks no other attempt to answer for it: its
// fallback follows its values.
func (s *subscription[In, Out]) fallBack(failure FailureType, cause error) {
	var zero Out
	if failure == BadRequestFailure {
		s.end(s.e.endTime(), zero, s.e.badRequest(cause))
		return
	}
	// A retry is decided under both contexts' deadlines (valuesOf).
	if !s.emitted && s.e.deferFallback(valuesOf(s.subCtx, s.callerCtx), failure, cause) {
		s.end(s.e.endTime(), zero, s.e.commandError(failure, cause))
		return
	}
	cmdErr, ok := fallbackPermitted(&s.e, s.c.hasFallback(), failure, cause)
	if !ok {
		s.end(s.e.endTime(), zero, cmdErr)
		return
	}
	s.phase = phaseFallingBack
	ctx := s.fallbackContext()
	s.mu.Unlock()
	if s.c.fallbackObs == nil {
		v, err := callFallback(s.c.fallback, ctx, s.in, cmdErr)
		s.fallbackEnded(cmdErr, v, err)
		return
	}
	s.subscribeFallback(ctx, cmdErr)
}

// fallbackContext returns, under s.mu, the context of the fallback
// (called, or its Observable made and subscribed), which has what run's
// has (see subscribe): the subscriber's values over the caller's, and an
// end when either leaves, so that a fallback still running when a Future
// is cancelled or every subscriber has left is told so. Only where both
// contexts may end is one made, which the subscription ends (fbCtx).
func (s *subscription[In, Out]) fallbackContext() context.Context {
	switch {
	case !addsValues(s.callerCtx, s.subCtx):
		return s.subCtx
	case s.callerCtx.Done() == nil:
		return valuesOf(s.subCtx, s.callerCtx) // done when the subscriber's is
	}
	s.fbCtx = newCommandContext(valuesOf(s.subCtx, s.callerCtx), s.c.k.registry.clock, 0, 0)
	return s.fbCtx
}

// fallbackEnded concludes the execution with the fallback's result (its
// value is told with it, for a Command), unless it ended meanwhile. A
// fallback that returns once the subscriber or the caller has left ends
// the execution CANCELLED, as a run does (runReturned), whether or not
// the watch of their contexts has told the subscription yet: what it
// returned is dropped.
func (s *subscription[In, Out]) fallbackEnded(cmdErr *Error, v Out, err error) {
	s.mu.Lock()
	switch {
	case s.phase != phaseFallingBack:
		s.mu.Unlock()
		s.dropResult(v, err) // the subscriber left while the fallback ran
		return
	case s.leftErr() != nil:
		s.cancelLocked()
		s.dropResult(v, err)
		return
	}
	if err = s.e.fallbackDone(cmdErr, err); err != nil {
		var zero Out
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
	watches := s.watches
	s.watches = contextWatches{}
	timing := !s.emitted // else the first value stopped the timeout
	telling := s.teller.leave(err)
	s.mu.Unlock()
	if timing {
		s.timeout.Stop()
	}
	watches.stop(s.subCtx, s.callerCtx, &s.leave)
	if s.deadline != nil {
		s.deadline.endFor(err)
	}
	if s.fbCtx != nil {
		s.fbCtx.endFor(err)
	}
	if !telling {
		s.tell(v, err)
	}
}

// tell tells the subscriber the terminal event.
func (s *subscription[In, Out]) tell(v Out, err error) {
	if s.single != nil {
		s.single.OnResult(v, err)
		return
	}
	s.tellEnd(err)
}

// tellEnd tells a stream's subscriber its terminal event. A panic in its
// OnError or OnCompleted is the subscriber's, as one in its OnNext is
// (tellNext): it goes on past the recovers of the user's code (theirs),
// which may be on the stack (the terminal event of the user's
// Observable, or of its fallback, is told from within its Subscribe),
// rather than being taken for the user's Observable's panic and dropped.
// The execution has ended already: nothing is left to cancel. theirs is
// set for the call rather than by a deferred function, which cost about
// 5 % of a one-value ObservableCommand's First in paired rounds
// (rxhystrix-semaphore-observable-command).
func (s *subscription[In, Out]) tellEnd(err error) {
	before := s.theirs.Load()
	s.theirs.Store(true)
	if err != nil {
		s.stream.OnError(err)
	} else {
		s.stream.OnCompleted()
	}
	s.theirs.Store(before)
}
