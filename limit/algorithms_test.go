package limit

import (
	"math"
	"testing"
	"time"
)

// step is one sample in and the limit, as the algorithm holds it, out.
type step struct {
	name string
	in   Sample
	want float64
}

const ms = time.Millisecond

// runSteps feeds the steps to a Limiter of a, in order, and checks the
// estimate after each.
func runSteps(t *testing.T, a Algorithm, steps []step) {
	t.Helper()
	l, err := New(a, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range steps {
		l.Record(s.in)
		if got := l.Estimate(); math.Abs(got-s.want) > 1e-9 {
			t.Fatalf("step %d (%s): limit %v, want %v", i+1, s.name, got, s.want)
		}
		if got, want := l.Limit(), max(1, int(math.Floor(s.want))); got != want {
			t.Fatalf("step %d (%s): Limit() = %d, want %d", i+1, s.name, got, want)
		}
	}
}

func TestVegasFollowsItsFormula(t *testing.T) {
	// Below a limit of 100, f = ⌊log10 L⌋ is 1: α = 3, β = 6, threshold 1.
	runSteps(t, Vegas{InitialLimit: 20}, []step{
		{"first sample sets rtt_noload", Sample{RTT: 100 * ms, InFlight: 20}, 20},
		{"no queue: L + β", Sample{RTT: 100 * ms, InFlight: 20}, 26},
		{"inflight below half the limit holds", Sample{RTT: 100 * ms, InFlight: 12}, 26},
		{"long queue ⌈26·0.5⌉ = 13 > β: L − f", Sample{RTT: 200 * ms, InFlight: 27}, 25},
		{"short queue ⌈25·(1 − 100/105)⌉ = 2 < α: L + f", Sample{RTT: 105 * ms, InFlight: 26}, 26},
		{"drop: L − f", Sample{RTT: 300 * ms, InFlight: 27, Dropped: true}, 25},
		{"a shorter rtt lowers rtt_noload and holds", Sample{RTT: 50 * ms, InFlight: 26}, 25},
		{"queue ⌈25·(1 − 50/60)⌉ = 5, between α and β, holds", Sample{RTT: 60 * ms, InFlight: 26}, 25},
		{"no queue again ⌈25·(1 − 50/51)⌉ = 1: L + β", Sample{RTT: 51 * ms, InFlight: 26}, 31},
		{"drop at low inflight", Sample{RTT: 50 * ms, InFlight: 1, Dropped: true}, 30},
	})
}

// f is concurrency-limits' Log10RootFunction, ⌊log10 L⌋ of the limit's
// integer part and at least 1: whole steps, 2 from a limit of 100.
func TestVegasStepsAreWholeLog10(t *testing.T) {
	runSteps(t, Vegas{InitialLimit: 150}, []step{
		{"first sample sets rtt_noload", Sample{RTT: 100 * ms, InFlight: 150}, 150},
		{"no queue: L + 6·2", Sample{RTT: 100 * ms, InFlight: 150}, 162},
		{"drop: L − 2", Sample{RTT: 100 * ms, InFlight: 150, Dropped: true}, 160},
	})
	runSteps(t, Vegas{InitialLimit: 99}, []step{
		{"first sample sets rtt_noload", Sample{RTT: 100 * ms, InFlight: 99}, 99},
		{"drop: 99 − 1", Sample{RTT: 100 * ms, InFlight: 99, Dropped: true}, 98},
	})
}

// TestVegasAtItsBoundaries checks each comparison of the formula where
// its two sides are equal: the threshold, α and β are whole numbers (1,
// 3 and 6 below a limit of 100) that a queue, a whole number, can meet.
func TestVegasAtItsBoundaries(t *testing.T) {
	for _, tc := range []struct {
		limit int
		next  step
	}{
		{10, step{"inflight·2 = L does not hold; queue 0 ≤ threshold: L + β", Sample{RTT: 100 * ms, InFlight: 5}, 16}},
		{5, step{"queue ⌈5·(1 − 100/110)⌉ = 1 = threshold: L + β", Sample{RTT: 110 * ms, InFlight: 5}, 11}},
		{5, step{"queue ⌈5·(1 − 100/200)⌉ = 3 = α holds", Sample{RTT: 200 * ms, InFlight: 5}, 5}},
		{10, step{"queue ⌈10·(1 − 100/240)⌉ = 6 = β holds", Sample{RTT: 240 * ms, InFlight: 10}, 10}},
	} {
		runSteps(t, Vegas{InitialLimit: tc.limit}, []step{
			{"first sample sets rtt_noload", Sample{RTT: 100 * ms, InFlight: 10}, float64(tc.limit)},
			tc.next,
		})
	}
}

func TestVegasReprobesNoLoadLatency(t *testing.T) {
	// With ProbeMultiplier 1 and a limit of 2, every second sample
	// re-measures rtt_noload: B got slower for good, and the slower rtt is
	// no queue.
	runSteps(t, Vegas{InitialLimit: 2, ProbeMultiplier: 1}, []step{
		{"first sample sets rtt_noload", Sample{RTT: 100 * ms, InFlight: 2}, 2},
		{"probe: rtt_noload is now 300ms", Sample{RTT: 300 * ms, InFlight: 2}, 2},
		{"no queue at 300ms: L + β", Sample{RTT: 300 * ms, InFlight: 2}, 2 + 6},
	})
}

func TestVegasClampsIntoItsBounds(t *testing.T) {
	runSteps(t, Vegas{InitialLimit: 3, MinLimit: 2, MaxLimit: 5}, []step{
		{"first sample", Sample{RTT: 100 * ms, InFlight: 3}, 3},
		{"L + β capped at MaxLimit", Sample{RTT: 100 * ms, InFlight: 3}, 5},
		{"drop", Sample{RTT: 100 * ms, InFlight: 3, Dropped: true}, 4},
		{"drop", Sample{RTT: 100 * ms, InFlight: 3, Dropped: true}, 3},
		{"drop", Sample{RTT: 100 * ms, InFlight: 3, Dropped: true}, 2},
		{"drop floored at MinLimit", Sample{RTT: 100 * ms, InFlight: 3, Dropped: true}, 2},
	})
}

// warmUp returns n samples of rtt taken with nothing in flight, which
// hold the limit l and enter the long rtt's warm-up mean.
func warmUp(n int, rtt time.Duration, l float64) []step {
	steps := make([]step, n)
	for i := range steps {
		steps[i] = step{"warm-up", Sample{RTT: rtt}, l}
	}
	return steps
}

// The long rtt is the plain mean of the first 10 samples, then an
// exponential average, as concurrency-limits' ExpAvgMeasurement(window,
// 10): one fast first sample does not hold the limit at its floor for
// the hundreds of samples an average of 600 would take to forget it.
func TestGradient2LongRTTWarmsUpOnAMean(t *testing.T) {
	g := func(l, gradient float64) float64 { return 0.8*l + 0.2*(l*gradient+4) }
	// One sample of 1 ms, then 10 ms: by the tenth the mean is 9.1 ms,
	// and 1.5·9.1/10 ≥ 1, so the limit grows.
	steps := []step{{"a fast first sample", Sample{RTT: ms}, 20}}
	steps = append(steps, warmUp(8, 10*ms, 20)...)
	l := g(20, 1)
	steps = append(steps, step{"the tenth: mean 9.1 ms", Sample{RTT: 10 * ms, InFlight: 20}, l})
	// The eleventh enters the exponential average of 600.
	k := 2.0 / 601
	long := (9.1*(1-k) + 10*k)
	steps = append(steps, step{"then the exponential average", Sample{RTT: 10 * ms, InFlight: 20}, g(l, min(1, 1.5*long/10))})
	runSteps(t, Gradient2{InitialLimit: 20}, steps)
}

func TestGradient2FollowsItsFormula(t *testing.T) {
	// LongWindow 9 makes the long rtt's average weigh each sample 0.2.
	const k = 0.2
	g := func(l, gradient float64) float64 { return 0.8*l + 0.2*(l*gradient+4) }
	l1 := g(20, 1) // long = short: gradient min(1, 1.5) = 1
	long2 := 100*(1-k) + 200*k
	l2 := g(l1, 1.5*long2/200)
	long3 := long2*(1-k) + 400*k
	l3 := g(l2, 1.5*long3/400)
	long4 := (long3*(1-k) + 20*k) * 0.95 // long/short > 2: the long rtt decays
	l4 := g(l3, 1)
	long5 := long4*(1-k) + 100*k
	long6 := long5*(1-k) + 1000*k
	l6 := g(l4, 0.5) // 1.5·long/short = 0.46: gradient floored at 0.5
	_ = long6
	runSteps(t, Gradient2{InitialLimit: 20, LongWindow: 9}, append(warmUp(9, 100*ms, 20), []step{
		{"steady latency grows by the queue", Sample{RTT: 100 * ms, InFlight: 20}, l1},
		{"latency doubles, within tolerance", Sample{RTT: 200 * ms, InFlight: 20}, l2},
		{"latency doubles again", Sample{RTT: 400 * ms, InFlight: 20}, l3},
		{"a fast sample", Sample{RTT: 20 * ms, InFlight: 20}, l4},
		{"inflight below half the limit holds", Sample{RTT: 100 * ms, InFlight: 10}, l4},
		{"a very slow sample", Sample{RTT: 1000 * ms, InFlight: 30}, l6},
		{"drops are not in the formula", Sample{RTT: 1000 * ms, InFlight: 5, Dropped: true}, l6},
	}...))
	if long6 >= 1000 || long6 <= 200 {
		t.Fatalf("long rtt %v ms: the test's arithmetic is off", long6)
	}
}

// TestGradient2AtItsBoundaries checks the formula's two comparisons
// where their sides are equal: inflight at half the limit, and a long
// rtt at twice the short one, which does not decay.
func TestGradient2AtItsBoundaries(t *testing.T) {
	g := func(l, gradient float64) float64 { return 0.8*l + 0.2*(l*gradient+4) }
	runSteps(t, Gradient2{InitialLimit: 20}, []step{
		{"inflight at half the limit does not hold", Sample{RTT: 100 * ms, InFlight: 10}, g(20, 1)},
	})
	// LongWindow 3 weighs each sample 0.5 in the long rtt.
	l1 := g(20, 1)
	l2 := g(l1, 1)                     // long (300 + 100)/2 = 200 = 2·short: no decay; gradient 1.5·2 capped at 1
	l3 := g(l2, 1.5*(200+1000)/2/1000) // long (200 + 1000)/2 = 600; decayed, it would be 595
	runSteps(t, Gradient2{InitialLimit: 20, LongWindow: 3}, append(warmUp(9, 300*ms, 20), []step{
		{"the warm-up's mean is the long rtt", Sample{RTT: 300 * ms, InFlight: 20}, l1},
		{"long rtt at twice the short", Sample{RTT: 100 * ms, InFlight: 20}, l2},
		{"the long rtt shows it did not decay", Sample{RTT: 1000 * ms, InFlight: 20}, l3},
	}...))
}

func TestGradient2ClampsIntoItsBounds(t *testing.T) {
	steps := append(warmUp(9, 10*ms, 20), step{"first", Sample{RTT: 10 * ms, InFlight: 200}, 20.8})
	for range 5 {
		steps = append(steps, step{"much slower", Sample{RTT: 10 * time.Second, InFlight: 200}, 20})
	}
	runSteps(t, Gradient2{}, steps)
	steps = []step{{"first", Sample{RTT: 10 * ms, InFlight: 200}, 199.8}, {"capped", Sample{RTT: 10 * ms, InFlight: 200}, 200}}
	runSteps(t, Gradient2{InitialLimit: 199}, steps)
}

func TestAIMDFollowsItsFormula(t *testing.T) {
	runSteps(t, AIMD{InitialLimit: 17, MinLimit: 5, MaxLimit: 18, Timeout: time.Second}, []step{
		{"inflight·2 ≥ L: L + 1", Sample{RTT: 100 * ms, InFlight: 10}, 18},
		{"drop: ⌊18·0.9⌋", Sample{RTT: 100 * ms, InFlight: 10, Dropped: true}, 16},
		{"inflight·2 ≥ L: L + 1", Sample{RTT: 100 * ms, InFlight: 9}, 17},
		{"inflight below half the limit holds", Sample{RTT: 100 * ms, InFlight: 8}, 17},
		{"rtt over the timeout is a drop", Sample{RTT: 1001 * ms, InFlight: 17}, 15},
		{"rtt at the timeout is not", Sample{RTT: time.Second, InFlight: 15}, 16},
		{"drop", Sample{RTT: time.Second, InFlight: 15, Dropped: true}, 14},
		{"drop", Sample{RTT: time.Second, InFlight: 15, Dropped: true}, 12},
		{"backoff", Sample{RTT: time.Second, InFlight: 15, Dropped: true}, 10},
		{"backoff", Sample{RTT: time.Second, InFlight: 15, Dropped: true}, 9},
		{"backoff", Sample{RTT: time.Second, InFlight: 15, Dropped: true}, 8},
		{"backoff", Sample{RTT: time.Second, InFlight: 15, Dropped: true}, 7},
		{"backoff", Sample{RTT: time.Second, InFlight: 15, Dropped: true}, 6},
		{"backoff", Sample{RTT: time.Second, InFlight: 15, Dropped: true}, 5},
		{"floored at MinLimit", Sample{RTT: time.Second, InFlight: 15, Dropped: true}, 5},
	})
}

func TestAIMDDefaults(t *testing.T) {
	runSteps(t, AIMD{}, []step{
		{"starts at 20", Sample{RTT: 100 * ms, InFlight: 10}, 21},
		{"5s is the default timeout", Sample{RTT: 5*time.Second + 1, InFlight: 10}, 20}, // ⌊21·0.9⌋ = 18, floored at 20
	})
}

func TestSampleWithNoDurationIsIgnored(t *testing.T) {
	for _, a := range []Algorithm{Vegas{}, Gradient2{}, AIMD{}} {
		l, _ := New(a, 30)
		if before, after := l.Record(Sample{RTT: 0, InFlight: 30, Dropped: true}); before != 30 || after != 30 {
			t.Errorf("%s: an instant sample moved the limit %d → %d", a.Name(), before, after)
		}
	}
}

func TestNewStartsAtTheStartingPointWithinBounds(t *testing.T) {
	for _, tc := range []struct {
		a     Algorithm
		start int
		want  int
	}{
		{Vegas{}, 10, 10},
		{Vegas{}, 0, DefaultInitialLimit},
		{Vegas{InitialLimit: 7}, 10, 7},
		{Gradient2{}, 10, 20}, // raised to MinLimit
		{AIMD{}, 500, 200},    // lowered to MaxLimit
	} {
		l, err := New(tc.a, tc.start)
		if err != nil {
			t.Fatal(err)
		}
		if got := l.Limit(); got != tc.want {
			t.Errorf("New(%#v, %d).Limit() = %d, want %d", tc.a, tc.start, got, tc.want)
		}
	}
}

// The hold at low concurrency compares inflight with L/2, L the real
// limit: at L = 36.4 (a limit carried over from another algorithm by
// Switch keeps its fraction), 18 executions in flight are fewer than
// L/2 = 18.2, and the limit holds, as the package doc and
// concurrency-limits say.
func TestVegasHoldsBelowHalfTheRealLimit(t *testing.T) {
	g, err := New(Gradient2{MinLimit: 1, MaxLimit: 100, InitialLimit: 36}, 0)
	if err != nil {
		t.Fatal(err)
	}
	g.set(36.4)
	l, err := g.Switch(Vegas{MinLimit: 1, MaxLimit: 100})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []step{
		{"first sample sets rtt_noload", Sample{RTT: 100 * ms, InFlight: 20}, 36.4},
		{"18 in flight < 36.4/2 holds", Sample{RTT: 100 * ms, InFlight: 18}, 36.4},
		{"19 in flight, no queue: L + β", Sample{RTT: 100 * ms, InFlight: 19}, 42.4},
	} {
		l.Record(s.in)
		if got := l.Estimate(); math.Abs(got-s.want) > 1e-9 {
			t.Fatalf("%s: limit %v, want %v", s.name, got, s.want)
		}
	}
}

// A ProbeMultiplier too large to ever probe, which Validate accepts,
// must not overflow ProbeMultiplier·L into a re-probe on every sample.
func TestVegasHugeProbeMultiplier(t *testing.T) {
	runSteps(t, Vegas{InitialLimit: 20, ProbeMultiplier: math.MaxInt}, []step{
		{"first sample sets rtt_noload", Sample{RTT: 100 * ms, InFlight: 20}, 20},
		{"no queue: L + β", Sample{RTT: 100 * ms, InFlight: 20}, 26},
	})
}

// AIMD's increase compares inflight with L/2, L the real limit, as the
// package doc says ("adds 1 when at least L/2 executions were in
// flight"): a limit carried over from Gradient2 or Vegas by Switch keeps
// its fraction, and at L = 36.4, 18 in flight are fewer than L/2 = 18.2.
// An InFlight past MaxInt/2 must not wrap into "few in flight" either.
func TestAIMDHoldsBelowHalfTheRealLimit(t *testing.T) {
	g, err := New(Gradient2{MinLimit: 1, MaxLimit: 100, InitialLimit: 36}, 0)
	if err != nil {
		t.Fatal(err)
	}
	g.set(36.4)
	l, err := g.Switch(AIMD{MinLimit: 1, MaxLimit: 100, Timeout: -1})
	if err != nil {
		t.Fatal(err)
	}
	l.Record(Sample{RTT: ms, InFlight: 18})
	if got := l.Estimate(); got != 36.4 {
		t.Errorf("18 in flight at L = 36.4: limit %v, want 36.4 held", got)
	}
	l.set(36.4)
	l.Record(Sample{RTT: ms, InFlight: 19})
	if got := l.Estimate(); math.Abs(got-37.4) > 1e-9 {
		t.Errorf("19 in flight at L = 36.4: limit %v, want 37.4", got)
	}
	l.set(36.4)
	l.Record(Sample{RTT: ms, InFlight: math.MaxInt})
	if got := l.Estimate(); math.Abs(got-37.4) > 1e-9 {
		t.Errorf("MaxInt in flight at L = 36.4: limit %v, want 37.4", got)
	}
}

// The longest LongWindow weighs each sample after the warm-up a little
// above nothing, never below: LongWindow+1 in int arithmetic wraps to the
// most negative int, and a negative weight.
func TestGradient2LongestWindowWeighsSamplesPositively(t *testing.T) {
	g := Gradient2{LongWindow: math.MaxInt}.estimator().(*gradient2)
	if !(g.k > 0) {
		t.Fatalf("the long rtt's weight of a sample is %v, want above 0", g.k)
	}
}
