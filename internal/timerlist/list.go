// Package timerlist keeps many deadlines of a clock on a few clock
// timers: lists of entries in the order they are due, each with a timer
// armed for its earliest. An entry whose owner is done before it is due
// (nearly every command's timeout, nearly every hedge's delay) takes
// itself out of its list and leaves the timer alone, so a deadline that
// does not pass touches no runtime timer; the timer, once it fires,
// re-arms itself for the earliest entry still waiting, if any.
//
// A runtime timer and a function value per deadline, armed and stopped on
// every call, were 13 % of a passing hedged call (bench/peers
// rxhystrix-semaphore-hedge) and about 10 % of a pool-isolated
// Queue(...).Get with a 1 s timeout (rxhystrix-pool-queue).
//
// An entry goes in after the last entry due no later, found walking back
// from the tail: at once when the entries of a list share one timeout,
// past the entries due later otherwise. Those are deadlines still
// pending, so their number is bounded by the executions and races in
// flight, spread over a clock's lists.
package timerlist

import (
	"reflect"
	"sync"
	"time"
	"unsafe"

	"github.com/rxhystrix/rxhystrix/internal/clock"
)

// Expirer is told when its entry comes due.
type Expirer interface {
	// Expire is called with the time (Unix nanoseconds) the entry was due
	// at, on the goroutine of the list's timer: a Manual clock's mover,
	// or a goroutine of the real clock's timer that tells every entry due
	// at once in turn. It must return promptly; an owner with slow work to
	// do starts it on a goroutine of its own.
	Expire(due int64)
}

// List is the entries of one clock timer, in the order they are due.
type List struct {
	clock clock.Clock

	mu         sync.Mutex
	head, tail *Entry
	timer      clock.Timer // made by the first arm
	armedFor   int64       // when timer fires (unix ns), if armed
	armed      bool        // timer is armed: armedFor holds (0 is a time too, the epoch)
	_          [64]byte    // the next list's lock is another cache line
}

// Entry is a deadline's place in a list, embedded in its owner. The zero
// value is ready to use.
type Entry struct {
	prev, next *Entry
	due        int64 // unix ns
	queued     bool
	list       *List
	owner      Expirer
}

// shards is how many Lists serve a clock (1<<shardBits); an entry takes
// one by its address (PickFor). With one for all, 75 callers hedging on
// two processors queued on its lock, and a hedged call cost as much as
// with a timer of its own (bench/peers rxhystrix-semaphore-hedge, c=75).
const (
	shardBits = 4
	shards    = 1 << shardBits
)

// Set is the Lists of a clock.
type Set [shards]List

// sets holds the Set of each clock but Real: a test's manual clocks'.
var sets sync.Map // clock.Clock → *Set

// realSet is Real's, which For finds without a map lookup: the lookup was
// about 3 % of a passing hedged call (bench/peers
// rxhystrix-semaphore-hedge, in the profile of that row).
var realSet = NewSet(clock.Real)

// NewSet returns a Set of c's own, for an owner that outlives its
// entries (a command registry) and can keep it.
func NewSet(c clock.Clock) *Set {
	s := new(Set)
	for i := range s {
		s[i].clock = c
	}
	return s
}

// For returns the Set shared by everyone on c that keeps none of its own.
// A clock that cannot be a map key (a struct of the caller's with a func
// field, say) shares none: For returns a Set of its own each time.
func For(c clock.Clock) *Set {
	if c == clock.Real {
		return realSet
	}
	if !hashable(c) {
		return NewSet(c)
	}
	set, ok := sets.Load(c)
	if !ok {
		set, _ = sets.LoadOrStore(c, NewSet(c))
	}
	return set.(*Set)
}

// hashable reports whether c can be a key of sets. A pointer, as a
// Manual clock is, always can, and is told without reflect.ValueOf, which
// costs an allocation per hedged execution on such a clock
// (TestHedgedExecuteAllocatesOnlyTheFirstAttemptsContext).
func hashable(c clock.Clock) bool {
	if reflect.TypeOf(c).Kind() == reflect.Pointer {
		return true
	}
	return reflect.ValueOf(c).Comparable()
}

