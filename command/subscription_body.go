package command

import (
	"context"
	"sync/atomic"

	"github.com/rxhystrix/rxhystrix/metricsstream"
	"github.com/rxhystrix/rxhystrix/observable"
)

// How a subscription runs the user's code on a pool worker, and an
// ObservableCommand's stream and Observable fallback: their values are
// told as they come.

// subscribeBody subscribes an ObservableCommand's Observable, with a
// panic in construct or while it is subscribed turned into its error.
// With wait (on a pool worker), it returns once the Observable has
// terminated or ctx has ended. An Observable that is a synchronous
// observable.Single hands its result over directly (bench/peers
// rxhystrix-*-observable-command).
func (s *subscription[In, Out]) subscribeBody(ctx context.Context, wait bool) {
	src := s.c.body(ctx, s.e.cfg, s.in)
	if one, ok := src.AsSingle(); ok && !one.Async() {
		v, err := callSingle(one, ctx)
		end := s.c.k.registry.now()
		s.slot.release(end) // the user's code is done, as a Command's run is when it returns
		if err == nil {
			(*bodyObserver[In, Out])(s).OnNext(v)
		}
		var zero Out
		s.runReturned(zero, err, end, true)
		return
	}
	subscribeSafely(ctx, src, (*bodyObserver[In, Out])(s), wait, &s.theirs)
}

// runOnWorker runs the user's code on the pool worker that took the call,
// and frees the slot as soon as the code is done, before the execution is
// concluded: a caller that submits again at once finds the slot free, and
// the run waiting first in the queue starts on a worker of its own (exit),
// not once this one has concluded the execution (told the subscriber, run
// the fallback).
func (s *subscription[In, Out]) runOnWorker(p *pool, ctx context.Context, in In) {
	c := s.c
	if c.run != nil {
		out, err := c.callUser(ctx, s.e.cfg, in)
		end := c.k.registry.now()
		p.exit(end)
		s.runReturned(out, err, end, true)
		return
	}
	// An ObservableCommand's Observable holds the worker until it
	// terminates (or the subscriber leaves).
	s.slot.p.Store(p)
	s.subscribeBody(ctx, true)
	s.slot.release(unread)
}

// slotHold is a pool slot held by an ObservableCommand's worker, freed
// once: at the user's Observable's terminal event, or when the worker
// stops waiting for it.
type slotHold struct {
	p        atomic.Pointer[pool] // set by the worker before the Observable is subscribed
	released atomic.Bool
}

// release frees the slot, if the worker has set it and it is still held,
// for user code that returned at end (unread: the pool reads its clock),
// and starts the run waiting first in the queue, if any, as runOnWorker
// does.
func (h *slotHold) release(end int64) {
	if p := h.p.Load(); p != nil && h.released.CompareAndSwap(false, true) {
		p.exit(end)
	}
}

// value tells the subscriber a value of the user's Observable or its
// fallback's, after marking it, unless the execution has ended: then the
// value is dropped.
func (s *subscription[In, Out]) value(v Out, event metricsstream.EventType, phase int) {
	s.mu.Lock()
	if s.phase != phase {
		s.mu.Unlock()
		s.c.drop(v, nil) // the execution has ended: nobody waits for it
		return
	}
	s.e.mark(event)
	first := !s.emitted
	s.emitted = true
	s.teller.begin()
	s.mu.Unlock()
	if first {
		s.timeout.Stop()
		if s.deadline != nil {
			s.deadline.disarm() // the stream may run past the timeout's time
		}
	}
	s.tellNext(v)
	s.mu.Lock()
	due := s.teller.done()
	s.mu.Unlock()
	if due != nil {
		var zero Out
		s.tell(zero, due.err)
	}
}

// tellNext tells the subscriber v. A panic in its OnNext (or in an
// operator's function downstream) is the subscriber's, not the user's
// Observable's: the execution ends CANCELLED, its permits back, with no
// terminal event told (the teller keeps it), and the panic goes on to the
// subscriber, past the recovers of the user's code (theirs), as a panic
// in an operator's function propagates in package observable.
func (s *subscription[In, Out]) tellNext(v Out) {
	told := false
	defer func() {
		if told {
			return
		}
		p := recover()
		if p == nil {
			return // runtime.Goexit
		}
		s.theirs.Store(true)
		s.cancel()
		panic(p)
	}()
	s.stream.OnNext(v)
	told = true
}

// bodyObserver is the subscription as the observer of an
// ObservableCommand's Observable.
type bodyObserver[In, Out any] subscription[In, Out]

func (b *bodyObserver[In, Out]) OnNext(v Out) {
	(*subscription[In, Out])(b).value(v, metricsstream.Emit, phaseRunning)
}

func (b *bodyObserver[In, Out]) OnError(err error) {
	s := (*subscription[In, Out])(b)
	end := s.c.k.registry.now()
	s.slot.release(end)
	var zero Out
	s.runReturned(zero, err, end, true)
}

func (b *bodyObserver[In, Out]) OnCompleted() {
	s := (*subscription[In, Out])(b)
	end := s.c.k.registry.now()
	s.slot.release(end)
	var zero Out
	s.runReturned(zero, nil, end, true)
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

// subscribeFallback subscribes an ObservableCommand's Observable
// fallback, with a panic in fallback or while its Observable is
// subscribed turned into its error. A fallback that is a synchronous
// observable.Single (WithFallback's) hands its result over directly, as
// the user's Observable does (subscribeBody): a value it gives once the
// execution has ended is dropped here, and handed to WithDiscard's
// function, where a subscription would drop it unseen.
func (s *subscription[In, Out]) subscribeFallback(ctx context.Context, cmdErr *Error) {
	src := fallbackBody(s.c.fallbackObs, ctx, s.in, cmdErr)
	if one, ok := src.AsSingle(); ok && !one.Async() {
		v, err := callSingle(one, ctx)
		if err == nil {
			s.value(v, metricsstream.FallbackEmit, phaseFallingBack)
		}
		var zero Out
		s.fallbackEnded(cmdErr, zero, err)
		return
	}
	recoverSubscribe(src, &s.theirs).Subscribe(ctx, &fallbackObserver[In, Out]{s: s, cmdErr: cmdErr})
}

// fallbackBody returns the fallback's Observable, or the Observable of
// the *PanicError fallback panicked with.
func fallbackBody[In, Out any](fallback func(context.Context, In, error) observable.Observable[Out], ctx context.Context, in In, cmdErr error) (src observable.Observable[Out]) {
	defer func() {
		if v := recover(); v != nil {
			src = observable.Error[Out](newPanicError(v))
		}
	}()
	return fallback(ctx, in, cmdErr)
}
