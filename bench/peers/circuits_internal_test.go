package peers

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

var errShort = errors.New("short-circuited")

func isShort(err error) bool { return errors.Is(err, errShort) }

func TestJudge(t *testing.T) {
	cases := []struct {
		name  string
		pass  bool
		err   error
		short func(error) bool
		want  verdict
	}{
		{"passing nil", true, nil, isShort, right},
		{"passing failure", true, errFailure, isShort, wrong},
		{"passing wrong value", true, errWrongValue, isShort, wrong},
		{"passing short-circuit", true, errShort, isShort, wrong},
		{"failing nil", false, nil, isShort, wrong},
		{"failing failure", false, errFailure, isShort, right},
		{"failing wrapped failure", false, fmt.Errorf("cmd: %w", errFailure), isShort, right},
		{"failing short-circuit", false, errShort, isShort, rightShorted},
		{"failing other error", false, errors.New("other"), isShort, wrong},
		{"failing wrong value", false, errWrongValue, isShort, wrong},
		{"failing short-circuit, row never shorts", false, errShort, nil, wrong},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, judge(c.pass, c.err, c.short))
		})
	}
}

func TestShareSplitsExactly(t *testing.T) {
	for _, n := range []int{0, 1, 74, 75, 76, 1000} {
		for _, callers := range callerCounts {
			total, lo, hi := 0, n, 0
			for i := range callers {
				s := share(n, callers, i)
				total += s
				lo, hi = min(lo, s), max(hi, s)
			}
			assert.Equal(t, n, total, "n=%d callers=%d", n, callers)
			assert.LessOrEqual(t, hi-lo, 1, "n=%d callers=%d", n, callers)
		}
	}
}

func TestCheckValue(t *testing.T) {
	assert.NoError(t, checkValue(answer, nil))
	assert.ErrorIs(t, checkValue(answer+1, nil), errWrongValue)
	assert.ErrorIs(t, checkValue(0, errFailure), errFailure)
}

// TestRowsAnswerRightly runs every row a few dozen times with passing and
// failing work and checks each answer the way the benchmark does, so a row
// that gives a wrong result is caught without running benchmarks.
func TestRowsAnswerRightly(t *testing.T) {
	for _, r := range append(peerRows(), ourRows...) {
		t.Run(r.name, func(t *testing.T) {
			for _, mode := range []struct {
				pass bool
				w    work
			}{{true, passes}, {false, fails}} {
				if r.failingOnly && mode.pass || r.passingOnly && !mode.pass {
					continue
				}
				call := r.prepare(t, 2, mode.w)
				for i := range 40 {
					err := call()
					assert.NotEqual(t, wrong, judge(mode.pass, err, r.shortCircuited),
						"pass=%t call %d: %v", mode.pass, i, err)
				}
			}
		})
	}
}

func TestBudgetsNameRows(t *testing.T) {
	rows := rowsByName()
	names := map[string]bool{}
	for _, g := range budgets {
		_, row := rows[g.row]
		_, base := rows[g.base]
		assert.True(t, row && base, "budget %s names a row BenchmarkCircuits lacks", g.name())
		assert.Positive(t, g.limit, g.name())
		assert.False(t, names[g.name()], "budget %s twice", g.name())
		names[g.name()] = true
	}
}

func TestMedian(t *testing.T) {
	assert.Equal(t, 2.0, median([]float64{3, 1, 2}))
	assert.Equal(t, 2.5, median([]float64{4, 1, 3, 2}))
}

func TestQuantile(t *testing.T) {
	sorted := []float64{1, 2, 3, 4, 5}
	assert.Equal(t, 2.0, quantile(sorted, 0.25))
	assert.Equal(t, 3.0, quantile(sorted, 0.5))
	assert.Equal(t, 5.0, quantile(sorted, 1))
	assert.Equal(t, 1.5, quantile([]float64{1, 2}, 0.5))
}

// TestReferenceRowFirst checks that the first rxhystrix row, which
// benchreport divides every row of a table by, is the plain Execute:
// the drop-in's row, in a file whose init ran first, had taken its place.
func TestReferenceRowFirst(t *testing.T) {
	if assert.NotEmpty(t, ourRows) {
		assert.Equal(t, "rxhystrix-semaphore", ourRows[0].name)
	}
	rows := append(peerRows(), ourRows...)
	for _, r := range peerRows() {
		assert.NotContains(t, r.name, "rxhystrix", "peer row %s would be taken for ours", r.name)
	}
	assert.Equal(t, "rxhystrix-hystrixgo", rows[len(rows)-1].name)
}
