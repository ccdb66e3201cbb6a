package main

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestRunReplaysTheArticle(t *testing.T) {
	var out strings.Builder
	err := run(&out, options{Scale: 0.2})
	require.NoError(t, err, out.String())
	got := out.String()

	assert.Contains(t, got, "wuqq: Timeout 600ms, MaxConcurrentRequests 10, SleepWindow 1s, RequestVolumeThreshold 10, ErrorPercentThreshold 30\n")
	// Steps in order, each with its answers.
	assert.Regexp(t, `(?s)`+
		`1\. 13 concurrent requests[^\n]*\n`+
		`   10 x ok\n`+
		`    3 x handle error: wuqq could not acquire a semaphore for execution\n`+
		`2\. [^\n]*\n`+
		`   10 x handle error: wuqq failed \(cause: Get "http://127\.0\.0\.1:\d+": [^\n]+\)\n`+
		`   breaker CLOSED -> OPEN: \d+ requests in the window, \d+% errors\n`+
		`3\. [^\n]*\n`+
		`   10 x handle error: wuqq short-circuited\n`+
		`4\. the network is back; after the sleep window \(1s\), 10 concurrent requests:\n`+
		`    9 x handle error: wuqq short-circuited\n`+
		`    1 x ok\n`+
		`   breaker HALF_OPEN -> CLOSED\n`+
		`5\. [^\n]*\n`+
		`   10 x ok\n$`, got)
}

func TestRunRejectsANonPositiveScale(t *testing.T) {
	err := run(&strings.Builder{}, options{Scale: 0})
	assert.ErrorContains(t, err, "Scale")
}

// NaN passes a "<= 0" check, and NaN, +Inf or a huge scale turn the
// durations into nonsense (on amd64 a negative time.Duration): they used
// to surface as a breaker's "SleepWindow is -2562047h47m16.854775808s".
func TestRunRejectsAScaleThatIsNotAFinitePositiveNumber(t *testing.T) {
	for _, scale := range []float64{math.NaN(), math.Inf(1), 1e12} {
		err := run(&strings.Builder{}, options{Scale: scale})
		assert.ErrorContains(t, err, "options.Scale is", "scale %v", scale)
	}
}
