package observable

import (
	"fmt"
	"sync"
	"time"

	"github.com/rxhystrix/rxhystrix/internal/clock"
)

// Interval returns an Observable that emits 0, 1, 2, ... every d, on the
// real clock. See [IntervalOn].
func Interval(d time.Duration) Observable[int64] { return IntervalOn(d, clock.Real) }

// IntervalOn returns an Observable that emits 0, 1, 2, ... every d,
// measured on c (rxhystrix's own clock; code outside this module uses
// Interval), starting d after the subscription; it never completes.
// Each tick is emitted from the clock's timer callback (its own goroutine
// on the real clock, the goroutine that advances a manual clock), and the
// next tick is armed once the observer has returned, so a slow observer
// delays ticks rather than receiving them concurrently. The timer is
// stopped when the subscription ends.
//
// It panics if d is not positive or c is nil.
func IntervalOn(d time.Duration, c clock.Clock) Observable[int64] {
	if d <= 0 {
		panic(fmt.Sprintf("observable: Interval with non-positive d (%v)", d))
	}
	if c == nil {
		panic("observable: IntervalOn with nil c")
	}
	return Observable[int64]{src: sourceFunc[int64](func(s *scope, o Observer[int64]) {
		t := &ticker{s: s, d: d, o: o}
		t.h.target = t
		t.mu.Lock()
		t.timer = c.AfterFunc(d, t.tick)
		t.mu.Unlock()
		if !s.addHook(&t.h) {
			t.scopeEnded(s.Err())
		}
	})}
}

// ticker re-arms its timer after each tick until its scope ends.
type ticker struct {
	s *scope
	h hook
	d time.Duration
	o Observer[int64]

	mu      sync.Mutex
	n       int64 // the next value
	timer   clock.Timer
	stopped bool
}

func (t *ticker) tick() {
	t.mu.Lock()
	n := t.n
	t.n++
	t.mu.Unlock()
	if !t.s.live() {
		return
	}
	t.o.OnNext(n)
	t.mu.Lock()
	if !t.stopped {
		t.timer.Reset(t.d)
	}
	t.mu.Unlock()
}

func (t *ticker) scopeEnded(error) {
	t.mu.Lock()
	t.stopped = true
	t.timer.Stop()
	t.mu.Unlock()
}
