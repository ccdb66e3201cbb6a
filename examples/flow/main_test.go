package main

import (
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestRunWalksEveryBranch(t *testing.T) {
	var out strings.Builder
	err := run(&out, options{Timeout: 100 * time.Millisecond, SleepWindow: 300 * time.Millisecond})
	require.NoError(t, err, out.String())
	got := out.String()

	steps := []struct{ name, events, answer string }{
		{"Execute", "[SUCCESS]", "user-1"},
		{"Queue(...).Get", "[SUCCESS]", "user-2"},
		{"Observe(...).First", "[SUCCESS]", "user-3"},
		{"ToObservable(...).First", "[SUCCESS]", "user-4"},
		{"user 1 again: request cache", "[RESPONSE_FROM_CACHE]", "user-1"},
		{"pool of 1 is busy", "[THREAD_POOL_REJECTED, FALLBACK_SUCCESS]", "anonymous (fallback after REJECTED_THREAD_EXECUTION)"},
		{"1 semaphore permit is taken", "[SEMAPHORE_REJECTED, FALLBACK_SUCCESS]", "anonymous (fallback after REJECTED_SEMAPHORE_EXECUTION)"},
		{"run fails, fallback", "[FAILURE, FALLBACK_SUCCESS]", "anonymous (fallback after COMMAND_EXCEPTION)"},
		{"run fails, fallback fails", "[FAILURE, FALLBACK_FAILURE]", "error: GetUser failed and fallback failed: no default for user 0"},
		{"run hangs: timeout", "[TIMEOUT, FALLBACK_SUCCESS]", "anonymous (fallback after TIMEOUT)"},
		{"bad request: no fallback", "[BAD_REQUEST]", "error: bad request: user id -1 is negative"},
		{"breaker open: short-circuit", "[SHORT_CIRCUITED, FALLBACK_SUCCESS]", "anonymous (fallback after SHORTCIRCUIT)"},
		{"after the sleep window: trial", "[SUCCESS]", "user-10"},
		{"breaker closed again", "[SUCCESS]", "user-11"},
	}
	for _, s := range steps {
		line := `(?m)^  ` + regexp.QuoteMeta(s.name) + ` +` + regexp.QuoteMeta(s.events) + ` +` + regexp.QuoteMeta(s.answer)
		assert.Regexp(t, line, got, "step %q", s.name)
	}
	assert.Contains(t, got, "20 failures in a row: 20 x [FAILURE, FALLBACK_SUCCESS]")
	assert.Regexp(t, `breaker GetUser: CLOSED -> OPEN: \d+ requests in the window, \d+% errors`, got)
	// The request log: the cache hit, and executions that read the same
	// grouped.
	assert.Regexp(t, `(?s)request log:\n.*`+
		`  GetUser\[SUCCESS\]\[\d+ms\]x8\n.*`+
		`  GetUser\[SUCCESS, RESPONSE_FROM_CACHE\]\[0ms\]\n.*`+
		`  GetUser\[FAILURE, FALLBACK_SUCCESS\]\[\d+ms\]x21\n.*`+
		`  GetUser\[TIMEOUT, FALLBACK_SUCCESS\]\[\d+ms\]\n.*`+
		`  GetUser\[SHORT_CIRCUITED, FALLBACK_SUCCESS\]\[0ms\]\n`+
		`breaker transitions:`, got)
	assert.Contains(t, got, "breaker transitions:\n"+
		"  GetUser: CLOSED -> OPEN\n"+
		"  GetUser: OPEN -> HALF_OPEN\n"+
		"  GetUser: HALF_OPEN -> CLOSED\n")
}

// Bad durations are refused with an error naming the flag. A negative
// sleep window used to panic in command.New; a zero one (Hystrix's 5s in
// the breaker) had the trial refused and the walk wait 20s for a close; a
// negative timeout (none) left the hanging run hanging for 20s.
func TestRunRejectsBadDurations(t *testing.T) {
	for _, tc := range []struct {
		opts options
		flag string
	}{
		{options{Timeout: 100 * time.Millisecond, SleepWindow: -time.Second}, "-sleep-window"},
		{options{Timeout: -time.Millisecond, SleepWindow: 300 * time.Millisecond}, "-timeout"},
		{options{Timeout: 0, SleepWindow: 300 * time.Millisecond}, "-timeout"},
		{options{Timeout: 100 * time.Millisecond, SleepWindow: 0}, "-sleep-window"},
	} {
		assert.ErrorContains(t, run(io.Discard, tc.opts), tc.flag, "%+v", tc.opts)
	}
}
