package breaker_test

import (
	"testing"

	"github.com/rxhystrix/rxhystrix/breaker"
	"github.com/rxhystrix/rxhystrix/internal/clock"
)

// sink keeps the compiler from discarding the calls being measured.
var sink bool

// closedBreaker returns a breaker with Hystrix's defaults on the real
// clock, as a command uses it.
func closedBreaker(b *testing.B) *breaker.Breaker {
	br := breaker.New(breaker.Config{}, newFakeHealth())
	b.Cleanup(br.Close)
	return br
}

// openBreaker returns a breaker on the real clock that has just tripped:
// every call short-circuits (the path taken during an outage).
func openBreaker(b *testing.B) *breaker.Breaker {
	h := newFakeHealth()
	br := breaker.New(breaker.Config{SleepWindow: 1 << 62}, h, breaker.WithClock(clock.Real))
	b.Cleanup(br.Close)
	h.emit(health(0, 20, 0))
	if br.State() != breaker.Open {
		b.Fatal("breaker did not trip")
	}
	return br
}

func BenchmarkAttemptExecutionClosed(b *testing.B) {
	br := closedBreaker(b)
	b.ReportAllocs()
	for b.Loop() {
		sink = br.AttemptExecution()
	}
}

func BenchmarkAttemptExecutionClosedParallel(b *testing.B) {
	br := closedBreaker(b)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		ok := true
		for pb.Next() {
			ok = br.AttemptExecution() && ok
		}
		if !ok {
			b.Error("a closed breaker refused a request")
		}
	})
}

func BenchmarkAllowRequestClosed(b *testing.B) {
	br := closedBreaker(b)
	b.ReportAllocs()
	for b.Loop() {
		sink = br.AllowRequest()
	}
}

func BenchmarkAllowRequestClosedParallel(b *testing.B) {
	br := closedBreaker(b)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		ok := true
		for pb.Next() {
			ok = br.AllowRequest() && ok
		}
		if !ok {
			b.Error("a closed breaker refused a request")
		}
	})
}

// The whole conversation of a successful execution on a closed breaker.
func BenchmarkAttemptAndMarkSuccessClosedParallel(b *testing.B) {
	br := closedBreaker(b)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if br.AttemptExecution() {
				br.MarkSuccess()
			}
		}
	})
}

// Short-circuiting inside the sleep window reads the clock once.
func BenchmarkAttemptExecutionOpenParallel(b *testing.B) {
	br := openBreaker(b)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if br.AttemptExecution() {
				b.Error("an open breaker let a request through")
			}
		}
	})
}

func BenchmarkNoOpAttemptExecution(b *testing.B) {
	cb := breaker.NoOp()
	b.ReportAllocs()
	for b.Loop() {
		sink = cb.AttemptExecution()
	}
}

// A closed breaker throttling half its requests: AttemptExecution leaves
// the one-load fast path for a draw (math/rand/v2's, safe for concurrent
// use). Compare with BenchmarkAttemptExecutionClosedParallel.
func BenchmarkAttemptExecutionThrottlingParallel(b *testing.B) {
	h := newFakeHealth()
	br := breaker.New(breaker.Config{ErrorThresholdPercentage: 100, ThrottleSuccessPercentage: 100, MaxThrottlePercentage: 50}, h)
	b.Cleanup(br.Close)
	h.emit(health(10, 90, 0))
	if br.ThrottleProbability() != 0.5 {
		b.Fatalf("throttle probability %v, want 0.5", br.ThrottleProbability())
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			sink = br.AttemptExecution()
		}
	})
}
