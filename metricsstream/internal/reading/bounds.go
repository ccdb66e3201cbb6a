package reading

import (
	"errors"
	"fmt"
	"math"
)

// DefaultLatencyBounds returns the default upper bounds, in seconds, of
// the exporters' latency histograms: from 1ms to 10s, closest where
// command timeouts usually are, between 50ms and 3s, so that a quantile
// interpolated near a timeout is off by at most 50ms between 100ms and
// 500ms.
func DefaultLatencyBounds() []float64 {
	return []float64{
		.001, .0025, .005, .01, .025, .05, .075, .1, .15, .2, .25, .3, .35, .4, .45, .5,
		.6, .75, 1, 1.5, 2, 2.5, 3, 5, 10,
	}
}

// CheckBounds returns an error that says which bound is wrong when there
// are none, or one is not a positive finite number, or they do not
// increase.
func CheckBounds(bounds []float64) error {
	if len(bounds) == 0 {
		return errors.New("no bucket bounds")
	}
	for i, b := range bounds {
		if !(b > 0) || math.IsInf(b, 1) {
			return fmt.Errorf("bound %d (%v) is not a positive finite number of seconds", i, b)
		}
		if i > 0 && b <= bounds[i-1] {
			return fmt.Errorf("bound %d (%v) does not exceed bound %d (%v)", i, b, i-1, bounds[i-1])
		}
	}
	return nil
}
