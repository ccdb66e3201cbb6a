package observable

import (
	"math/rand/v2"
	"sync"
	"time"

	"github.com/rxhystrix/rxhystrix/internal/clock"
)

// hedgeTimers is one timer for many hedge races on a clock: the races
// waiting for their next hedge, in the order they are due, and a clock
// timer armed for the earliest. A race that ends before its hedge is due
// (nearly every race: the delay is a high percentile) takes itself out of
// the list and leaves the timer alone, so a hedged call touches no
// runtime timer on its way; the timer, once it fires, re-arms itself for
// the earliest race still waiting, if any. A timer and a function value
// per race, armed and stopped on every call, were 13 % of a passing
// hedged call (bench/peers rxhystrix-semaphore-hedge).
type hedgeTimers struct {
	clock clock.Clock

	mu         sync.Mutex
	head, tail *hedgeWait
	timer      clock.Timer // made by the first arm
	armedFor   int64       // when timer fires (unix ns); 0 if it is not armed
	_          [64]byte    // the next shard's lock is another cache line
}

// hedgeShards is how many hedgeTimers serve a clock. A race takes one at
// random: with one for all, 75 callers hedging on two processors queued
// on its lock, and a hedged call cost as much as with a timer of its own
// (bench/peers rxhystrix-semaphore-hedge, c=75).
const hedgeShards = 16

// hedgeTimerSet is the hedgeTimers of a clock.
type hedgeTimerSet [hedgeShards]hedgeTimers

// hedgeWait is a race's place in the list, embedded in the race.
type hedgeWait struct {
	prev, next *hedgeWait
	due        int64 // unix ns
	queued     bool
	race       interface{ hedgeDue(due int64) }
}

// hedgeTimersByClock holds the hedgeTimerSet of each clock: Real's, and a
// test's manual clocks'.
var hedgeTimersByClock sync.Map // clock.Clock → *hedgeTimerSet

// hedgeTimersOf returns one of c's hedgeTimers, taken at random.
func hedgeTimersOf(c clock.Clock) *hedgeTimers {
	set, ok := hedgeTimersByClock.Load(c)
	if !ok {
		fresh := new(hedgeTimerSet)
		for i := range fresh {
			fresh[i].clock = c
		}
		set, _ = hedgeTimersByClock.LoadOrStore(c, fresh)
	}
	return &set.(*hedgeTimerSet)[rand.N(hedgeShards)]
}

// add puts w in the list, due at due (unix ns), and arms the timer for it
// if it is the earliest. It reports whether the clock reads due already:
// a manual clock fires a timer set to a time it has reached only when it
// next moves, so the caller then fires the list itself.
func (t *hedgeTimers) add(w *hedgeWait, due int64) (reached bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	w.due, w.queued = due, true
	after := t.tail // the wait w goes after: due times mostly grow
	for after != nil && after.due > due {
		after = after.prev
	}
	w.prev = after
	if after == nil {
		w.next, t.head = t.head, w
	} else {
		w.next, after.next = after.next, w
	}
	if w.next == nil {
		t.tail = w
	} else {
		w.next.prev = w
	}
	if t.armedFor != 0 && t.armedFor <= due {
		return false
	}
	t.armedFor = due
	at := time.Unix(0, due)
	if t.timer == nil {
		t.timer, reached = clock.AfterFuncAt(t.clock, at, t.fire)
		return reached
	}
	return clock.ResetAt(t.clock, t.timer, at)
}

// remove takes w out of the list, if it is there.
func (t *hedgeTimers) remove(w *hedgeWait) {
	t.mu.Lock()
	if w.queued {
		t.unlinkLocked(w)
	}
	t.mu.Unlock()
}

func (t *hedgeTimers) unlinkLocked(w *hedgeWait) {
	if w.prev == nil {
		t.head = w.next
	} else {
		w.prev.next = w.next
	}
	if w.next == nil {
		t.tail = w.prev
	} else {
		w.next.prev = w.prev
	}
	w.prev, w.next, w.queued = nil, nil, false
}

// fire is the timer: it takes out every wait that is due, re-arms itself
// for the earliest wait left, and tells the races, outside its lock (a
// race told takes its own, and may wait again).
func (t *hedgeTimers) fire() {
	type due struct {
		w   *hedgeWait
		due int64
	}
	var buf [8]due
	for {
		now := clock.UnixNano(t.clock)
		fired := buf[:0]
		t.mu.Lock()
		t.armedFor = 0
		for w := t.head; w != nil && w.due <= now; w = t.head {
			t.unlinkLocked(w)
			fired = append(fired, due{w, w.due})
		}
		reached := false
		if t.head != nil {
			t.armedFor = t.head.due
			reached = clock.ResetAt(t.clock, t.timer, time.Unix(0, t.head.due))
		}
		t.mu.Unlock()
		for _, f := range fired {
			f.w.race.hedgeDue(f.due)
		}
		if !reached {
			return
		}
	}
}
