package reliability

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/breaker"
	"github.com/rxhystrix/rxhystrix/command"
	"github.com/rxhystrix/rxhystrix/metricsstream"
)

// faultCase is a fault and what a command must make of it.
type faultCase struct {
	fault fault
	// event is what each execution that meets the fault records.
	event metricsstream.EventType
	// cause says whether run's error is the one the fault causes; nil
	// for faults that end in timeouts, which must cause no FAILURE.
	cause func(error) bool
}

var faultCases = []faultCase{
	{fault: hang, event: metricsstream.Timeout},
	{fault: slow, event: metricsstream.Timeout},
	{fault: refused, event: metricsstream.Failure, cause: func(err error) bool {
		return errors.Is(err, syscall.ECONNREFUSED)
	}},
	{fault: reset, event: metricsstream.Failure, cause: func(err error) bool {
		return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
	}},
	{fault: serverError, event: metricsstream.Failure, cause: func(err error) bool {
		var s *statusError
		return errors.As(err, &s) && s.code == 503
	}},
	{fault: garbage, event: metricsstream.Failure, cause: func(err error) bool {
		var s *json.SyntaxError
		return errors.As(err, &s)
	}},
}

// isolationModes are the two ways the fault tests isolate downstreams:
// a worker pool per URL (WithPoolKey), and a semaphore per command key.
var isolationModes = []struct {
	name      string
	isolation command.Isolation
}{
	{"pool per URL", command.PoolIsolation},
	{"semaphore", command.SemaphoreIsolation},
}

// TestFaults breaks a downstream server in each way a network dependency
// breaks, under each isolation, while a healthy server of the same group
// is called alongside: the broken one's calls record the fault's event,
// its breaker opens, fallbacks serve, and once the server is healed the
// breaker lets a trial through and closes; the healthy server's calls
// never notice.
func TestFaults(t *testing.T) {
	for _, mode := range isolationModes {
		t.Run(mode.name, func(t *testing.T) {
			for _, fc := range faultCases {
				t.Run(fc.fault.String(), func(t *testing.T) { testFault(t, mode.isolation, fc) })
			}
		})
	}
}

// faultScene is a registry with a faulty and a healthy downstream, and a
// client that calls them.
type faultScene struct {
	reg             *command.Registry
	faulty, healthy *downstream
}

// newFaultScene makes the scene; perURL gives each URL a pool of its own.
func newFaultScene(t *testing.T, isolation command.Isolation, perURL bool) *faultScene {
	t.Helper()
	r := command.NewRegistry()
	t.Cleanup(r.Close)
	client := newJSONClient(t)
	faultySrv, healthySrv := newFaultServer(t, "faulty"), newFaultServer(t, "healthy")
	for _, pool := range []string{faultySrv.url, healthySrv.url, "downstreams"} {
		require.NoError(t, r.ConfigurePool(pool, command.PoolConfig{CoreSize: poolSize}))
	}
	return &faultScene{
		reg:     r,
		faulty:  newDownstream(r, client, faultySrv, "faulty", downstreamConfig(isolation, faultyTimeout), perURL),
		healthy: newDownstream(r, client, healthySrv, "healthy", downstreamConfig(isolation, healthyTimeout), perURL),
	}
}

// start calls the faulty server from faultyCallers goroutines and the
// healthy one from healthyCallers goroutines, logging the healthy calls.
func (s *faultScene) start(healthyLog *callLog) *load {
	ctx := context.Background()
	l := newLoad()
	l.run(faultyCallers, faultyPeriod, func() { _, _ = s.faulty.call(ctx) })
	l.run(healthyCallers, healthyPeriod, func() {
		start := time.Now()
		a, err := s.healthy.call(ctx)
		healthyLog.record(s.healthy, start, a, err)
	})
	return l
}

