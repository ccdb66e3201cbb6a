package saturate

import (
	"math"
	"testing"
)

func TestConversionsStopAtTheLargest(t *testing.T) {
	for _, c := range []struct {
		v    float64
		want int64
	}{
		{0, 0}, {1.9, 1}, {7, 7}, {-3.5, -3},
		{math.Ldexp(1, 62), 1 << 62},
		{math.MaxInt64, math.MaxInt64}, // 2⁶³
		{math.Ldexp(1, 70), math.MaxInt64},
		{math.Inf(1), math.MaxInt64},
	} {
		if got := Int64(c.v); got != c.want {
			t.Errorf("Int64(%v) = %d, want %d", c.v, got, c.want)
		}
		if got := Int(c.v); int64(got) != c.want {
			t.Errorf("Int(%v) = %d, want %d", c.v, got, c.want)
		}
	}
}