// PickFor returns the List of the set that e goes in, chosen by a hash of
// e's address: the entries in flight, each in its own owner, spread over
// the Lists as a random choice spreads them, for a multiplication where
// math/rand/v2's N was about 2 % of a passing hedged call (bench/peers
// rxhystrix-semaphore-hedge, in the profile of that row).
func (s *Set) PickFor(e *Entry) *List {
	h := uint64(uintptr(unsafe.Pointer(e))) * 0x9e3779b97f4a7c15 // 2⁶⁴/φ
	return &s[h>>(64-shardBits)]
}

// Add puts e in the list, due at due (unix ns), for owner, and arms the
// timer for it if it is the earliest. When it arms the timer, it reports
// whether the clock reads due already: a Manual clock fires a timer set
// to a time it has reached only when it next moves, so a caller that must
// act at once does so itself (and calls Stop). When the timer is armed
// already, for no later time, it reports false without reading the clock
// (the timer fires e in its turn): a caller that must act at once on a
// Manual clock calls Fire. e must not be in a list.
func (l *List) Add(e *Entry, owner Expirer, due int64) (reached bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e.due, e.queued, e.list, e.owner = due, true, l, owner
	after := l.tail // the entry e goes after: due times mostly grow
	for after != nil && after.due > due {
		after = after.prev
	}
	e.prev = after
	if after == nil {
		e.next, l.head = l.head, e
	} else {
		e.next, after.next = after.next, e
	}
	if e.next == nil {
		l.tail = e
	} else {
		e.next.prev = e
	}
	if l.armed && l.armedFor <= due {
		return false
	}
	l.armedFor, l.armed = due, true
	at := time.Unix(0, due)
	if l.timer == nil {
		l.timer, reached = clock.AfterFuncAt(l.clock, at, l.Fire)
		return reached
	}
	return clock.ResetAt(l.clock, l.timer, at)
}

// Stop takes e out of its list, if it is in one, and reports whether it
// did. Its owner is not told; false means e was never added, or that the
// timer took it out to tell its owner, which it may still be doing.
func (e *Entry) Stop() bool {
	l := e.list
	if l == nil {
		return false
	}
	l.mu.Lock()
	queued := e.queued
	if queued {
		l.unlinkLocked(e)
	}
	l.mu.Unlock()
	return queued
}

func (l *List) unlinkLocked(e *Entry) {
	if e.prev == nil {
		l.head = e.next
	} else {
		e.prev.next = e.next
	}
	if e.next == nil {
		l.tail = e.prev
	} else {
		e.next.prev = e.prev
	}
	e.prev, e.next, e.queued = nil, nil, false
}

// Fire is the list's timer: it takes out every entry that is due,
// re-arms itself for the earliest entry left, and tells the owners,
// outside its lock (an owner told may take its own, and add an entry
// again). A caller whose Add reported the due time reached may call it.
func (l *List) Fire() {
	type due struct {
		owner Expirer
		due   int64
	}
	var buf [8]due
	for {
		now := clock.UnixNano(l.clock)
		fired := buf[:0]
		l.mu.Lock()
		l.armed = false
		for e := l.head; e != nil && e.due <= now; e = l.head {
			l.unlinkLocked(e)
			fired = append(fired, due{e.owner, e.due})
		}
		reached := false
		if l.head != nil {
			l.armedFor, l.armed = l.head.due, true
			reached = clock.ResetAt(l.clock, l.timer, time.Unix(0, l.head.due))
		}
		l.mu.Unlock()
		for _, f := range fired {
			f.owner.Expire(f.due)
		}
		if !reached {
			return
		}
	}
}

// Waiting returns how many entries the set's lists hold: deadlines not
// yet due whose owners have not taken them out. Each holds its owner, so
// an owner done with its deadline must take it out (Stop) rather than
// leave it until it is due; tests check that none is left behind.
func (s *Set) Waiting() int {
	n := 0
	for i := range s {
		l := &s[i]
		l.mu.Lock()
		for e := l.head; e != nil; e = e.next {
			n++
		}
		l.mu.Unlock()
	}
	return n
}
