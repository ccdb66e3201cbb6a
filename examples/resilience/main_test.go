package main

import (
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

func TestRunPrintsEachWay(t *testing.T) {
	var out strings.Builder
	require.NoError(t, run(&out, options{Calls: 200, Median: 5 * time.Millisecond, Seed: 1}))
	got := out.String()
	t.Log("\n" + got)

	p99s := map[string]time.Duration{}
	row := func(name string) (success, load float64) {
		m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + ` +([0-9.]+)% +\S+ +(\S+) +([0-9.]+)x\n`).FindStringSubmatch(got)
		require.NotNil(t, m, "a row for %q", name)
		success, _ = strconv.ParseFloat(m[1], 64)
		p99, err := time.ParseDuration(m[2])
		require.NoError(t, err)
		p99s[name] = p99
		load, _ = strconv.ParseFloat(m[3], 64)
		return success, load
	}
	plain, plainLoad := row("plain")
	retried, retryLoad := row("retry (3 attempts)")
	_, hedgeLoad := row("hedge at p95")
	_, limitedLoad := row("rate limit 200/s")
	_, streamLoad := row("stream")
	_, hedgedStreamLoad := row("stream, hedge at p95")

	// The hedges are what cuts the slow tail: without them a call's p99
	// is one of the 3 % that take ten times the median.
	assert.Greater(t, hedgeLoad, 1.0, "the slow tail is hedged")
	assert.Greater(t, hedgedStreamLoad, 1.0, "the stream's slow tail is hedged")
	assert.Less(t, p99s["hedge at p95"], p99s["plain"]*3/4, "hedges at p95 cut the p99")
	assert.Less(t, p99s["stream, hedge at p95"], p99s["stream"]*3/4, "hedges at p95 cut the stream's p99")

	assert.Equal(t, 1.0, plainLoad, "plain: one downstream call per call")
	assert.Greater(t, retried, plain, "retries turn failures into successes")
	assert.Greater(t, retryLoad, 1.0, "at the cost of more downstream calls")
	assert.GreaterOrEqual(t, hedgeLoad, 1.0)
	assert.Less(t, hedgeLoad, 1.5, "hedges go only to the slow tail")
	assert.Less(t, limitedLoad, 0.9, "the limit keeps load off the downstream")
	assert.Equal(t, 1.0, streamLoad, "a stream: one downstream call per call")
	assert.GreaterOrEqual(t, hedgedStreamLoad, 1.0)
	assert.Less(t, hedgedStreamLoad, 1.5, "a stream's hedges go only to the slow tail")
}

func TestRunRejectsBadOptions(t *testing.T) {
	assert.Error(t, run(&strings.Builder{}, options{}))
}
