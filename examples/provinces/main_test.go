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

func TestRunIsolatesTheHungProvince(t *testing.T) {
	var out strings.Builder
	err := run(&out, options{
		Provinces: 30, Rate: 300, Latency: 10 * time.Millisecond, Timeout: time.Second,
		SleepWindow: time.Second, Volume: 10, Hang: 3 * time.Second, After: 500 * time.Millisecond,
	})
	require.NoError(t, err, out.String())
	got := out.String()
	t.Log("\n" + got)

	isolated, shared, ok := strings.Cut(got, "without isolation:")
	require.True(t, ok, "the output has a run without isolation")
	isolated, isolatedTail, ok := strings.Cut(isolated, "one line, client.Transport = httpcommand.New(...)")
	require.True(t, ok, "the output has a run through the transport")
	isolatedTail, overGRPC, ok := strings.Cut(isolatedTail, "over gRPC, grpc.WithUnaryInterceptor(grpccommand.UnaryClientInterceptor(...))")
	require.True(t, ok, "the output has a run over gRPC")
	overGRPC, rehearsal, ok := strings.Cut(overGRPC, "a rehearsal, Config.Faults:")
	require.True(t, ok, "the output has a rehearsal")

	// With a pool per URL, the healthy provinces keep their service.
	healthy := submatch(t, isolated, `29 healthy provinces: (\d+)/(\d+) pushes succeeded .*, p50 \S+, p99 \S+`)
	assert.GreaterOrEqual(t, rate(t, healthy[1], healthy[2]), 99.0, "isolated healthy provinces' success rate")

	// The hung one gets its answers from the fallback: timeouts first,
	// then its own pool is full, then its breaker is open.
	hung := submatch(t, isolated, `Henan: 0/(\d+) pushes succeeded \(0\.0%\); (\d+) timed out, (\d+) rejected by the pool, (\d+) short-circuited: answered by the fallback\n`)
	for i, what := range []string{"timed out", "rejected", "short-circuited"} {
		assert.Positive(t, atoi(t, hung[2+i]), what)
	}
	assert.Equal(t, atoi(t, hung[1]), atoi(t, hung[2])+atoi(t, hung[3])+atoi(t, hung[4]), "every push to Henan is accounted for")

	// It recovers: the breaker opened, then a trial after the sleep
	// window closed it.
	assert.Regexp(t, `(?s)its breaker:\n +\+\d+\.\d+s  CLOSED -> OPEN \(\d+ requests in the window, \d+% errors\)\n.*OPEN -> HALF_OPEN\n +\+\d+\.\d+s  HALF_OPEN -> CLOSED\n  then`, isolated)
	after := submatch(t, isolated, `then, for 500ms: all 30 provinces: (\d+)/(\d+) pushes succeeded`)
	assert.GreaterOrEqual(t, rate(t, after[1], after[2]), 99.0, "success rate after the recovery")

	// One line, the transport, isolates as well: the healthy provinces
	// keep their service while Henan's pushes are answered by the
	// fallback.
	viaTransport := submatch(t, isolatedTail, `29 healthy provinces: (\d+)/(\d+) pushes succeeded .*, p50 \S+, p99 \S+`)
	assert.GreaterOrEqual(t, rate(t, viaTransport[1], viaTransport[2]), 99.0, "healthy provinces' success rate through the transport")
	hungTransport := submatch(t, isolatedTail, `Henan: 0/(\d+) pushes succeeded \(0\.0%\); (\d+) timed out, (\d+) rejected by the pool, (\d+) short-circuited: answered by the fallback\n`)
	assert.Equal(t, atoi(t, hungTransport[1]), atoi(t, hungTransport[2])+atoi(t, hungTransport[3])+atoi(t, hungTransport[4]))
	assert.Positive(t, atoi(t, hungTransport[2]), "timed out through the transport")

	// So does one option of the gRPC connections.
	viaGRPC := submatch(t, overGRPC, `29 healthy provinces: (\d+)/(\d+) pushes succeeded .*, p50 \S+, p99 \S+`)
	assert.GreaterOrEqual(t, rate(t, viaGRPC[1], viaGRPC[2]), 99.0, "healthy provinces' success rate over gRPC")
	hungGRPC := submatch(t, overGRPC, `Henan: 0/(\d+) pushes succeeded \(0\.0%\); (\d+) timed out, (\d+) rejected by the pool, (\d+) short-circuited: answered by the fallback\n`)
	assert.Equal(t, atoi(t, hungGRPC[1]), atoi(t, hungGRPC[2])+atoi(t, hungGRPC[3])+atoi(t, hungGRPC[4]))
	assert.Positive(t, atoi(t, hungGRPC[2]), "timed out over gRPC")
	assert.Positive(t, atoi(t, hungGRPC[3]), "rejected by the address's pool over gRPC")

	// The rehearsal, a delay injected into Henan's command with its
	// network healthy, plays out as the hang: the healthy provinces are
	// served, and each push to Henan that ran was delayed into its
	// timeout.
	viaRehearsal := submatch(t, rehearsal, `29 healthy provinces: (\d+)/(\d+) pushes succeeded .*, p50 \S+, p99 \S+`)
	assert.GreaterOrEqual(t, rate(t, viaRehearsal[1], viaRehearsal[2]), 99.0, "healthy provinces' success rate in the rehearsal")
	hungRehearsal := submatch(t, rehearsal, `Henan: 0/(\d+) pushes succeeded \(0\.0%\); (\d+) timed out, (\d+) rejected by the pool, (\d+) short-circuited: answered by the fallback\n`)
	for i, what := range []string{"timed out", "rejected", "short-circuited"} {
		assert.Positive(t, atoi(t, hungRehearsal[2+i]), "%s in the rehearsal", what)
	}
	assert.Equal(t, atoi(t, hungRehearsal[1]), atoi(t, hungRehearsal[2])+atoi(t, hungRehearsal[3])+atoi(t, hungRehearsal[4]))
	delayed := submatch(t, rehearsal, `faults injected: (\d+) pushes delayed\n`)
	assert.Equal(t, atoi(t, hungRehearsal[2]), atoi(t, delayed[1]), "every push to Henan that ran was delayed into its timeout")

	// Without isolation the hung province takes the healthy ones down.
	healthyShared := submatch(t, shared, `29 healthy provinces: (\d+)/(\d+) pushes succeeded \S+; \d+ timed out, (\d+) rejected by the pool`)
	assert.Less(t, rate(t, healthyShared[1], healthyShared[2]), 90.0, "healthy provinces' success rate in a shared pool")
	assert.Positive(t, atoi(t, healthyShared[3]), "healthy provinces' pushes rejected by the shared pool")
	assert.Regexp(t, `healthy provinces whose breaker opened: \d+ of 29\n$`, shared)
}

