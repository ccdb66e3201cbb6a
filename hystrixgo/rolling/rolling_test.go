package rolling

import (
	"testing"
	"time"
)

// fakeNow is a settable clock for a Number or a Timing.
type fakeNow struct{ t time.Time }

func (f *fakeNow) now() time.Time { return f.t }

var t0 = time.Unix(1_700_000_000, 0)

func TestNumber(t *testing.T) {
	cases := []struct {
		name          string
		steps         func(n *Number, clk *fakeNow)
		sum, max, avg float64
	}{
		{"empty", func(*Number, *fakeNow) {}, 0, 0, 0},
		{"one bucket", func(n *Number, _ *fakeNow) { n.Increment(1); n.Increment(2) }, 3, 3, 0.3},
		{"zero is ignored", func(n *Number, _ *fakeNow) { n.Increment(0) }, 0, 0, 0},
		{"buckets per second", func(n *Number, clk *fakeNow) {
			for _, v := range []float64{10, 11, 2, 5} {
				n.Increment(v)
				clk.t = clk.t.Add(time.Second)
			}
			clk.t = clk.t.Add(-time.Second)
		}, 28, 11, 2.8},
		{"older than 10s drop out", func(n *Number, clk *fakeNow) {
			n.Increment(100)
			clk.t = clk.t.Add(11 * time.Second)
			n.Increment(1)
		}, 1, 1, 0.1},
		{"UpdateMax keeps the largest", func(n *Number, clk *fakeNow) {
			n.UpdateMax(10)
			n.UpdateMax(1)
			clk.t = clk.t.Add(time.Second)
			n.UpdateMax(5)
		}, 15, 10, 1.5},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			clk := &fakeNow{t0}
			n := NewNumber()
			n.now = clk.now
			c.steps(n, clk)
			if got := n.Sum(clk.t); got != c.sum {
				t.Errorf("Sum = %v; want %v", got, c.sum)
			}
			if got := n.Max(clk.t); got != c.max {
				t.Errorf("Max = %v; want %v", got, c.max)
			}
			if got := n.Avg(clk.t); got != c.avg {
				t.Errorf("Avg = %v; want %v", got, c.avg)
			}
		})
	}
}

func TestTiming(t *testing.T) {
	ms := time.Millisecond
	cases := []struct {
		name   string
		add    []time.Duration
		p      float64
		wantP  uint32
		wantMn uint32
	}{
		{"empty", nil, 50, 0, 0},
		{"one", []time.Duration{5 * ms}, 99, 5, 5},
		{"p0 is the least", []time.Duration{30 * ms, 10 * ms, 20 * ms}, 0, 10, 20},
		{"p50 by nearest rank", []time.Duration{40 * ms, 10 * ms, 20 * ms, 30 * ms}, 50, 20, 25},
		{"p100 is the most", []time.Duration{1 * ms, 1000 * ms}, 100, 1000, 500},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			clk := &fakeNow{t0}
			r := NewTiming()
			r.now = clk.now
			for _, d := range c.add {
				r.Add(d)
			}
			if got := r.Percentile(c.p); got != c.wantP {
				t.Errorf("Percentile(%v) = %v; want %v", c.p, got, c.wantP)
			}
			if got := r.Mean(); got != c.wantMn {
				t.Errorf("Mean = %v; want %v", got, c.wantMn)
			}
		})
	}
}

func TestTimingWindow(t *testing.T) {
	clk := &fakeNow{t0}
	r := NewTiming()
	r.now = clk.now
	r.Add(3 * time.Millisecond)
	clk.t = clk.t.Add(30 * time.Second)
	r.Add(1 * time.Millisecond)
	if got := r.SortedDurations(); len(got) != 2 || got[0] != time.Millisecond {
		t.Fatalf("SortedDurations = %v; want [1ms 3ms]", got)
	}
	clk.t = clk.t.Add(31 * time.Second)
	if got := r.SortedDurations(); len(got) != 1 || got[0] != time.Millisecond {
		t.Fatalf("after 61s SortedDurations = %v; want [1ms]", got)
	}
}

// The window is hystrix-go's: the seconds from now-10 to now, less the
// buckets a write has dropped (those of its second-10 and before). So the
// bucket of 10 seconds ago counts until the current second is written,
// and not after.
func TestNumberWindowIsHystrixGos(t *testing.T) {
	clk := &fakeNow{t0}
	n := NewNumber()
	n.now = clk.now
	n.Increment(100)
	clk.t = clk.t.Add(10 * time.Second)
	if got := n.Sum(clk.t); got != 100 {
		t.Errorf("Sum before a write this second = %v; want 100, the bucket of 10s ago not dropped yet", got)
	}
	n.Increment(1)
	if got := n.Sum(clk.t); got != 1 {
		t.Errorf("Sum = %v; want 1, the 100 of 10s ago dropped by this second's write", got)
	}
	if got := n.Max(clk.t); got != 1 {
		t.Errorf("Max = %v; want 1", got)
	}
	if got := n.Avg(clk.t); got != 0.1 {
		t.Errorf("Avg = %v; want 0.1", got)
	}
}
