package limit

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/rxhystrix/rxhystrix/internal/proc"
)

// Drops are never skipped, however many callers record at once: ten
// concurrent drops cut an AIMD limit ten times.
func TestConcurrentDropsAllApply(t *testing.T) {
	l, err := New(AIMD{InitialLimit: 200, MinLimit: 1, MaxLimit: 200}, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := 200.0
	for range 10 {
		want = float64(int(want * 0.9))
	}
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() { l.Record(Sample{RTT: time.Millisecond, InFlight: 200, Dropped: true}) })
	}
	wg.Wait()
	if got := l.Estimate(); got != want {
		t.Fatalf("limit %v after 10 drops, want %v", got, want)
	}
}

// aimdGrowing returns a Limiter whose every applied sample adds 1.
func aimdGrowing(t *testing.T) *Limiter {
	t.Helper()
	l, err := New(AIMD{InitialLimit: 10, MinLimit: 1, MaxLimit: 100000}, 0)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

var growing = Sample{RTT: time.Millisecond, InFlight: 100000}

// Samples recorded one after the other are all applied, whichever
// processors the recording goroutine runs on.
func TestSequentialSamplesAllApply(t *testing.T) {
	l := aimdGrowing(t)
	for range 5000 {
		l.Record(growing)
	}
	if got := l.Limit(); got != 5010 {
		t.Fatalf("limit %d after 5000 samples from 10, want 5010", got)
	}
}

// A sample that finds the lock taken opens its processor's contended
// window: one in ContendedShare of the window's samples is applied, and
// every sample after it.
func TestContendedWindowAppliesAShare(t *testing.T) {
	l := aimdGrowing(t)
	// Pinned, the goroutine stays on one processor and so uses one
	// window; Record neither blocks nor yields on a sample that is not
	// a drop.
	proc.Pin()
	l.mu.Lock()
	_, skipped := l.Record(growing)
	l.mu.Unlock()
	for range ContendedWindow {
		l.Record(growing)
	}
	inWindow := l.Limit()
	for range 10 {
		l.Record(growing)
	}
	after := l.Limit()
	proc.Unpin()

	if skipped != 10 {
		t.Fatalf("a sample recorded while the lock was taken moved the limit to %d", skipped)
	}
	if want := 10 + ContendedWindow/ContendedShare; inWindow != want {
		t.Fatalf("limit %d after a contended window of %d samples, want %d", inWindow, ContendedWindow, want)
	}
	if after != inWindow+10 {
		t.Fatalf("limit %d after 10 samples past the window from %d, want %d", after, inWindow, inWindow+10)
	}
}

// A drop is applied inside a contended window too.
func TestDropInContendedWindowApplies(t *testing.T) {
	l := aimdGrowing(t)
	proc.Pin()
	l.mu.Lock()
	l.Record(growing)
	l.mu.Unlock()
	l.Record(growing) // the window's first sample is applied: 11
	_, after := l.Record(Sample{RTT: time.Millisecond, InFlight: 100000, Dropped: true})
	proc.Unpin()
	if after != 9 { // ⌊11 × 0.9⌋
		t.Fatalf("limit %d after a drop from 11, want 9", after)
	}
}

// Switch carries the estimate on, fraction and all, clamped into the new
// algorithm's bounds, whatever its InitialLimit; it refuses an algorithm
// that is not valid.
func TestSwitchCarriesTheEstimateOn(t *testing.T) {
	l, err := New(AIMD{MinLimit: 1, InitialLimit: 10, MaxLimit: 100}, 0)
	if err != nil {
		t.Fatal(err)
	}
	l.set(12.5)
	next, err := l.Switch(Vegas{MinLimit: 1, InitialLimit: 40, MaxLimit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if got := next.Estimate(); got != 12.5 {
		t.Errorf("Switch: estimate %v, want 12.5, the last one's", got)
	}
	if next, _ = l.Switch(AIMD{MinLimit: 1, MaxLimit: 6}); next.Limit() != 6 {
		t.Errorf("Switch into MaxLimit 6: limit %d", next.Limit())
	}
	if _, err := l.Switch(AIMD{MinLimit: -1}); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("Switch to an invalid algorithm: %v", err)
	}
}
