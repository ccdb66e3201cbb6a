package observable

import (
	"context"
	"sync"
)

// ReplayNow subscribes to o at once, with ctx, and returns a hot
// Observable that replays everything o emitted, and its terminal event,
// to every subscriber, whenever it subscribes: Hystrix's observe, or
// RxJava's replay().autoConnect(0) with a reference count. The
// subscription to o is cancelled when ctx ends, and when every subscriber
// that came has left before o terminated: a result nobody waits for any
// more is not worth finishing. A subscriber that comes after that
// receives context.Canceled, or ctx's error: a value o gives as the
// cancellation reaches it is not replayed, and goes to its Discard if o is
// a [Discarder] Single. Until the first subscriber comes, o runs on
// regardless, as a fire-and-forget.
//
// The subscription to o is made on the caller's goroutine: a synchronous
// o has run to its end when ReplayNow returns.
func (o Observable[T]) ReplayNow(ctx context.Context) Observable[T] {
	if s, ok := singleOf(o); ok {
		switch q := s.(type) {
		case scheduledSingle[T]:
			return replayOne(ctx, q.s, q.sch)
		case discardingScheduledSingle[T]:
			return replayOne(ctx, q.s, q.sch)
		}
		return replayOne(ctx, s, Immediate)
	}
	r := &replayNow[T]{ctx: ctx}
	r.subject.kind = replaySubject
	// A subscription that ends before o terminates (ctx ended, or every
	// subscriber left) ends the subject with the reason: whatever o emits
	// after that is dropped. Finally, not DoOnUnsubscribe: a terminal
	// event that has passed this point as the subscription is cancelled
	// is dropped by the subscriber, and the subject must still end (once
	// it has, endCancelled does nothing).
	r.sub = o.Finally(r.endCancelled).Subscribe(ctx, &r.subject)
	if ctx != nil && ctx.Err() != nil {
		// ctx may have ended before o could be subscribed, and then
		// nothing above ends the subject.
		r.endCancelled()
	}
	return Observable[T]{src: r}
}

// ReplayNowOn is ReplayNow of o.SubscribeOn(sch): it subscribes to o at
// once, on sch, and replays. Hystrix's observe of a command that runs on
// its caller's thread is ReplayNowOn(ctx, NewGoroutine) in Go, where it
// must not block its caller; for a Single, this makes nothing in between
// (bench/peers rxhystrix-semaphore-observe).
//
// It panics if sch is nil.
func (o Observable[T]) ReplayNowOn(ctx context.Context, sch Scheduler) Observable[T] {
	if sch == nil {
		panic("observable: ReplayNowOn with nil sch")
	}
	if s, ok := singleOf(o); ok {
		return replayOne(ctx, s, sch)
	}
	return o.SubscribeOn(sch).ReplayNow(ctx)
}

// replayNow is what ReplayNow returns: the subject that replays, the
// subscription it is fed by, and the count of its subscribers.
type replayNow[T any] struct {
	subject Subject[T]
	sub     Subscription
	ctx     context.Context // ReplayNow's

	mu        sync.Mutex
	live      int  // subscribers whose subscriptions have not ended
	cancelled bool // the last subscriber left before o terminated
}

// endCancelled ends the subject, unless o's terminal event has reached
// it, when the subscription to o has ended: with ctx's error, or
// context.Canceled.
func (r *replayNow[T]) endCancelled() {
	err := context.Canceled
	if r.ctx != nil && r.ctx.Err() != nil {
		err = r.ctx.Err()
	}
	r.subject.OnError(err)
}

func (r *replayNow[T]) subscribe(s *scope, down Observer[T]) {
	r.mu.Lock()
	r.live++
	r.mu.Unlock()
	u := &endObserver[T]{s: s, onCancel: r.left, onTerminate: r.ended, down: down}
	u.watch()
	r.subject.subscribe(s, u)
}

// ended is a subscriber's terminal event passed on.
func (r *replayNow[T]) ended() {
	r.mu.Lock()
	r.live--
	r.mu.Unlock()
}

// left is a subscriber leaving before its terminal event: the last one to
// leave cancels the subscription to o, unless o has terminated.
func (r *replayNow[T]) left() {
	r.mu.Lock()
	r.live--
	cancel := r.live == 0 && !r.cancelled && !r.terminated()
	if cancel {
		r.cancelled = true
	}
	r.mu.Unlock()
	if cancel {
		r.sub.Unsubscribe()
	}
}

// terminated reports whether o's terminal event has reached the subject.
func (r *replayNow[T]) terminated() bool {
	r.subject.mu.Lock()
	defer r.subject.mu.Unlock()
	return r.subject.terminated
}
