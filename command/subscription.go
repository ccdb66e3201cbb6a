package command

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rxhystrix/rxhystrix/internal/clock"
	"github.com/rxhystrix/rxhystrix/metricsstream"
	"github.com/rxhystrix/rxhystrix/observable"
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

	callerCtx context.Context // the fallback's context
	subCtx    context.Context

	mu       sync.Mutex
	e        execution
	phase    int
	runCtx   context.Context  // the user's code's: subCtx, or deadline
	deadline *deadlineContext // made by newCommandContext, ended by the subscription
	fbCtx    *deadlineContext // an Observable fallback's, likewise
	timer    clock.Timer
	unwatch  [2]func() bool
	queued   *poolCall[In, Out] // submitted to pl; taken out of its queue by an interrupt
	pl       *pool
	emitted  bool // the user's Observable emitted: the timeout no longer applies

	telling bool     // a value is being told to stream
	due     *endNote // the terminal event left to the goroutine telling a value
	slot    slotHold // the pool slot an ObservableCommand's worker holds
}

// endNote is a terminal event to tell.
type endNote struct{ err error }

// subscribe runs one execution for a subscriber whose context is subCtx,
// and tells single (or stream) its result.
func (c *core[In, Out]) subscribe(callerCtx, subCtx context.Context, in In, collapsed int, rec executionRecorder, single observable.SingleObserver[Out], stream observable.Observer[Out]) {
	s := &subscription[In, Out]{c: c, in: in, single: single, stream: stream, rec: rec, callerCtx: callerCtx, subCtx: subCtx}
	if err := subCtx.Err(); err != nil {
		var zero Out
		s.tell(zero, err)
		return
	}
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
	if subCtx.Err() != nil || callerCtx.Err() != nil {
		// The subscriber left before the watch was in place (while the
		// Start hooks ran, say): nothing is taken for it.
		s.cancelLocked()
		return
	}
	if failure := s.e.admit(); failure != noFailure {
		s.fallBack(failure, failure.sentinel())
		return
	}
	s.phase = phaseRunning
	s.runCtx = subCtx
	if s.e.cfg.Timeout > 0 || !neverEnds(callerCtx, subCtx) {
		// Run's context ends when the subscription ends it: at the
		// timeout, when the subscriber or the caller leaves (the watch
		// above), once the execution has ended.
		s.deadline = newCommandContext(valuesOf(subCtx, callerCtx), c.k.registry.clock, s.e.start, s.e.cfg.Timeout)
		s.runCtx = s.deadline
	}
	if s.e.cfg.Isolation != SemaphoreIsolation {
		s.submit()
		return
	}
	s.e.runStarted()
	s.armTimeout()
	s.mu.Unlock()
	if c.run != nil {
		v, err := callRun(c.run, s.runCtx, in)
		s.runReturned(v, err, c.k.registry.now(), false)
		return
	}
	s.subscribeBody(s.runCtx, false)
}

