package adaptive

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// summarize counts each call once, takes percentiles in scenario time,
// and finds the first of three full windows after B recovered.
func TestSummarize(t *testing.T) {
	tl := Timeline{Before: time.Second, Slow: 2 * time.Second, After: 6 * time.Second}
	v := Variant{Name: "v", Rate: 10}
	calls := make([]call, 90) // 10 a second for 9 s
	for i := range calls {
		w := i / 10
		calls[i] = call{wait: time.Duration(i) * time.Millisecond, answered: true}
		switch {
		case w >= 1 && w < 3: // slow: half answered
			calls[i].answered = i%2 == 0
		case w == 3 || w == 5: // after: a window below 95 %, twice
			calls[i].answered = i%10 != 0
		}
	}
	calls[5].err = context.DeadlineExceeded
	r := summarize(v, Row{Name: "r"}, tl, calls, 2)
	assert.Equal(t, 90, r.Calls)
	assert.Equal(t, 20, r.Slow)
	assert.Equal(t, 10, r.AnsweredSlow)
	assert.Equal(t, 1, r.Errors)
	assert.Equal(t, r.Calls, r.Answered+r.Fallback+r.Errors)
	assert.Equal(t, 90-10-2-1, r.Answered)
	assert.True(t, r.Recovered)
	assert.Equal(t, 3*time.Second, r.Recovery, "windows 6, 7, 8 are the first three full ones in a row")
	var waits []time.Duration
	for _, c := range calls {
		if c.answered && c.err == nil {
			waits = append(waits, 2*c.wait) // doubled into scenario time
		}
	}
	assert.Equal(t, waits[len(waits)/2-1+len(waits)%2], r.P50)
	assert.Equal(t, waits[int(0.99*float64(len(waits)-1))], r.P99)

	calls[75].answered = false // window 7 is no longer full: never three in a row
	r = summarize(v, Row{Name: "r"}, tl, calls, 2)
	assert.False(t, r.Recovered)
}

// A short run of every row: each call is counted once, and the table has
// a line per row.
func TestRunShort(t *testing.T) {
	if testing.Short() {
		t.Skip("runs for a few seconds")
	}
	tl := Timeline{Before: time.Second, Slow: 2 * time.Second, After: 2 * time.Second,
		Usual: 200 * time.Millisecond, Slowed: 500 * time.Millisecond}
	v := Variants[0]
	results, err := Run(context.Background(), v, Options{Timeline: tl, Scale: 5})
	require.NoError(t, err)
	require.Len(t, results, len(Rows(v)))
	for _, r := range results {
		assert.Equal(t, v.Rate*5, r.Calls, r.Row.Name)
		assert.Equal(t, r.Calls, r.Answered+r.Fallback+r.Errors, r.Row.Name)
		assert.LessOrEqual(t, r.LimitMin, r.LimitMax, r.Row.Name)
	}
	assert.Equal(t, 10, results[0].LimitMin, "the seed's pool does not move")
	var b strings.Builder
	WriteTable(&b, results)
	assert.Equal(t, 2+len(results), strings.Count(b.String(), "\n"))
}
