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

func TestRun(t *testing.T) {
	var out strings.Builder
	require.NoError(t, run(&out, options{Phase: time.Second}), out.String())
	got := out.String()
	t.Log("\n" + got)

	assert.Regexp(t, `busy-1 +CLOSED -> OPEN`, got)
	assert.Regexp(t, `quiet +CLOSED -> OPEN on \d+ requests`, got, "the quiet instance opens with the fleet")
	assert.Regexp(t, `quiet +HALF_OPEN -> CLOSED`, got, "and recovers by its own trial")
	assert.NotRegexp(t, `quiet-local +\w+ ->`, got, "the local breaker of a quiet instance never opens")

	row := func(name string) (whileDown, shortCircuited int) {
		m := regexp.MustCompile(`(?m)^` + name + ` +\d+ +(\d+) +(\d+) `).FindStringSubmatch(got)
		require.NotNil(t, m, "row of %s", name)
		whileDown, _ = strconv.Atoi(m[1])
		shortCircuited, _ = strconv.Atoi(m[2])
		return whileDown, shortCircuited
	}
	quietDown, quietShort := row("quiet")
	localDown, localShort := row("quiet-local")
	assert.Positive(t, quietShort, "the quiet instance short-circuits")
	assert.Zero(t, localShort)
	assert.Less(t, quietDown, localDown, "the quiet instance sends fewer requests into the dead service")
}