// subscribeBody subscribes an ObservableCommand's Observable, with a
// panic in construct or while it is subscribed turned into its error.
// With wait (on a pool worker), it returns once the Observable has
// terminated or ctx has ended. An Observable that is a synchronous
// observable.Single hands its result over directly (bench/peers
// rxhystrix-*-observable-command).
func (s *subscription[In, Out]) subscribeBody(ctx context.Context, wait bool) {
	src := constructBody(s.c.construct, ctx, s.in)
	if one, ok := src.AsSingle(); ok && !one.Async() {
		v, err := callSingle(one, ctx)
		s.slot.release() // the user's code is done, as a Command's run is when it returns
		if err == nil {
			(*bodyObserver[In, Out])(s).OnNext(v)
		}
		var zero Out
		s.runReturned(zero, err, s.c.k.registry.now(), true)
		return
	}
	subscribeSafely(ctx, src, (*bodyObserver[In, Out])(s), wait)
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

// stopAll calls the functions of fs that are not nil.
func stopAll(fs [2]func() bool) {
	for _, stop := range fs {
		if stop != nil {
			stop()
		}
	}
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
	s.mu.Unlock()
	yieldSometimes()
}

// starting is a pool worker about to run the user's code: it reports
// whether the code should start, and records that it does.
func (s *subscription[In, Out]) starting(start int64) bool {
	s.mu.Lock()
	s.queued = nil // a worker has it: an interrupt no longer takes it out
	if s.phase != phaseRunning {
		s.mu.Unlock()
		return false
	}
	switch {
	case s.deadline != nil && s.deadline.expiredAt(s.c.k.registry.now()):
		// It timed out in the queue. The worker says so, since the timer
		// may not have: a manual clock fires a timer armed for a time
		// already past only when it next moves.
		s.timeOutLocked()
		return false
	case s.leftErr() != nil:
		s.cancelLocked()
		return false
	}
	s.e.concurrency = s.c.k.metrics.MarkStartAt(start)
	s.e.runStarted()
	s.mu.Unlock()
	return true
}

// runOnWorker runs the user's code on the pool worker that took the call,
// and frees the slot as soon as the code is done, before the execution is
// concluded: a caller that submits again at once finds the slot free.
func (s *subscription[In, Out]) runOnWorker(p *pool, ctx context.Context, in In) int64 {
	c := s.c
	if c.run != nil {
		out, err := callRun(c.run, ctx, in)
		end := c.k.registry.now()
		p.release()
		s.runReturned(out, err, end, true)
		return end
	}
	// An ObservableCommand's Observable holds the worker until it
	// terminates (or the subscriber leaves).
	s.slot.p.Store(p)
	s.subscribeBody(ctx, true)
	s.slot.release()
	return unread
}

// slotHold is a pool slot held by an ObservableCommand's worker, freed
// once: at the user's Observable's terminal event, or when the worker
// stops waiting for it.
type slotHold struct {
	p        atomic.Pointer[pool] // set by the worker before the Observable is subscribed
	released atomic.Bool
}

func (h *slotHold) release() {
	if p := h.p.Load(); p != nil && h.released.CompareAndSwap(false, true) {
		p.release()
	}
}

// runReturned concludes the execution with the user's code's result,
// ended at now, unless the execution has ended meanwhile. inTime says the
// caller still waited when it ended (see classifyInTime).
func (s *subscription[In, Out]) runReturned(v Out, err error, now int64, inTime bool) {
	s.mu.Lock()
	if s.phase != phaseRunning {
		s.mu.Unlock()
		return // cancelled or timed out: the result is dropped
	}
	var o outcome
	switch {
	case s.leftErr() != nil:
		o = outcomeCancelled
	case inTime && err == nil:
		o = outcomeSuccess
	default:
		o = classifyTimed(context.Background(), s.deadline != nil && s.deadline.expiredAt(now), err)
	}
	switch failure, cause := s.e.concluded(o, err, now); failure {
	case noFailure:
		s.end(now, v, nil)
	case runCancelled:
		var zero Out
		s.end(now, zero, s.leftErr())
	default:
		s.fallBack(failure, cause)
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
		// goes back now, and the worker recycles the call.
		s.pl.release()
	}
}

// fallBack is the fallback stage for the subscriber, entered under s.mu,
// which it releases: the fallback runs without it, and what it produces
// is dropped if the subscriber left meanwhile.
func (s *subscription[In, Out]) fallBack(failure FailureType, cause error) {
	var zero Out
	if failure == BadRequestFailure {
		s.end(s.e.endTime(), zero, s.e.badRequest(cause))
		return
	}
	cmdErr, ok := fallbackPermitted(&s.e, s.c.hasFallback(), failure, cause)
	if !ok {
		s.end(s.e.endTime(), zero, cmdErr)
		return
	}
	s.phase = phaseFallingBack
	s.mu.Unlock()
	if s.c.fallbackObs == nil {
		v, err := callFallback(s.c.fallback, s.callerCtx, s.in, cmdErr)
		s.fallbackEnded(cmdErr, v, err)
		return
	}
	src := constructFallback(s.c.fallbackObs, s.callerCtx, s.in, cmdErr)
	src.Subscribe(s.fallbackContext(), &fallbackObserver[In, Out]{s: s, cmdErr: cmdErr})
}

// fallbackEnded concludes the execution with the fallback's result (its
// value is told with it, for a Command), unless it ended meanwhile.
func (s *subscription[In, Out]) fallbackEnded(cmdErr *Error, v Out, err error) {
	s.mu.Lock()
	if s.phase != phaseFallingBack {
		s.mu.Unlock()
		return
	}
	if err = s.e.fallbackDone(cmdErr, err); err != nil {
		var zero Out
		v = zero
	}
	s.end(s.e.endTime(), v, err)
}

// value tells the subscriber a value of the user's Observable or its
// fallback's, after marking it, unless the execution has ended.
func (s *subscription[In, Out]) value(v Out, event metricsstream.EventType, phase int) {
	s.mu.Lock()
	if s.phase != phase {
		s.mu.Unlock()
		return
	}
	s.e.mark(event)
	var timer clock.Timer
	if !s.emitted {
		s.emitted = true
		timer, s.timer = s.timer, nil
	}
	s.telling = true
	s.mu.Unlock()
	if timer != nil {
		timer.Stop()
	}
	s.stream.OnNext(v)
	s.mu.Lock()
	s.telling = false
	due := s.due
	s.due = nil
	s.mu.Unlock()
	if due != nil {
		var zero Out
		s.tell(zero, due.err)
	}
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
	telling := s.telling
	if telling {
		s.due = &endNote{err: err}
	}
	s.mu.Unlock()
	if timer != nil {
		timer.Stop()
	}
	stopAll(unwatch)
	if s.deadline != nil {
		s.deadline.end()
	}
	if s.fbCtx != nil {
		s.fbCtx.end()
	}
	if !telling {
		s.tell(v, err)
	}
}

// tell tells the subscriber the terminal event.
func (s *subscription[In, Out]) tell(v Out, err error) {
	switch {
	case s.single != nil:
		s.single.OnResult(v, err)
	case err != nil:
		s.stream.OnError(err)
	default:
		s.stream.OnCompleted()
	}
}

// bodyObserver is the subscription as the observer of an
// ObservableCommand's Observable.
type bodyObserver[In, Out any] subscription[In, Out]

func (b *bodyObserver[In, Out]) OnNext(v Out) {
	(*subscription[In, Out])(b).value(v, metricsstream.Emit, phaseRunning)
}

func (b *bodyObserver[In, Out]) OnError(err error) {
	s := (*subscription[In, Out])(b)
	s.slot.release()
	var zero Out
	s.runReturned(zero, err, s.c.k.registry.now(), true)
}

func (b *bodyObserver[In, Out]) OnCompleted() {
	s := (*subscription[In, Out])(b)
	s.slot.release()
	var zero Out
	s.runReturned(zero, nil, s.c.k.registry.now(), true)
}

// fallbackObserver is the subscription as the observer of an Observable
// fallback.
type fallbackObserver[In, Out any] struct {
	s      *subscription[In, Out]
	cmdErr *Error
}

func (f *fallbackObserver[In, Out]) OnNext(v Out) {
	f.s.value(v, metricsstream.FallbackEmit, phaseFallingBack)
}

func (f *fallbackObserver[In, Out]) OnError(err error) {
	var zero Out
	f.s.fallbackEnded(f.cmdErr, zero, err)
}

func (f *fallbackObserver[In, Out]) OnCompleted() {
	var zero Out
	f.s.fallbackEnded(f.cmdErr, zero, nil)
}

// constructFallback returns the fallback's Observable, with a panic in
// fallback or while its Observable is subscribed turned into an error.
func constructFallback[In, Out any](fallback func(context.Context, In, error) observable.Observable[Out], ctx context.Context, in In, cmdErr error) (src observable.Observable[Out]) {
	defer func() {
		if v := recover(); v != nil {
			src = observable.Error[Out](newPanicError(v))
		}
	}()
	return recoverSubscribe(fallback(ctx, in, cmdErr))
}

// leftErr returns the error of the subscriber's or the caller's context,
// whichever has ended, or nil.
func (s *subscription[In, Out]) leftErr() error {
	if err := s.subCtx.Err(); err != nil {
		return err
	}
	return s.callerCtx.Err()
}

// fallbackContext returns the context an Observable fallback is
// subscribed with, which the subscription ends as it ends run's.
func (s *subscription[In, Out]) fallbackContext() context.Context {
	if neverEnds(s.callerCtx, s.subCtx) {
		return s.subCtx
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.phase == phaseDone {
		return s.subCtx // ended: what the fallback emits is dropped
	}
	s.fbCtx = newCommandContext(valuesOf(s.subCtx, s.callerCtx), s.c.k.registry.clock, 0, 0)
	return s.fbCtx
}

// neverEnds reports whether the caller's context adds nothing to the
// subscriber's: it never ends, or it is the subscriber's.
func neverEnds(callerCtx, subCtx context.Context) bool {
	return callerCtx == subCtx || callerCtx.Done() == nil
}

// valuesOf returns a context whose values are looked up in sub, then in
// caller.
func valuesOf(sub, caller context.Context) context.Context {
	if caller == sub || caller == context.Background() {
		return sub
	}
	return valuesFrom{Context: sub, caller: caller}
}
