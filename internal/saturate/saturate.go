// Package saturate converts floats to integers that stop at the largest
// integer rather than wrap round: float64(math.MaxInt64) is 2⁶³, one past
// the largest int64, and a conversion of it, or of anything larger, gives
// a negative number. A limit, a share of permits or a duration that large
// means "no bound", and must stay the largest.
package saturate

import "math"

// Int64 returns v converted to an int64, its fraction dropped, or
// math.MaxInt64 when v is at least 2⁶³.
func Int64(v float64) int64 {
	if v >= math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(v)
}

// Int returns v converted to an int, its fraction dropped, or math.MaxInt
// when v is past it.
func Int(v float64) int {
	if v >= math.MaxInt {
		return math.MaxInt
	}
	return int(v)
}
