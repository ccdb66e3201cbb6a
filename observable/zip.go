package observable

import (
	"context"
	"sync"
	"sync/atomic"
)

// Zip2 returns an Observable that pairs the values of a and b in order and
// emits f(a_i, b_i) for each pair. It completes as soon as one source has
// completed and every value it emitted has been paired, ending the
// subscription to the other, and fails with the first error of either.
// Each source's context ends with its own stream, not the zip's.
// Values waiting for their partner are buffered without bound. a is
// subscribed before b, on the subscribing goroutine; f is called on the
// goroutine of whichever source completed the pair. A value left without
// a partner when the zip ends, or that comes after it ended, is handed to
// its source's Discard if that source is a [Discarder] Single.
//
// It panics if f is nil.
func Zip2[A, B, R any](a Observable[A], b Observable[B], f func(A, B) R) Observable[R] {
	if f == nil {
		panic("observable: Zip2 with nil f")
	}
	if sa, ok := singleOf(a); ok {
		if sb, ok := singleOf(b); ok {
			return FromSingle[R](&zipSingle[A, B, R]{a: sa, b: sb, f: f})
		}
	}
	return Observable[R]{src: &zipSource[A, B, R]{a: a, b: b, f: f}}
}

type zipSource[A, B, R any] struct {
	a Observable[A]
	b Observable[B]
	f func(A, B) R
}

func (zs *zipSource[A, B, R]) subscribe(s *scope, down Observer[R]) {
	z := &zipper[A, B, R]{zs: zs, down: down}
	z.qa.init()
	z.qb.init()
	z.up.init(s)
	z.upA.init(&z.up)
	z.upB.init(&z.up)
	zs.a.run(&z.upA, (*zipA[A, B, R])(z))
	zs.b.run(&z.upB, (*zipB[A, B, R])(z))
}

// zipper pairs the values of both sources. Notifications may come from
// two goroutines at once, so they are serialized the way relay does it:
// the goroutine that takes wip from 0 applies its event, and those of the
// others, which wait in inbox meanwhile; the queues and flags need no
// lock, and a notification nobody competes with costs two atomic
// operations (a mutex cost two per lock, and a pair took two locks).
type zipper[A, B, R any] struct {
	up   scope
	zs   *zipSource[A, B, R]
	down Observer[R]
	// upA and upB, below up, are the scopes a and b run in: each is
	// ended by its source's completion, so that what a source that has
	// completed holds open until its context ends is let go of then, not
	// when the zip ends, once the other source has matched its values.
	upA, upB scope

	wip   atomic.Int64
	mu    sync.Mutex // guards inbox
	inbox []zipEvent[A, B]
	spare []zipEvent[A, B] // owned by the goroutine holding wip

	// Owned by the goroutine holding wip:
	qa           queue[A]
	qb           queue[B]
	doneA, doneB bool
	terminated   atomic.Bool

	// left is hooked into up once a value of a Discarder Single waits
	// in a queue (hooked): the subscriber's leaving then abandons the
	// zip, and so discards the value, even if neither source says
	// anything more (a Create's events after its end are dropped).
	left   hook
	hooked bool // owned by the goroutine holding wip
}

// The kinds of a zipEvent.
const (
	zipNextA = iota
	zipNextB
	zipDoneA
	zipDoneB
	zipError
	zipLeft // up ended: the subscriber left
)

// zipEvent is a notification from either source.
type zipEvent[A, B any] struct {
	kind int
	a    A
	b    B
	err  error
}

// on applies ev now, or leaves it to the goroutine that is applying
// others.
func (z *zipper[A, B, R]) on(ev zipEvent[A, B]) {
	if z.terminated.Load() {
		z.drop(ev)
		return
	}
	if z.wip.CompareAndSwap(0, 1) {
		z.apply(ev)
		if missed := z.wip.Add(-1); missed != 0 {
			z.loop(missed)
		}
		return
	}
	z.mu.Lock()
	z.inbox = append(z.inbox, ev)
	z.mu.Unlock()
	if z.wip.Add(1) == 1 {
		z.loop(1)
	}
}

// loop applies the waiting events, as relay.loop delivers.
func (z *zipper[A, B, R]) loop(missed int64) {
	for {
		z.mu.Lock()
		evs := z.inbox
		z.inbox = z.spare[:0]
		z.mu.Unlock()
		for _, ev := range evs {
			z.apply(ev)
		}
		clear(evs)
		z.spare = evs
		if missed = z.wip.Add(-missed); missed == 0 {
			return
		}
	}
}

