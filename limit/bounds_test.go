package limit

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// TestLimitNeverLeavesItsBounds feeds every algorithm random samples and
// checks the limit after each.
func TestLimitNeverLeavesItsBounds(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		lo := rapid.IntRange(1, 50).Draw(t, "min")
		hi := rapid.IntRange(lo, 300).Draw(t, "max")
		algorithms := []Algorithm{
			Vegas{MinLimit: lo, MaxLimit: hi, ProbeMultiplier: rapid.IntRange(0, 3).Draw(t, "probe")},
			Gradient2{MinLimit: lo, MaxLimit: hi, LongWindow: rapid.IntRange(0, 20).Draw(t, "window")},
			AIMD{MinLimit: lo, MaxLimit: hi, Timeout: time.Duration(rapid.Int64Range(-1, 1e9).Draw(t, "timeout"))},
		}
		a := algorithms[rapid.IntRange(0, len(algorithms)-1).Draw(t, "algorithm")]
		l, err := New(a, rapid.IntRange(-5, 400).Draw(t, "start"))
		if err != nil {
			t.Fatal(err)
		}
		for i := range rapid.IntRange(1, 200).Draw(t, "samples") {
			_ = i
			l.Record(Sample{
				RTT:      time.Duration(rapid.Int64Range(-1, 10e9).Draw(t, "rtt")),
				InFlight: rapid.IntRange(0, 400).Draw(t, "inflight"),
				Dropped:  rapid.Bool().Draw(t, "dropped"),
			})
			if got := l.Limit(); got < lo || got > hi {
				t.Fatalf("%s: limit %d outside [%d, %d]", a.Name(), got, lo, hi)
			}
		}
	})
}

func TestValidateNamesTheField(t *testing.T) {
	for _, tc := range []struct {
		a     Algorithm
		field string
	}{
		{Vegas{MinLimit: -1}, "Vegas.MinLimit"},
		{Vegas{MaxLimit: -1}, "Vegas.MaxLimit"},
		{Vegas{InitialLimit: -1}, "Vegas.InitialLimit"},
		{Vegas{MinLimit: 10, MaxLimit: 5}, "Vegas.MinLimit"},
		{Vegas{InitialLimit: 2000}, "Vegas.InitialLimit"},
		{Vegas{ProbeMultiplier: -1}, "Vegas.ProbeMultiplier"},
		{Gradient2{MaxLimit: 10}, "Gradient2.MinLimit"}, // below the default MinLimit, 20
		{Gradient2{QueueSize: -1}, "Gradient2.QueueSize"},
		{Gradient2{Tolerance: 0.5}, "Gradient2.Tolerance"},
		{Gradient2{Smoothing: 1.5}, "Gradient2.Smoothing"},
		{Gradient2{Smoothing: -0.1}, "Gradient2.Smoothing"},
		{Gradient2{LongWindow: -1}, "Gradient2.LongWindow"},
		{AIMD{BackoffRatio: 1}, "AIMD.BackoffRatio"},
		{AIMD{BackoffRatio: 0.4}, "AIMD.BackoffRatio"},
		{AIMD{InitialLimit: 5}, "AIMD.InitialLimit"},
	} {
		err := tc.a.Validate()
		var ce *ConfigError
		if !errors.Is(err, ErrInvalidConfig) || !errors.As(err, &ce) || ce.Field != tc.field {
			t.Errorf("%#v.Validate() = %v, want a ConfigError for %s", tc.a, err, tc.field)
			continue
		}
		if !strings.Contains(err.Error(), tc.field) {
			t.Errorf("%q does not name %s", err, tc.field)
		}
		if errs := err.(interface{ Unwrap() []error }).Unwrap(); len(errs) != 1 {
			t.Errorf("%#v.Validate() = %q: %d errors for one bad field", tc.a, err, len(errs))
		}
		if _, err := New(tc.a, 10); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("New(%#v) = %v, want ErrInvalidConfig", tc.a, err)
		}
	}
	for _, a := range []Algorithm{Vegas{}, Gradient2{}, AIMD{}, Vegas{MinLimit: 5, MaxLimit: 5, InitialLimit: 5}, Gradient2{Tolerance: 1, Smoothing: 1}, AIMD{Timeout: -1, BackoffRatio: 0.5}} {
		if err := a.Validate(); err != nil {
			t.Errorf("%#v.Validate() = %v", a, err)
		}
	}
}

// A limit as large as an int holds, MaxLimit math.MaxInt being how a
// configuration says the limit has no bound of its own: the float64 of
// math.MaxInt is 2⁶³, one past it, and must not wrap into a negative
// integer part that Limit reads as 1.
func TestLimitAtMaxInt(t *testing.T) {
	for _, a := range []Algorithm{
		Vegas{MaxLimit: math.MaxInt},
		Gradient2{MaxLimit: math.MaxInt},
		AIMD{MaxLimit: math.MaxInt},
		Vegas{MaxLimit: math.MaxInt, InitialLimit: math.MaxInt},
	} {
		l, err := New(a, math.MaxInt)
		if err != nil {
			t.Fatal(err)
		}
		if got := l.Limit(); got != math.MaxInt {
			t.Errorf("%#v: New(a, MaxInt).Limit() = %d, want MaxInt", a, got)
		}
		before, after := l.Record(Sample{RTT: 100 * time.Millisecond, InFlight: 10, Dropped: true})
		if before != math.MaxInt || after <= 1 || after > before {
			t.Errorf("%#v: a drop moved the limit %d → %d", a, before, after)
		}
	}
	// AIMD's drop from 2⁶³ lands within int64.
	l, _ := New(AIMD{MaxLimit: math.MaxInt}, math.MaxInt)
	l.Record(Sample{RTT: time.Millisecond, InFlight: 1, Dropped: true})
	if got, want := l.Limit(), int(math.Floor(math.Ldexp(1, 63)*0.9)); got != want {
		t.Errorf("AIMD after a drop from MaxInt: Limit() = %d, want %d", got, want)
	}
}
