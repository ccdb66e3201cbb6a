package main

import (
	"io"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestRun(t *testing.T) {
	var out strings.Builder
	err := run(&out, options{Phase: 1500 * time.Millisecond, Outage: 2 * time.Second})
	require.NoError(t, err, out.String())
	got := out.String()
	t.Log("\n" + got)

	assert.Contains(t, got, "30/s x 0.2s + 4 = 10 workers\n")
	assert.Regexp(t, `pool of 10, timeout 300ms +pool of 10, timeout 500ms\n`, got)

	// cells returns the two cells of a row of part 1: ok, timed out,
	// rejected, failed, and their total. Every call of the phase is in
	// one of them, and none failed: B only answers slowly.
	const phaseCalls = 45 // 30/s for 1.5s
	cells := func(row string) (good, long [5]int) {
		m := submatch(t, got, regexp.QuoteMeta(row)+` +`+cell+` +`+cell+`\n`)
		for i := range 4 {
			good[i], long[i] = atoi(t, m[1+i]), atoi(t, m[5+i])
			good[4] += good[i]
			long[4] += long[i]
		}
		for _, c := range [][5]int{good, long} {
			assert.Zero(t, c[3], "%s: calls failed otherwise", row)
			assert.GreaterOrEqual(t, c[4], phaseCalls*2/3, "%s: the calls of the phase are counted", row)
		}
		return good, long
	}
	const ok, timedOut, rejected, total = 0, 1, 2, 4

	good, long := cells("B answers in 200ms")
	assert.GreaterOrEqual(t, good[ok], good[total]-2, "300ms timeout, B at 200ms")
	assert.GreaterOrEqual(t, long[ok], long[total]-2, "500ms timeout, B at 200ms")

	// B slow: with 300ms every call times out and the pool keeps up; with
	// 500ms the pool is too small and rejects calls.
	good, long = cells("B slows down to 500ms")
	assert.GreaterOrEqual(t, good[timedOut], good[total]*9/10, "300ms timeout, B at 500ms: timeouts")
	assert.LessOrEqual(t, good[rejected], 2, "300ms timeout, B at 500ms: rejections")
	assert.GreaterOrEqual(t, long[rejected], long[total]/6, "500ms timeout, B at 500ms: rejections")

	good, _ = cells("B is back at 200ms")
	assert.GreaterOrEqual(t, good[ok], good[total]-2, "300ms timeout, B back at 200ms")

	// Part 2: the fallbacks serve reads from the cache and queue writes,
	// and the queue is replayed without loss.
	down := submatch(t, got, `B down for 2s: +reads: 0 from B, (\d+) from the local cache, (\d+) failed; writes: 0 saved, (\d+) queued\n`)
	assert.Positive(t, atoi(t, down[1]), "reads served from the local cache")
	assert.Positive(t, atoi(t, down[2]), "reads of products never cached fail")
	assert.Positive(t, atoi(t, down[3]), "writes queued")
	assert.Contains(t, got, "SaveOrder's breaker closed")
	end := submatch(t, got, `orders written (\d+), queued (\d+), replayed (\d+), still queued 0, held by B (\d+): none lost\n$`)
	assert.Equal(t, end[1], end[4], "orders written and held by B")
	assert.Equal(t, end[2], end[3], "orders queued and replayed")
}

func TestRunRejectsBadOptions(t *testing.T) {
	assert.ErrorContains(t, run(&strings.Builder{}, options{}), "Phase")
}

// An outage too short for SaveOrder's breaker to open (the 20 writes of
// the second B was up outnumber its failures) leaves the queued writes
// waiting for a close of the breaker that never comes: the run used to
// wait a minute for the replay and fail. It is refused at once.
func TestRunRejectsAnOutageTooShortToOpenTheBreaker(t *testing.T) {
	done := make(chan error, 1)
	go func() { done <- run(io.Discard, options{Phase: time.Millisecond, Outage: time.Second}) }()
	select {
	case err := <-done:
		assert.ErrorContains(t, err, "-outage 1s is too short")
	case <-time.After(15 * time.Second):
		t.Fatal("-outage 1s accepted: the run waits for a replay that never comes")
	}
}

// cell matches a cell of part 1's table.
const cell = `(\d+) ok, (\d+) timed out, (\d+) rejected, (\d+) failed, p99 \S+`

func submatch(t *testing.T, s, pattern string) []string {
	t.Helper()
	m := regexp.MustCompile(pattern).FindStringSubmatch(s)
	require.NotNil(t, m, "no line matches %q", pattern)
	return m
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	require.NoError(t, err)
	return n
}