// apply records ev and delivers what it makes deliverable: pairs, and the
// terminal event once there can be no more pairs.
func (z *zipper[A, B, R]) apply(ev zipEvent[A, B]) {
	if z.terminated.Load() {
		z.drop(ev) // the queues were emptied when it terminated
		return
	}
	if !z.up.live() {
		z.drop(ev)
		z.abandon()
		return
	}
	switch ev.kind {
	case zipNextA:
		z.qa.push(ev.a)
		if _, ok := z.zs.a.one.(Discarder[A]); ok && !z.hooked && !z.hookLeft() { // one is nil for a stream
			return
		}
	case zipNextB:
		z.qb.push(ev.b)
		if _, ok := z.zs.b.one.(Discarder[B]); ok && !z.hooked && !z.hookLeft() {
			return
		}
	case zipDoneA:
		z.doneA = true
	case zipDoneB:
		z.doneB = true
	case zipLeft: // not live, so handled above
		return
	default:
		z.terminated.Store(true)
		z.down.OnError(ev.err)
		z.up.cancel(context.Canceled)
		z.dropQueued()
		return
	}
	for z.qa.len() > 0 && z.qb.len() > 0 {
		if !z.up.live() { // a pair before this one was the last wanted (Take)
			z.abandon()
			return
		}
		z.down.OnNext(z.zs.f(z.qa.pop(), z.qb.pop()))
	}
	if (z.doneA && z.qa.len() == 0) || (z.doneB && z.qb.len() == 0) {
		z.terminated.Store(true)
		z.down.OnCompleted()
		z.up.cancel(context.Canceled)
		z.dropQueued()
	}
}

// hookLeft hooks the zip into up's end, for a value of a Discarder
// Single that has just been queued: a value left in the queue when the
// subscriber leaves goes back to its source (see Discarder). It reports
// false, having abandoned the zip, if up has ended already.
func (z *zipper[A, B, R]) hookLeft() bool {
	z.hooked = true
	z.left.target = (*zipLeftHook[A, B, R])(z)
	if !z.up.addHook(&z.left) {
		z.abandon()
		return false
	}
	return true
}

// zipLeftHook is a zipper as the hook told of up's end.
type zipLeftHook[A, B, R any] zipper[A, B, R]

func (z *zipLeftHook[A, B, R]) scopeEnded(error) {
	(*zipper[A, B, R])(z).on(zipEvent[A, B]{kind: zipLeft})
}

// abandon ends the zip for a subscriber that has left, or that has had
// what it wanted: no pair is made for it (the Discarder's doc says so),
// and the values waiting for a partner are nobody's.
func (z *zipper[A, B, R]) abandon() {
	z.terminated.Store(true)
	z.dropQueued()
}

// drop discards the value of an event that comes once the zip has
// terminated, if its source is a [Discarder] Single.
func (z *zipper[A, B, R]) drop(ev zipEvent[A, B]) {
	switch ev.kind {
	case zipNextA:
		discardFrom(z.zs.a.one, ev.a)
	case zipNextB:
		discardFrom(z.zs.b.one, ev.b)
	}
}

// dropQueued discards, as drop does, the values left unpaired when the
// zip terminates. Only apply calls it, so only the goroutine holding wip,
// which is also the only one that sets terminated.
func (z *zipper[A, B, R]) dropQueued() {
	for z.qa.len() > 0 {
		discardFrom(z.zs.a.one, z.qa.pop())
	}
	for z.qb.len() > 0 {
		discardFrom(z.zs.b.one, z.qb.pop())
	}
}

// zipA is a zipper seen as the observer of a.
type zipA[A, B, R any] zipper[A, B, R]

func (z *zipA[A, B, R]) OnNext(v A) {
	(*zipper[A, B, R])(z).on(zipEvent[A, B]{kind: zipNextA, a: v})
}

func (z *zipA[A, B, R]) OnError(err error) {
	(*zipper[A, B, R])(z).on(zipEvent[A, B]{kind: zipError, err: err})
}

func (z *zipA[A, B, R]) OnCompleted() {
	z.upA.cancel(context.Canceled)
	(*zipper[A, B, R])(z).on(zipEvent[A, B]{kind: zipDoneA})
}

// zipB is a zipper seen as the observer of b.
type zipB[A, B, R any] zipper[A, B, R]

func (z *zipB[A, B, R]) OnNext(v B) {
	(*zipper[A, B, R])(z).on(zipEvent[A, B]{kind: zipNextB, b: v})
}

func (z *zipB[A, B, R]) OnError(err error) {
	(*zipper[A, B, R])(z).on(zipEvent[A, B]{kind: zipError, err: err})
}

func (z *zipB[A, B, R]) OnCompleted() {
	z.upB.cancel(context.Canceled)
	(*zipper[A, B, R])(z).on(zipEvent[A, B]{kind: zipDoneB})
}

// queue is a FIFO whose first few values live in the queue itself.
type queue[T any] struct {
	buf  [2]T
	vs   []T
	head int
}

func (q *queue[T]) init()    { q.vs = q.buf[:0] }
func (q *queue[T]) len() int { return len(q.vs) - q.head }

// push appends v. A full slice whose front holds at least as many popped
// slots as values moves its values to the front first, rather than grow:
// a queue that never empties (one source of a zip a value ahead of the
// other) would otherwise grow with every value that passed through it.
func (q *queue[T]) push(v T) {
	if n := len(q.vs); q.head > 0 && n == cap(q.vs) && q.head >= n-q.head {
		m := copy(q.vs, q.vs[q.head:])
		clear(q.vs[m:])
		q.vs, q.head = q.vs[:m], 0
	}
	q.vs = append(q.vs, v)
}

func (q *queue[T]) pop() T {
	v := q.vs[q.head]
	var zero T
	q.vs[q.head] = zero
	q.head++
	if q.head == len(q.vs) {
		q.vs, q.head = q.vs[:0], 0
	}
	return v
}