// A hang too short to open the hung province's breaker: the replay does
// not wait for that breaker to close, which it never opened, and says so.
func TestRunEndsWhenTheHungBreakerNeverOpens(t *testing.T) {
	var out strings.Builder
	err := run(&out, options{
		Provinces: 2, Rate: 20, Latency: 10 * time.Millisecond, Timeout: time.Second,
		SleepWindow: time.Second, Volume: 20, Hang: 200 * time.Millisecond, After: 100 * time.Millisecond,
	})
	require.NoError(t, err, out.String())
	assert.Contains(t, out.String(), "its breaker:\n    stayed closed: too few pushes to Tianjin failed in its window to open it\n")
}

func TestRunRejectsBadOptions(t *testing.T) {
	err := run(&strings.Builder{}, options{Provinces: 40, Rate: 1, Latency: 1, Timeout: 1, SleepWindow: 1, Hang: 1})
	assert.ErrorContains(t, err, "Provinces")
	err = run(&strings.Builder{}, options{Provinces: 30})
	assert.ErrorContains(t, err, "Rate")
	// A rate past one push a nanosecond has no tick to send them on.
	err = run(&strings.Builder{}, options{Provinces: 2, Rate: 2_000_000_000, Latency: 1, Timeout: 1, SleepWindow: 1, Hang: 1, After: 1})
	assert.ErrorContains(t, err, "one a nanosecond")
	// Without a time after the hang, its recovery is never measured.
	var out strings.Builder
	err = run(&out, options{Provinces: 2, Rate: 20, Latency: 1, Timeout: 1, SleepWindow: 1, Hang: 1})
	assert.ErrorContains(t, err, "After")
	assert.Empty(t, out.String())
}

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

func rate(t *testing.T, ok, total string) float64 {
	t.Helper()
	n := atoi(t, total)
	require.Positive(t, n)
	return 100 * float64(atoi(t, ok)) / float64(n)
}

// The rehearsal is to play out as the real hang, whose pushes are never
// answered and so all run into their timeout. It injected a delay of
// -hang, though: with a hang shorter than the timeout, every push to the
// province was delayed and then succeeded, while the real hang's all
// timed out.
func TestRehearsalDelaysBeyondTheTimeoutAsTheHangDoes(t *testing.T) {
	var out strings.Builder
	err := run(&out, options{
		Provinces: 2, Rate: 20, Latency: 10 * time.Millisecond, Timeout: 300 * time.Millisecond,
		SleepWindow: time.Second, Volume: 20, Hang: 100 * time.Millisecond, After: 100 * time.Millisecond,
	})
	if !assert.NoError(t, err, out.String()) {
		return
	}
	got := out.String()
	isolated, rest, ok := strings.Cut(got, "one line, client.Transport")
	assert.True(t, ok, got)
	_, rehearsal, ok := strings.Cut(rest, "a rehearsal, Config.Faults:")
	assert.True(t, ok, got)
	rehearsal, _, _ = strings.Cut(rehearsal, "without isolation:")

	hanging := submatch(t, isolated, `Tianjin: (\d+)/(\d+) pushes succeeded`)
	assert.Equal(t, "0", hanging[1], "the real hang answers no push:\n%s", got)
	rehearsed := submatch(t, rehearsal, `Tianjin: (\d+)/(\d+) pushes succeeded .*; (\d+) timed out`)
	assert.Equal(t, "0", rehearsed[1], "the rehearsal answers no push either:\n%s", got)
	assert.Equal(t, rehearsed[2], rehearsed[3], "every push to Tianjin timed out, as in the hang:\n%s", got)
}
