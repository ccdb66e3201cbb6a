package breaker_test

import (
	"slices"
	"testing"
	"time"

	"github.com/rxhystrix/rxhystrix/breaker"
)

func TestReset(t *testing.T) {
	cases := []struct {
		name  string
		setup func(b *breaker.Breaker, clk clockAdvancer)
	}{
		{"closed", func(*breaker.Breaker, clockAdvancer) {}},
		{"open", func(*breaker.Breaker, clockAdvancer) {}},
		{"half-open", func(b *breaker.Breaker, clk clockAdvancer) {
			clk.Advance(afterSleepWindow)
			if !b.AttemptExecution() {
				t.Fatal("precondition: the trial is admitted")
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var b *breaker.Breaker
			var h *fakeHealth
			var clk clockAdvancer
			if c.name == "closed" {
				b, h, clk = newBreaker(t, hystrixTestConfig)
			} else {
				b, h, clk = tripped(t)
			}
			c.setup(b, clk)
			resets := h.resetCount()
			b.Reset()
			if got := b.State(); got != breaker.Closed {
				t.Fatalf("State() after Reset = %v; want Closed", got)
			}
			if !b.AllowRequest() || b.IsOpen() {
				t.Fatalf("after Reset: AllowRequest %v, IsOpen %v; want true, false", b.AllowRequest(), b.IsOpen())
			}
			if got := h.resetCount(); got != resets+1 {
				t.Fatalf("ResetStream calls = %d; want %d", got, resets+1)
			}
			if got := h.live(); got != 1 {
				t.Fatalf("live health subscriptions = %d; want 1", got)
			}
			b.MarkNonSuccess() // a late report of an earlier trial
			if got := b.State(); got != breaker.Closed {
				t.Fatalf("State() after a late report = %v; want Closed", got)
			}
			h.emit(health(4, 4, 0))
			if got := b.State(); got != breaker.Open {
				t.Fatalf("State() after a bad snapshot = %v; want Open: the new subscription trips it", got)
			}
		})
	}
}

// A HalfOpen breaker whose trial ran out of HalfOpenTrialTimeout had
// re-opened as of the bound (package doc, Transition.Time): Reset, which
// finds it so, tells the re-opening and then closes an Open breaker, as
// SetConfig and every other call that finds it HalfOpen do.
func TestResetOfAnOverdueTrialTellsTheReopening(t *testing.T) {
	b, _, clk := tripped(t)
	finish := collect(t, b)
	clk.Advance(afterSleepWindow)
	if !b.AttemptExecution() {
		t.Fatal("precondition: the trial is admitted")
	}
	clk.Advance(time.Second) // the trial is overdue (bound: 200ms), unnoticed
	b.Reset()
	got := finish()
	var path []string
	for _, tr := range got {
		path = append(path, tr.From.String()+"->"+tr.To.String())
	}
	want := []string{"OPEN->HALF_OPEN", "HALF_OPEN->OPEN", "OPEN->CLOSED"}
	if !slices.Equal(path, want) {
		t.Fatalf("transitions = %v; want %v", path, want)
	}
	if at := epoch.Add(afterSleepWindow + 200*time.Millisecond); !got[1].Time.Equal(at) {
		t.Fatalf("re-opening at %v; want %v, as of the bound", got[1].Time, at)
	}
}
