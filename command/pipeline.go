package command

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rxhystrix/rxhystrix/metricsstream"
	"github.com/rxhystrix/rxhystrix/observable"
)

// pipeline builds the Observable of an ObservableCommand, whose user code
// is an Observable of any number of values, stage by stage as Hystrix's
// AbstractCommand.toObservable does for a HystrixObservableCommand; it
// calls the stages of stages.go as a Command's drivers do, with the
// operators a stream needs between them:
//
//	Defer(applyHystrixSemantics)        breaker, then execution permit
//	  executeCommandWithIsolation       the user's Observable, on a pool worker or the caller
//	    timeout                         HystrixObservableTimeoutOperator
//	    DoOnNext / DoOnCompleted        EMIT, SUCCESS, breaker.MarkSuccess
//	    OnErrorResumeNext(fallback)     the failure's event, breaker.MarkNonSuccess, the fallback
//	  DoOnTerminate / DoOnUnsubscribe   one Completion, every permit back, CANCELLED
type pipeline[In, Out any] struct {
	k *keyState
	// construct returns the user's Observable for in, with ctx as its
	// context (the timeout and the caller's cancellation reach it there).
	construct func(ctx context.Context, in In) observable.Observable[Out]
	// fallback returns the fallback's Observable, or nil when there is none.
	fallback func(ctx context.Context, in In, err error) observable.Observable[Out]
	poolKey  func(In) string
}

// signals that the isolation and timeout stages raise inside the pipeline;
// the fallback stage turns them into events and *Error values.
var (
	errPoolRejectedSignal = errors.New("pool rejected the run")
	errTimeoutSignal      = errors.New("run timed out")
)

// run is the per-subscription state of the pipeline: one execution, and
// the lock that serializes the goroutines that may touch it (the caller,
// a pool worker, the timer, an unsubscriber).
type run struct {
	mu   sync.Mutex
	e    execution
	left bool // the subscriber left before the execution began
}

func (r *run) do(f func(e *execution)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f(&r.e)
}

func (p *pipeline[In, Out]) state() *keyState { return p.k }

func (p *pipeline[In, Out]) observeRecorded(ctx context.Context, in In, rec executionRecorder) observable.Observable[Out] {
	return p.observableEnded(ctx, in, rec)
}

// observableEnded returns the cold Observable of one execution per
// subscription; rec, when not nil, sees each execution once it has ended,
// just before its Completion is published (the request log and cache use
// it).
//
// The stages that end the execution (DoOnTerminate, DoOnUnsubscribe) are
// in place before the execution begins: a subscriber that leaves while the
// breaker, the permits and the fallback permit are being taken still ends
// it, once, with its Completion and every permit back. One that left
// before it began ends nothing, since nothing began.
func (p *pipeline[In, Out]) observableEnded(callerCtx context.Context, in In, rec executionRecorder) observable.Observable[Out] {
	return observable.Defer(func() observable.Observable[Out] {
		r := &run{}
		return observable.DeferContext(func(subCtx context.Context) observable.Observable[Out] {
			var gone bool
			r.do(func(e *execution) {
				if gone = r.left || subCtx.Err() != nil; !gone {
					e.begin(p.k)
				}
			})
			if gone {
				return observable.Never[Out]()
			}
			return p.applySemantics(callerCtx, subCtx, r, in)
		}).
			DoOnTerminate(func() {
				r.do(func(e *execution) {
					if e.finished || e.k == nil {
						return
					}
					if rec != nil {
						rec.recordExecution(e.logRecord())
					}
					e.finish(e.endTime())
				})
			}).
			DoOnUnsubscribe(func() {
				r.do(func(e *execution) {
					if e.k == nil {
						r.left = true // before it began
						return
					}
					if e.finished {
						return
					}
					now := p.k.registry.now()
					e.cancelled(now)
					if rec != nil {
						rec.recordExecution(e.logRecord())
					}
					e.finish(now)
				})
			})
	})
}

