package limit

import (
	"sync"
	"testing"
	"time"
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
