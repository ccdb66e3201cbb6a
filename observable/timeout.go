package observable

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/rxhystrix/rxhystrix/internal/clock"
)

// Timeout returns an Observable that fails with ErrTimeout if o neither
// emits a value nor terminates within d of the subscription. It is
// [Observable.TimeoutOn] on the real clock.
func (o Observable[T]) Timeout(d time.Duration) Observable[T] {
	return o.TimeoutOn(d, clock.Real)
}

// TimeoutOn returns an Observable that fails with ErrTimeout if o neither
// emits a value nor terminates within d, measured on c, of the
// subscription. c is rxhystrix's own clock, so that its packages can test
// timeouts on a manual clock; code outside this module uses Timeout.
//
// This is Hystrix's timeout operator: the timer is armed when the
// subscription starts (so time spent waiting for a scheduler counts) and
// disarmed by the first notification, after which o runs unbounded. When
// the timer fires first, the subscription to o ends (o sees its context
// done, with context.DeadlineExceeded), ErrTimeout is delivered on the
// timer's goroutine, and anything o emits afterwards is dropped (a
// value of a [Discarder] Single is discarded). The context o sees
// reports the deadline.
//
// A source that blocks the subscribing goroutine keeps blocking it: the
// error is delivered on time, but a caller waiting in First (say) on that
// same goroutine returns only when the source does. Subscribe on another
// goroutine ([Observable.SubscribeOn]) to return at the timeout.
//
// It panics if d is negative or c is nil.
func (o Observable[T]) TimeoutOn(d time.Duration, c clock.Clock) Observable[T] {
	if d < 0 {
		panic(fmt.Sprintf("observable: Timeout with negative d (%v)", d))
	}
	if c == nil {
		panic("observable: TimeoutOn with nil c")
	}
	return Observable[T]{src: sourceFunc[T](func(s *scope, down Observer[T]) {
		t := &timeoutObserver[T]{down: down, src: o.one}
		t.upWatch.deadline = c.Now().Add(d)
		t.up.w.Store(&t.upWatch)
		t.up.init(s)
		t.timer = c.AfterFunc(d, t.fire)
		t.stopTimer.target = t
		if !t.up.addHook(&t.stopTimer) {
			t.timer.Stop()
			return
		}
		defer t.disarmUnlessSubscribed()
		o.run(&t.up, t)
		t.subscribed = true
	})}
}

// disarmUnlessSubscribed, deferred around the subscription of o, disarms
// the timeout if o panicked while it was subscribed: the panic goes on
// to the subscriber, and nothing is told after it, ErrTimeout included.
func (t *timeoutObserver[T]) disarmUnlessSubscribed() {
	if !t.subscribed && t.state.CompareAndSwap(timeoutArmed, timeoutPassed) {
		t.timer.Stop()
	}
}

// The states of a timeout.
const (
	timeoutArmed    int32 = iota // waiting for the first notification
	timeoutPassed                // o notified in time
	timeoutTimedOut              // the timer fired first
)

// timeoutObserver races o's first notification against its timer; up is
// the scope it gives o.
type timeoutObserver[T any] struct {
	up         scope
	upWatch    scopeWatch
	state      atomic.Int32
	timer      clock.Timer
	stopTimer  hook // on up: stops the timer when up ends
	down       Observer[T]
	src        Single[T] // o's, if it is one: a late value is discarded by it
	subscribed bool      // o's subscription returned; read by the subscribing goroutine alone
}

// pass reports whether a notification from o may go downstream.
func (t *timeoutObserver[T]) pass() bool {
	switch t.state.Load() {
	case timeoutPassed:
		return true
	case timeoutTimedOut:
		return false
	}
	if t.state.CompareAndSwap(timeoutArmed, timeoutPassed) {
		t.timer.Stop()
		return true
	}
	return t.state.Load() == timeoutPassed
}

func (t *timeoutObserver[T]) fire() {
	if t.state.CompareAndSwap(timeoutArmed, timeoutTimedOut) {
		t.up.cancel(context.DeadlineExceeded)
		t.down.OnError(ErrTimeout)
	}
}

// scopeEnded stops the timer when the subscription ends first. A
// timeout still armed then counts as passed by nobody: what o emits
// afterwards is dropped, and a value of a Discarder Single discarded,
// as after the timeout, rather than passed to a subscriber that can only
// drop it.
func (t *timeoutObserver[T]) scopeEnded(error) {
	t.state.CompareAndSwap(timeoutArmed, timeoutTimedOut)
	t.timer.Stop()
}

func (t *timeoutObserver[T]) OnNext(v T) {
	if t.pass() {
		t.down.OnNext(v)
	} else {
		discardFrom(t.src, v)
	}
}

// A terminal event passed on releases up, as Take's does: up is always
// watched (its hook stops the timer), so it stays linked into the scope
// above until it ends, and in a scope that outlives o (a FlatMap's, a
// Concat's) every Timeout that finished would stay there with its
// observers.

func (t *timeoutObserver[T]) OnError(err error) {
	if t.pass() {
		t.down.OnError(err)
		t.up.release()
	}
}

func (t *timeoutObserver[T]) OnCompleted() {
	if t.pass() {
		t.down.OnCompleted()
		t.up.release()
	}
}