// applySemantics asks the breaker, then the execution semaphore, then
// runs the user's Observable under isolation and timeout. When the
// subscriber has left (subCtx is done) since the execution began, nothing
// more is taken: the cancellation ends the execution.
func (p *pipeline[In, Out]) applySemantics(ctx, subCtx context.Context, r *run, in In) observable.Observable[Out] {
	var failure FailureType = -1
	var semaphore, gone bool
	r.do(func(e *execution) {
		semaphore = e.cfg.Isolation == SemaphoreIsolation
		switch {
		case e.finished || subCtx.Err() != nil:
			gone = true
		case !e.attempt():
			failure = ShortCircuitFailure
		case semaphore && !e.acquire():
			failure = SemaphoreRejectedFailure
		}
	})
	if gone {
		return observable.Never[Out]() // the cancellation ends it
	}
	if failure >= 0 {
		return p.handleFallback(ctx, r, in, failure, failure.sentinel())
	}
	return p.executeAndObserve(ctx, r, in, semaphore)
}

// executeAndObserve runs the user's Observable and marks what it does.
func (p *pipeline[In, Out]) executeAndObserve(ctx context.Context, r *run, in In, semaphore bool) observable.Observable[Out] {
	var exec observable.Observable[Out]
	if semaphore {
		exec = p.onCaller(ctx, r, in)
	} else {
		exec = p.inPool(ctx, r, in)
	}
	var timeout time.Duration
	r.do(func(e *execution) { timeout = e.cfg.Timeout })
	if timeout > 0 {
		exec = p.withTimeout(exec, timeout)
	}
	return exec.
		DoOnNext(func(Out) {
			r.do(func(e *execution) { e.mark(metricsstream.Emit) })
		}).
		DoOnCompleted(func() {
			r.do(func(e *execution) { e.concluded(outcomeSuccess, nil, p.k.registry.now()) })
		}).
		OnErrorResumeNext(func(err error) observable.Observable[Out] {
			var failure FailureType
			var cancelled bool
			r.do(func(e *execution) {
				now := p.k.registry.now()
				switch {
				case errors.Is(err, errPoolRejectedSignal):
					e.poolRejected()
					failure, err = PoolRejectedFailure, ErrPoolRejected
				case errors.Is(err, errTimeoutSignal):
					failure, err = e.concluded(outcomeTimeout, nil, now)
				case ctx.Err() != nil:
					e.cancelled(now)
					cancelled = true
				case IsBadRequest(err):
					failure, err = e.concluded(outcomeBadRequest, err, now)
				default:
					failure, err = e.concluded(outcomeFailure, err, now)
				}
			})
			if cancelled {
				return observable.Error[Out](ctx.Err())
			}
			return p.handleFallback(ctx, r, in, failure, err)
		})
}

// onCaller subscribes the user's Observable on the caller's goroutine.
// A timeout or an unsubscribe that came first has ended the execution, or
// is ending it on another goroutine: then the user's code does not start,
// as in the pool and as Hystrix's "timed out before executing run()".
func (p *pipeline[In, Out]) onCaller(callerCtx context.Context, r *run, in In) observable.Observable[Out] {
	return observable.Defer(func() observable.Observable[Out] {
		return observable.Create(func(subCtx context.Context, o observable.Observer[Out]) {
			var gone bool
			r.do(func(e *execution) {
				if gone = e.finished || subCtx.Err() != nil; !gone {
					e.runStarted()
				}
			})
			if gone {
				return
			}
			ctx, stop := joinContexts(subCtx, callerCtx)
			if safeSubscribe(ctx, p.construct, in, o, false, ctx != subCtx) {
				stop()
				return
			}
			// The user's Observable runs on, asynchronously: the join lasts
			// as long as the subscription, and a caller who leaves first
			// ends the execution as cancelled.
			context.AfterFunc(ctx, func() { o.OnError(ctx.Err()) })
			context.AfterFunc(subCtx, stop)
		})
	})
}

// safeSubscribe subscribes construct(ctx, in) to o, turning a panic in
// construct or while its Observable is subscribed into an error. With
// wait, it returns only when the subscription has ended, so that a pool
// worker stays taken while the user's Observable runs. With watch (ctx
// joins the caller's context), it reports whether the subscription has
// ended, and if ctx ended first (the caller left), o fails with ctx's
// error, so that the execution ends as cancelled whatever context its
// subscriber has; without, it reports true.
func safeSubscribe[In, Out any](ctx context.Context, construct func(context.Context, In) observable.Observable[Out], in In, o observable.Observer[Out], wait, watch bool) (ended bool) {
	var src observable.Observable[Out]
	func() {
		defer func() {
			if v := recover(); v != nil {
				src = observable.Error[Out](newPanicError(v))
			}
		}()
		src = construct(ctx, in)
	}()
	var sub observable.Subscription
	func() {
		defer func() {
			if v := recover(); v != nil {
				o.OnError(newPanicError(v))
			}
		}()
		sub = src.Subscribe(ctx, o)
	}()
	if sub == nil {
		return true // it panicked, and o has failed
	}
	if wait {
		select {
		case <-sub.Done():
		case <-ctx.Done():
		}
	}
	if !watch {
		return true
	}
	select {
	case <-sub.Done():
	default:
		return false
	}
	if err := ctx.Err(); err != nil {
		o.OnError(err)
	}
	return true
}

