package main

import (
	"context"
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
	require.NoError(t, run(context.Background(), &out, options{Duration: 6 * time.Second}), out.String())
	got := out.String()
	t.Log("\n" + got)

	assert.Contains(t, got, "/hystrix/")
	assert.Regexp(t, `(?m)^\d+s +GetUser +3 +[0-9.]+ +33 % +Open 1 Closed 2$`, got,
		"three hosts, the failing one's errors a third of a host's, its circuit open and the others closed")
	assert.Contains(t, got, "/metrics: 3 of 3 instances connected", "the Turbine's instances, as Prometheus reads them")
}

// A duration that is not positive is refused, naming the flag; it used
// to end the traffic before the stream was read, and the run failed with
// the stream request's "context deadline exceeded".
func TestRunRejectsANonPositiveDuration(t *testing.T) {
	for _, d := range []time.Duration{0, -time.Second} {
		assert.ErrorContains(t, run(context.Background(), &strings.Builder{}, options{Duration: d}), "-duration", "%v", d)
	}
}