func testFault(t *testing.T, isolation command.Isolation, fc faultCase) {
	s := newFaultScene(t, isolation, true)
	s.faulty.wantCause = fc.cause
	if fc.cause == nil {
		s.faulty.wantCause = func(error) bool { return false }
	}
	faultyBreaker := s.faulty.cmd.Breaker()
	transitions := watchTransitions(t, faultyBreaker)
	ctx := context.Background()

	// Baseline: the same load, nothing broken.
	var before callLog
	l := s.start(&before)
	require.Eventually(t, func() bool { return before.count() >= 200 }, stateDeadline, statePollPeriod)
	l.halt()
	require.Empty(t, before.bad, "healthy calls before the fault")
	require.Equal(t, breaker.Closed, faultyBreaker.State(), "before the fault")
	require.Zero(t, s.faulty.seen(command.CommandFailure), "faulty server's calls failed before the fault")
	if n := s.faulty.seen(command.TimeoutFailure); n > 0 {
		t.Logf("%d calls to the faulty server timed out before the fault: the machine is slow", n)
	}

	// The fault: the breaker opens and fallbacks serve.
	var during callLog
	s.faulty.srv.set(fc.fault)
	l = s.start(&during)
	require.Eventually(t, func() bool { return faultyBreaker.State() == breaker.Open }, stateDeadline, statePollPeriod,
		"the breaker opens on %v", fc.fault)
	require.Eventually(t, func() bool { return s.faulty.seen(command.ShortCircuitFailure) >= 20 }, stateDeadline, statePollPeriod,
		"the open breaker short-circuits to the fallback")

	// Healed: the sleep window passes, a trial succeeds, the breaker closes.
	s.faulty.srv.set(healthy)
	require.Eventually(t, transitions.endsClosed, stateDeadline, statePollPeriod, "a trial closes the breaker")
	l.halt()
	a, err := s.faulty.call(ctx)
	require.NoError(t, err)
	assert.False(t, a.Fallback, "the healed server answers")
	assert.Equal(t, breaker.Closed, faultyBreaker.State())

	// What the faulty calls recorded.
	all := transitions.get()
	t.Logf("faulty: %d failed, %d timed out, %d short-circuited, %d pool-rejected, %d semaphore-rejected; transitions %v",
		s.faulty.seen(command.CommandFailure), s.faulty.seen(command.TimeoutFailure), s.faulty.seen(command.ShortCircuitFailure),
		s.faulty.seen(command.PoolRejectedFailure), s.faulty.seen(command.SemaphoreRejectedFailure), all)
	assert.Equal(t, breaker.Closed, all[0].From, "transitions %v", all)
	assert.Equal(t, breaker.Open, all[0].To, "transitions %v", all)
	for i := 1; i < len(all); i++ {
		assert.Equal(t, all[i-1].To, all[i].From, "transitions chain: %v", all)
	}
	failure := command.CommandFailure
	if fc.event == metricsstream.Timeout {
		failure = command.TimeoutFailure
	}
	assert.Positive(t, s.faulty.seen(failure), "the fallback saw %v", failure)
	if n := s.faulty.wrongCauses.Load(); n > 0 {
		t.Errorf("%d failures of %v were not the fault's: last %v", n, fc.fault, *s.faulty.wrongCause.Load())
	}
	m := s.faulty.cmd.Metrics()
	require.Eventually(t, func() bool {
		return m.CumulativeCount(fc.event) > 0 && m.CumulativeCount(metricsstream.ShortCircuited) > 0
	}, stateDeadline, statePollPeriod, "the metrics count %v and SHORT_CIRCUITED", fc.event)
	assert.Positive(t, m.CumulativeCount(metricsstream.FallbackSuccess))
	assert.Zero(t, m.CumulativeCount(metricsstream.FallbackRejection))
	if fc.event == metricsstream.Timeout {
		assert.Zero(t, m.CumulativeCount(metricsstream.Failure), "a %v server causes no FAILURE", fc.fault)
	}

	// The healthy calls never noticed.
	assert.Empty(t, during.bad, "healthy calls during the fault")
	checkUntouched(t, s.healthy, before.count()+during.count())
	// Pools have no queue, so a healthy call could wait behind the faulty
	// server only by being rejected, which checkUntouched rules out. The
	// latency check is a generous guard against a general slowdown: the
	// machine is shared, and loopback latencies under the race detector
	// vary by tens of milliseconds from run to run.
	p99Before, p99During := before.p99(), during.p99()
	t.Logf("healthy p99 %v before, %v during the fault (%d and %d calls)", p99Before, p99During, before.count(), during.count())
	assert.LessOrEqual(t, p99During, 5*p99Before+faultyTimeout, "healthy p99 during the fault")
}

// checkUntouched checks that the metrics of a healthy downstream hold
// exactly its calls, all successful: none rejected, short-circuited,
// timed out, failed or served by a fallback.
func checkUntouched(t *testing.T, d *downstream, calls int) {
	t.Helper()
	m := d.cmd.Metrics()
	assert.Eventually(t, func() bool { return m.CumulativeCount(metricsstream.Success) == int64(calls) },
		stateDeadline, statePollPeriod, "SUCCESS once per healthy call (%d)", calls)
	for _, e := range []metricsstream.EventType{metricsstream.Failure, metricsstream.Timeout, metricsstream.ShortCircuited,
		metricsstream.PoolRejected, metricsstream.SemaphoreRejected, metricsstream.FallbackSuccess, metricsstream.Cancelled} {
		assert.Zero(t, m.CumulativeCount(e), "healthy %v", e)
	}
	assert.Equal(t, breaker.Closed, d.cmd.Breaker().State())
}

// TestSharedPoolStarvesHealthyCalls is the control of TestFaults: without
// a pool per URL, both downstreams share their group's pool, the hung
// server's calls fill it, and the healthy server's calls are rejected. So
// the isolation checks of TestFaults can fail.
func TestSharedPoolStarvesHealthyCalls(t *testing.T) {
	s := newFaultScene(t, command.PoolIsolation, false)
	s.faulty.srv.set(hang)
	var during callLog
	l := s.start(&during)
	require.Eventually(t, func() bool { return s.healthy.seen(command.PoolRejectedFailure) >= 5 }, stateDeadline, statePollPeriod,
		"healthy calls rejected by the shared pool")
	l.halt()
	assert.NotEmpty(t, during.bad, "healthy calls served by the fallback")
	m := s.healthy.cmd.Metrics()
	assert.Eventually(t, func() bool { return m.CumulativeCount(metricsstream.PoolRejected) >= 5 },
		stateDeadline, statePollPeriod, "THREAD_POOL_REJECTED on the healthy key")
}