// recoverSubscribe returns src with a panic raised while it is subscribed
// turned into a *PanicError: a user's Observable that panics fails the
// execution instead of the process.
func recoverSubscribe[Out any](src observable.Observable[Out]) observable.Observable[Out] {
	return observable.Create(func(ctx context.Context, o observable.Observer[Out]) {
		defer func() {
			if v := recover(); v != nil {
				o.OnError(newPanicError(v))
			}
		}()
		src.Subscribe(ctx, o)
	})
}

// pipelineTask subscribes the user's Observable on a pool worker and holds
// the worker until it terminates.
type pipelineTask struct {
	body     func()
	pool     *pool
	released atomic.Bool
}

func (t *pipelineTask) runTask(p *pool, _ int64) int64 {
	t.pool = p
	t.body()
	t.release()
	return unread
}

// release frees the task's slot, once.
func (t *pipelineTask) release() {
	if t.released.CompareAndSwap(false, true) {
		t.pool.release()
	}
}

// releasingObserver frees the pool slot of its task as soon as the user's
// Observable terminates, before the caller hears of it, as a Command's
// pool worker does: a caller that submits again at once then finds the
// slot free.
type releasingObserver[Out any] struct {
	observable.Observer[Out]
	task *pipelineTask
}

func (r releasingObserver[Out]) OnError(err error) {
	r.task.release()
	r.Observer.OnError(err)
}

func (r releasingObserver[Out]) OnCompleted() {
	r.task.release()
	r.Observer.OnCompleted()
}

// inPool subscribes the user's Observable on a worker of the command's
// pool (Hystrix's subscribeOn(threadPool scheduler)). A full pool raises
// errPoolRejectedSignal; an unsubscribe takes a queued run out of the
// queue.
func (p *pipeline[In, Out]) inPool(callerCtx context.Context, r *run, in In) observable.Observable[Out] {
	return observable.Create(func(subCtx context.Context, o observable.Observer[Out]) {
		var pl *pool
		var start int64
		var err error
		r.do(func(e *execution) {
			pl, err = poolOf(e, p.poolKey, in)
			start = e.start
		})
		if err != nil {
			o.OnError(err) // the execution's failure, as run's would be
			return
		}
		ctx, stop := joinContexts(subCtx, callerCtx)
		t := &pipelineTask{}
		t.body = func() {
			defer stop()
			if err := ctx.Err(); err != nil {
				// The subscriber left as a worker took the run from the
				// queue: the run does not start, and the execution ends as
				// cancelled.
				o.OnError(err)
				return
			}
			var gone bool
			r.do(func(e *execution) {
				if gone = e.finished; !gone {
					e.runStarted()
				}
			})
			if !gone {
				safeSubscribe(ctx, p.construct, in, releasingObserver[Out]{Observer: o, task: t}, true, true)
			}
		}
		pl, submitted := p.k.registry.submit(pl, t, start)
		if !submitted {
			stop()
			o.OnError(errPoolRejectedSignal)
			return
		}
		// A subscriber that leaves takes a queued run out of the queue; a
		// run a worker took already sees the end of ctx when it starts.
		context.AfterFunc(ctx, func() {
			if pl.remove(t) {
				stop()
				o.OnError(ctx.Err())
			}
		})
	})
}

// The states of the timeout operator, as Hystrix's TimedOutStatus.
const (
	timeoutNotExecuted int32 = iota
	timeoutCompleted
	timeoutTimedOut
)

