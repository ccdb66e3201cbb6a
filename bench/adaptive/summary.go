package adaptive

import (
	"slices"
	"time"
)

// fullThroughput is the share of a window's calls B must answer for the
// window to count as full throughput.
const fullThroughput = 0.95

// recoveredFor is how many one-second windows in a row at full
// throughput make the service recovered: one window below it later (a
// slow spell of the machine) does not undo a recovery.
const recoveredFor = 3

// summarize turns what the callers saw into a Result; call i arrived at
// i / v.Rate seconds of scenario time.
func summarize(v Variant, row Row, tl Timeline, calls []call, scale float64) Result {
	r := Result{Variant: v, Row: row, Calls: len(calls)}
	slowFrom, slowTo := tl.Before, tl.Before+tl.Slow
	at := func(i int) time.Duration { return time.Duration(i) * time.Second / time.Duration(v.Rate) }
	var waits []time.Duration
	windows := int((tl.Total() + time.Second - 1) / time.Second)
	answeredIn, callsIn := make([]int, windows), make([]int, windows)
	for i, c := range calls {
		s := at(i)
		slow := s >= slowFrom && s < slowTo
		w := int(s / time.Second)
		callsIn[w]++
		if slow {
			r.Slow++
		}
		switch {
		case c.err != nil:
			r.Errors++
		case c.answered:
			r.Answered++
			answeredIn[w]++
			waits = append(waits, time.Duration(float64(c.wait)*scale))
			if slow {
				r.AnsweredSlow++
			}
		default:
			r.Fallback++
		}
	}
	slices.Sort(waits)
	r.P50, r.P99 = quantile(waits, 0.50), quantile(waits, 0.99)

	// The first window after B recovered that starts recoveredFor
	// windows at full throughput.
	full := func(w int) bool {
		return callsIn[w] > 0 && float64(answeredIn[w]) >= fullThroughput*float64(callsIn[w])
	}
	for w := int(slowTo / time.Second); w+recoveredFor <= windows; w++ {
		if allOf(w, w+recoveredFor, full) {
			r.Recovered = true
			r.Recovery = time.Duration(w)*time.Second - slowTo
			break
		}
	}
	return r
}

// allOf reports whether f holds for every int in [from, to).
func allOf(from, to int, f func(int) bool) bool {
	for i := from; i < to; i++ {
		if !f(i) {
			return false
		}
	}
	return true
}

// quantile returns the q-quantile of sorted, or 0 if it is empty.
func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[int(q*float64(len(sorted)-1))]
}