// withTimeout is Hystrix's timeout operator: unless the source emits or
// terminates within d, the source is unsubscribed (its context cancelled)
// and errTimeoutSignal raised. The first event of the source disarms it;
// events after a timeout are dropped.
func (p *pipeline[In, Out]) withTimeout(src observable.Observable[Out], d time.Duration) observable.Observable[Out] {
	return observable.Create(func(ctx context.Context, o observable.Observer[Out]) {
		var state atomic.Int32
		withCause, cancelCause := context.WithCancelCause(ctx)
		cancel := func() { cancelCause(context.Canceled) }
		// run sees the deadline, as under Execute, so that it can pass it
		// on downstream; the timer below decides when it is reached.
		inner := timeoutContext{Context: withCause, deadline: p.k.registry.clock.Now().Add(d)}
		timer := p.k.registry.clock.AfterFunc(d, func() {
			if state.CompareAndSwap(timeoutNotExecuted, timeoutTimedOut) {
				cancelCause(context.DeadlineExceeded)
				o.OnError(errTimeoutSignal)
			}
		})
		notTimedOut := func() bool {
			if state.Load() == timeoutCompleted || state.CompareAndSwap(timeoutNotExecuted, timeoutCompleted) {
				timer.Stop()
				return true
			}
			return false
		}
		src.SubscribeFunc(inner,
			func(v Out) {
				if notTimedOut() {
					o.OnNext(v)
				}
			},
			func(err error) {
				if notTimedOut() {
					o.OnError(err)
				}
				cancel()
			},
			func() {
				if notTimedOut() {
					o.OnCompleted()
				}
				cancel()
			})
	})
}

// timeoutContext is run's context under the pipeline's timeout: it
// reports the deadline, and context.DeadlineExceeded once the timeout
// cancelled it.
type timeoutContext struct {
	context.Context // made by context.WithCancelCause
	deadline        time.Time
}

func (c timeoutContext) Deadline() (time.Time, bool) {
	if d, ok := c.Context.Deadline(); ok && d.Before(c.deadline) {
		return d, true
	}
	return c.deadline, true
}

func (c timeoutContext) Err() error {
	err := c.Context.Err()
	if err != nil && context.Cause(c.Context) == context.DeadlineExceeded {
		return context.DeadlineExceeded
	}
	return err
}

// handleFallback is getFallbackOrThrowException: the failure has been
// recorded; the fallback runs under its semaphore, or the error is
// raised.
func (p *pipeline[In, Out]) handleFallback(ctx context.Context, r *run, in In, failure FailureType, cause error) observable.Observable[Out] {
	if failure == BadRequestFailure {
		r.do(func(e *execution) { e.badRequest(cause) })
		return observable.Error[Out](cause)
	}
	var cmdErr *Error
	var ok, gone bool
	r.do(func(e *execution) {
		// A subscriber that left since the failure has ended the
		// execution: no fallback permit is taken for it.
		if gone = e.finished; !gone {
			cmdErr, ok = fallbackPermitted(e, p.fallback != nil, failure, cause)
		}
	})
	if gone {
		return observable.Never[Out]() // the cancellation ended it
	}
	if !ok {
		return observable.Error[Out](cmdErr)
	}
	return observable.Defer(func() observable.Observable[Out] {
		var src observable.Observable[Out]
		func() {
			defer func() {
				if v := recover(); v != nil {
					src = observable.Error[Out](newPanicError(v))
				}
			}()
			src = p.fallback(ctx, in, cmdErr)
		}()
		return recoverSubscribe(src)
	}).
		DoOnNext(func(Out) {
			r.do(func(e *execution) { e.mark(metricsstream.FallbackEmit) })
		}).
		DoOnCompleted(func() {
			r.do(func(e *execution) { e.fallbackDone(cmdErr, nil) })
		}).
		OnErrorResumeNext(func(err error) observable.Observable[Out] {
			var final error
			r.do(func(e *execution) { final = e.fallbackDone(cmdErr, err) })
			return observable.Error[Out](final)
		})
}

// joinContexts returns a context that is done when either is done and
// whose values are looked up in sub, then in caller.
func joinContexts(sub, caller context.Context) (context.Context, func()) {
	if caller == nil || caller == sub || caller == context.Background() {
		return sub, noop
	}
	if caller.Done() == nil {
		return valuesFrom{Context: sub, caller: caller}, noop
	}
	ctx, cancel := context.WithCancel(valuesFrom{Context: sub, caller: caller})
	stop := context.AfterFunc(caller, cancel)
	return ctx, func() { stop(); cancel() }
}

// valuesFrom looks values up in its Context, then in caller.
type valuesFrom struct {
	context.Context
	caller context.Context
}

func (v valuesFrom) Value(key any) any {
	if x := v.Context.Value(key); x != nil {
		return x
	}
	return v.caller.Value(key)
}

func noop() {}
