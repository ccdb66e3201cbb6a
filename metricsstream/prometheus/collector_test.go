package prometheus

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/rxhystrix/rxhystrix/internal/clock"
	"github.com/rxhystrix/rxhystrix/metricsstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// commandStatus is a CommandStatusProvider that reports a fixed status.
type commandStatus metricsstream.CommandStatus

func (s commandStatus) CommandStatus() metricsstream.CommandStatus {
	return metricsstream.CommandStatus(s)
}

// poolStatus is a PoolStatusProvider that reports a fixed status.
type poolStatus metricsstream.PoolStatus

func (s poolStatus) PoolStatus() metricsstream.PoolStatus { return metricsstream.PoolStatus(s) }

// record records one execution made of events; it ran for latency when
// latency > 0, and its caller waited 1ms more.
func record(m *metricsstream.CommandMetrics, latency time.Duration, events ...metricsstream.EventType) {
	c := metricsstream.Completion{CommandKey: m.Key(), Executed: latency > 0,
		ExecutionLatency: latency, TotalLatency: latency + time.Millisecond}
	for _, e := range events {
		c.Events.Add(e, 1)
	}
	m.MarkCompletion(&c)
}

// scenario is a registry with a command GetUser whose breaker is open, a
// command Bare that nothing reports on, and a pool UserPool; every bucket
// they recorded in is closed.
func scenario(t *testing.T) (*metricsstream.Registry, *clock.Manual) {
	t.Helper()
	mc := clock.NewManual(t0)
	reg := metricsstream.NewRegistry(mc)
	m := reg.Command("GetUser", metricsstream.Config{})
	m.SetStatusProvider(commandStatus{Group: "UserService", Pool: "UserPool", CircuitBreakerOpen: true})
	ms := time.Millisecond
	record(m, 2*ms, metricsstream.Success)
	record(m, 20*ms, metricsstream.Success)
	record(m, 300*ms, metricsstream.Success)
	record(m, 4*ms, metricsstream.Failure, metricsstream.FallbackSuccess)
	record(m, 1000*ms, metricsstream.Timeout, metricsstream.FallbackMissing)
	record(m, 0, metricsstream.ShortCircuited, metricsstream.FallbackSuccess)
	m.MarkStart()
	reg.Command("Bare", metricsstream.Config{})

	p := reg.Pool("UserPool", metricsstream.Config{})
	p.SetStatusProvider(poolStatus{CoreSize: 10, PoolSize: 3})
	for range 4 {
		p.MarkStart()
	}
	for range 3 {
		p.MarkDone()
	}
	p.MarkRejected()
	p.SetQueueSize(2)
	reg.Pool("BarePool", metricsstream.Config{})

	mc.Advance(10 * time.Second)
	return reg, mc
}

const wantCommandGauges = `
# HELP rxhystrix_command_circuit_open 1 while the command's circuit breaker is open, else 0.
# TYPE rxhystrix_command_circuit_open gauge
rxhystrix_command_circuit_open{command="Bare",group="Bare"} 0
rxhystrix_command_circuit_open{command="GetUser",group="UserService"} 1
# HELP rxhystrix_command_error_percentage Errors per 100 requests in the command's health window, truncated: what its circuit breaker compares with its threshold.
# TYPE rxhystrix_command_error_percentage gauge
rxhystrix_command_error_percentage{command="Bare",group="Bare"} 0
rxhystrix_command_error_percentage{command="GetUser",group="UserService"} 40
# HELP rxhystrix_command_health_requests Requests in the command's health window: successes, failures, timeouts and rejections.
# TYPE rxhystrix_command_health_requests gauge
rxhystrix_command_health_requests{command="Bare",group="Bare"} 0
rxhystrix_command_health_requests{command="GetUser",group="UserService"} 5
# HELP rxhystrix_command_health_errors Errors in the command's health window: failures, timeouts and rejections.
# TYPE rxhystrix_command_health_errors gauge
rxhystrix_command_health_errors{command="Bare",group="Bare"} 0
rxhystrix_command_health_errors{command="GetUser",group="UserService"} 2
# HELP rxhystrix_command_concurrent_executions Executions running the command's code now.
# TYPE rxhystrix_command_concurrent_executions gauge
rxhystrix_command_concurrent_executions{command="Bare",group="Bare"} 0
rxhystrix_command_concurrent_executions{command="GetUser",group="UserService"} 1
`

const wantExecutionLatency = `
# HELP rxhystrix_command_execution_latency_seconds How long the command's code ran, for executions that ran; cumulative, from the closed buckets of the percentile window.
# TYPE rxhystrix_command_execution_latency_seconds histogram
rxhystrix_command_execution_latency_seconds_bucket{command="Bare",group="Bare",le="0.005"} 0
rxhystrix_command_execution_latency_seconds_bucket{command="Bare",group="Bare",le="0.1"} 0
rxhystrix_command_execution_latency_seconds_bucket{command="Bare",group="Bare",le="1"} 0
rxhystrix_command_execution_latency_seconds_bucket{command="Bare",group="Bare",le="+Inf"} 0
rxhystrix_command_execution_latency_seconds_sum{command="Bare",group="Bare"} 0
rxhystrix_command_execution_latency_seconds_count{command="Bare",group="Bare"} 0
rxhystrix_command_execution_latency_seconds_bucket{command="GetUser",group="UserService",le="0.005"} 2
rxhystrix_command_execution_latency_seconds_bucket{command="GetUser",group="UserService",le="0.1"} 3
rxhystrix_command_execution_latency_seconds_bucket{command="GetUser",group="UserService",le="1"} 5
rxhystrix_command_execution_latency_seconds_bucket{command="GetUser",group="UserService",le="+Inf"} 5
rxhystrix_command_execution_latency_seconds_sum{command="GetUser",group="UserService"} 1.326105
rxhystrix_command_execution_latency_seconds_count{command="GetUser",group="UserService"} 5
`

const wantPools = `
# HELP rxhystrix_pool_active_commands Commands running on the pool's workers now.
# TYPE rxhystrix_pool_active_commands gauge
rxhystrix_pool_active_commands{pool="BarePool"} 0
rxhystrix_pool_active_commands{pool="UserPool"} 1
# HELP rxhystrix_pool_queued_commands Commands waiting in the pool's queue now.
# TYPE rxhystrix_pool_queued_commands gauge
rxhystrix_pool_queued_commands{pool="BarePool"} 0
rxhystrix_pool_queued_commands{pool="UserPool"} 2
# HELP rxhystrix_pool_executed_total Commands the pool ran, since its metrics were created (up to the last closed rolling bucket).
# TYPE rxhystrix_pool_executed_total counter
rxhystrix_pool_executed_total{pool="BarePool"} 0
rxhystrix_pool_executed_total{pool="UserPool"} 3
# HELP rxhystrix_pool_rejected_total Commands the pool refused, since its metrics were created (up to the last closed rolling bucket).
# TYPE rxhystrix_pool_rejected_total counter
rxhystrix_pool_rejected_total{pool="BarePool"} 0
rxhystrix_pool_rejected_total{pool="UserPool"} 1
# HELP rxhystrix_pool_core_size The most commands the pool's workers run at once: its CoreSize, or its adaptive limit now.
# TYPE rxhystrix_pool_core_size gauge
rxhystrix_pool_core_size{pool="UserPool"} 10
# HELP rxhystrix_pool_workers The pool's workers alive now.
# TYPE rxhystrix_pool_workers gauge
rxhystrix_pool_workers{pool="UserPool"} 3
`

func TestCollectorReportsCommandsAndPools(t *testing.T) {
	reg, _ := scenario(t)
	c := NewCollector(reg, WithLatencyBuckets(.005, .1, 1))

	assert.NoError(t, testutil.CollectAndCompare(c, strings.NewReader(wantCommandGauges),
		"rxhystrix_command_circuit_open", "rxhystrix_command_error_percentage", "rxhystrix_command_health_requests",
		"rxhystrix_command_health_errors", "rxhystrix_command_concurrent_executions"))
	assert.NoError(t, testutil.CollectAndCompare(c, strings.NewReader(wantExecutionLatency),
		"rxhystrix_command_execution_latency_seconds"))
	assert.NoError(t, testutil.CollectAndCompare(c, strings.NewReader(wantPools),
		"rxhystrix_pool_active_commands", "rxhystrix_pool_queued_commands", "rxhystrix_pool_executed_total",
		"rxhystrix_pool_rejected_total", "rxhystrix_pool_core_size", "rxhystrix_pool_workers"))
}

func TestCollectorCountsEveryEventType(t *testing.T) {
	reg, _ := scenario(t)
	c := NewCollector(reg)
	want := map[string]float64{
		"SUCCESS": 3, "FAILURE": 1, "TIMEOUT": 1, "SHORT_CIRCUITED": 1, "FALLBACK_SUCCESS": 2,
		"FALLBACK_MISSING": 1, "EXCEPTION_THROWN": 1, "BAD_REQUEST": 0, "EMIT": 0,
	}
	got := map[string]float64{}
	events := 0
	for _, mf := range gather(t, c) {
		if mf.GetName() != "rxhystrix_command_events_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			l := labels(m.GetLabel())
			if l["command"] != "GetUser" {
				continue
			}
			assert.Equal(t, "UserService", l["group"])
			got[l["event"]] = m.GetCounter().GetValue()
			events++
		}
	}
	for e, v := range want {
		assert.Equal(t, v, got[e], e)
	}
	assert.Equal(t, int(metricsstream.NumEventTypes)-1, events, "every event type but COMMAND_MAX_ACTIVE")
	assert.NotContains(t, got, "COMMAND_MAX_ACTIVE")
}

func TestCollectorLatencyHistogramsAreCumulative(t *testing.T) {
	mc := clock.NewManual(t0)
	reg := metricsstream.NewRegistry(mc)
	m := reg.Command("C", metricsstream.Config{})
	c := NewCollector(reg, WithLatencyBuckets(.01, 1))

	count := func() (count uint64, under10ms uint64) {
		for _, mf := range gather(t, c) {
			if mf.GetName() == "rxhystrix_command_total_latency_seconds" {
				h := mf.GetMetric()[0].GetHistogram()
				return h.GetSampleCount(), h.GetBucket()[0].GetCumulativeCount()
			}
		}
		t.Fatal("no total latency histogram")
		return 0, 0
	}

	record(m, 5*time.Millisecond, metricsstream.Success)
	n, _ := count()
	assert.Zero(t, n, "the bucket is still open")

	mc.Advance(10 * time.Second)
	n, fast := count()
	assert.Equal(t, uint64(1), n)
	assert.Equal(t, uint64(1), fast, "6ms of total latency is under 10ms")
	n, _ = count()
	assert.Equal(t, uint64(1), n, "a bucket is added once, however often it is scraped")

	// The first bucket leaves the 60s window; the histogram keeps it.
	mc.Advance(55 * time.Second)
	record(m, 50*time.Millisecond, metricsstream.Success)
	record(m, 50*time.Millisecond, metricsstream.Success)
	mc.Advance(10 * time.Second)
	require.Equal(t, int64(2), m.Latencies().Total.Count(), "the window holds only the new latencies")
	n, fast = count()
	assert.Equal(t, uint64(3), n)
	assert.Equal(t, uint64(1), fast)
}

func TestCollectorForgetsEvictedMetrics(t *testing.T) {
	mc := clock.NewManual(t0)
	reg := metricsstream.NewRegistry(mc, metricsstream.WithIdleEviction(time.Minute))
	record(reg.Command("C", metricsstream.Config{}), time.Millisecond, metricsstream.Success)
	c := NewCollector(reg)
	mc.Advance(10 * time.Second)
	gather(t, c)
	require.Equal(t, 1, c.folds.Len())

	mc.Advance(2 * time.Minute)
	require.Equal(t, 1, reg.EvictIdle())
	gather(t, c)
	assert.Zero(t, c.folds.Len(), "the totals of evicted metrics are dropped")
}

func TestCollectorPassesLint(t *testing.T) {
	reg, _ := scenario(t)
	reg.Collapser("UserBatch", metricsstream.Config{}).MarkBatch(2)
	pr := prometheus.NewPedanticRegistry()
	require.NoError(t, pr.Register(NewCollector(reg)))
	problems, err := testutil.GatherAndLint(pr)
	require.NoError(t, err)
	assert.Empty(t, problems)
}

func TestCollectorScrapedThroughPromhttp(t *testing.T) {
	reg, _ := scenario(t)
	pr := prometheus.NewPedanticRegistry()
	pr.MustRegister(NewCollector(reg))
	srv := httptest.NewServer(promhttp.HandlerFor(pr, promhttp.HandlerOpts{}))
	t.Cleanup(srv.Close)

	body := scrape(t, srv.URL)
	assert.Contains(t, body, `rxhystrix_command_events_total{command="GetUser",event="SUCCESS",group="UserService"} 3`)
	assert.Contains(t, body, `rxhystrix_command_execution_latency_seconds_count{command="GetUser",group="UserService"} 5`)
	assert.Contains(t, body, `rxhystrix_pool_rejected_total{pool="UserPool"} 1`)
	assert.NoError(t, testutil.ScrapeAndCompare(srv.URL, strings.NewReader(wantPools),
		"rxhystrix_pool_active_commands", "rxhystrix_pool_queued_commands", "rxhystrix_pool_executed_total",
		"rxhystrix_pool_rejected_total", "rxhystrix_pool_core_size", "rxhystrix_pool_workers"))
}

func TestOptionsPanicOnBadInput(t *testing.T) {
	reg := metricsstream.NewRegistry(clock.NewManual(t0))
	cases := []struct {
		name string
		f    func()
		msg  string
	}{
		{"nil registry", func() { NewCollector(nil) }, "prometheus: NewCollector with nil registry"},
		{"nil option", func() { NewCollector(reg, nil) }, "prometheus: NewCollector: option 0 is nil"},
		{"no bounds", func() { WithLatencyBuckets() }, "prometheus: WithLatencyBuckets: no bucket bounds"},
		{"zero bound", func() { WithLatencyBuckets(0, 1) }, "prometheus: WithLatencyBuckets: bound 0 (0) is not a positive finite number of seconds"},
		{"decreasing", func() { WithLatencyBuckets(1, .5) }, "prometheus: WithLatencyBuckets: bound 1 (0.5) does not exceed bound 0 (1)"},
	}
	for _, tc := range cases {
		assert.PanicsWithValue(t, tc.msg, tc.f, tc.name)
	}
}

func TestCollectorCountsCollapserEvents(t *testing.T) {
	mc := clock.NewManual(t0)
	reg := metricsstream.NewRegistry(mc)
	b := reg.Collapser("UserBatch", metricsstream.Config{})
	b.MarkBatch(3)
	b.MarkBatch(5)
	b.MarkResponseFromCache()
	mc.Advance(time.Second)

	const want = `
# HELP rxhystrix_collapser_events_total Events of the request collapser by Hystrix collapser event type (BATCH_EXECUTED, ADDED_TO_BATCH, RESPONSE_FROM_CACHE), since its metrics were created (up to the last closed rolling bucket).
# TYPE rxhystrix_collapser_events_total counter
rxhystrix_collapser_events_total{collapser="UserBatch",event="ADDED_TO_BATCH"} 8
rxhystrix_collapser_events_total{collapser="UserBatch",event="BATCH_EXECUTED"} 2
rxhystrix_collapser_events_total{collapser="UserBatch",event="RESPONSE_FROM_CACHE"} 1
`
	assert.NoError(t, testutil.CollectAndCompare(NewCollector(reg), strings.NewReader(want), "rxhystrix_collapser_events_total"))
}

// The completions a slow Completions subscriber missed are exported per
// command, exactly as the metrics count them.
func TestCollectorCountsDroppedCompletions(t *testing.T) {
	reg := metricsstream.NewRegistry(clock.NewManual(t0))
	m := reg.Command("GetUser", metricsstream.Config{})
	reg.Command("Bare", metricsstream.Config{})
	entered, release := make(chan struct{}), make(chan struct{})
	first := true
	sub := m.Completions().SubscribeFunc(context.Background(), func(metricsstream.Completion) {
		if first {
			first = false
			close(entered)
			<-release
		}
	}, nil, nil)
	defer sub.Unsubscribe()
	defer close(release)

	record(m, 0, metricsstream.Success)
	<-entered // one completion taken, the 512 of the buffer free
	for range 512 + 7 {
		record(m, 0, metricsstream.Success)
	}

	const want = `
# HELP rxhystrix_command_completions_dropped_total Completions of the command that its Completions stream did not deliver because a subscriber was too slow, summed over subscribers; rxhystrix_command_events_total counts every execution regardless.
# TYPE rxhystrix_command_completions_dropped_total counter
rxhystrix_command_completions_dropped_total{command="Bare",group="Bare"} 0
rxhystrix_command_completions_dropped_total{command="GetUser",group="GetUser"} 7
`
	assert.NoError(t, testutil.CollectAndCompare(NewCollector(reg), strings.NewReader(want),
		"rxhystrix_command_completions_dropped_total"))
}

// What subscribers of the streams lost is exported: each command's
// subscribers that panicked, and the registry's request events that a slow
// subscriber missed and its subscribers that panicked.
func TestCollectorCountsWhatStreamSubscribersLost(t *testing.T) {
	reg := metricsstream.NewRegistry(clock.NewManual(t0))
	m := reg.Command("GetUser", metricsstream.Config{})
	reg.Command("Bare", metricsstream.Config{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ended := func(errs <-chan error) {
		t.Helper()
		select {
		case err := <-errs:
			var pe *metricsstream.SubscriberPanicError
			require.ErrorAs(t, err, &pe)
		case <-time.After(10 * time.Second):
			t.Fatal("the panicking subscriber was not unsubscribed")
		}
	}

	completionErr := make(chan error, 1)
	m.Completions().SubscribeFunc(ctx, func(metricsstream.Completion) { panic("subscriber bug") },
		func(err error) { completionErr <- err }, nil)
	record(m, 0, metricsstream.Success)
	ended(completionErr)

	entered, release, requestErr := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	reg.RequestEvents().SubscribeFunc(ctx, func(metricsstream.RequestEvents) {
		close(entered)
		<-release
		panic("subscriber bug")
	}, func(err error) { requestErr <- err }, nil)
	request := metricsstream.RequestEvents{{Command: "GetUser"}}
	reg.PublishRequestEvents(request)
	<-entered // one request taken, the 512 of the buffer free
	for range 512 + 3 {
		reg.PublishRequestEvents(request)
	}
	close(release)
	ended(requestErr)

	const want = `
# HELP rxhystrix_command_stream_subscribers_panicked_total Subscribers of the command's metrics streams (health counts, completions and the others) that panicked and were unsubscribed.
# TYPE rxhystrix_command_stream_subscribers_panicked_total counter
rxhystrix_command_stream_subscribers_panicked_total{command="Bare",group="Bare"} 0
rxhystrix_command_stream_subscribers_panicked_total{command="GetUser",group="GetUser"} 1
# HELP rxhystrix_request_events_dropped_total Ended requests that the request events stream did not deliver because a subscriber was too slow, summed over subscribers.
# TYPE rxhystrix_request_events_dropped_total counter
rxhystrix_request_events_dropped_total 3
# HELP rxhystrix_request_events_subscribers_panicked_total Subscribers of the request events stream that panicked and were unsubscribed.
# TYPE rxhystrix_request_events_subscribers_panicked_total counter
rxhystrix_request_events_subscribers_panicked_total 1
`
	assert.NoError(t, testutil.CollectAndCompare(NewCollector(reg), strings.NewReader(want),
		"rxhystrix_command_stream_subscribers_panicked_total", "rxhystrix_request_events_dropped_total",
		"rxhystrix_request_events_subscribers_panicked_total"))
}

// Every command metric both exporters report has its description, and
// Describe sends it.
func TestEveryCommandMetricIsDescribed(t *testing.T) {
	for m, d := range commandDescs {
		require.NotNil(t, d, "command metric %d", m)
		assert.Contains(t, allDescs, d)
	}
}

// Metrics that idle eviction takes out of the registry come back, the same
// metrics, when their command is used again (as the command package's
// keys use them): their event counters go on from where they were, and so
// must their latency histograms. A scrape that missed them while they were
// out must not start their histograms over from the percentile window,
// which would count again the latencies still in it (Prometheus reads the
// fall as a reset) or miss others.
func TestCollectorHistogramOfReattachedMetricsGoesOn(t *testing.T) {
	mc := clock.NewManual(t0)
	reg := metricsstream.NewRegistry(mc, metricsstream.WithIdleEviction(20*time.Second))
	m := reg.Command("Idle", metricsstream.Config{}) // percentile window 60s in 10s buckets
	c := NewCollector(reg)

	for range 5 {
		record(m, 20*time.Millisecond, metricsstream.Success) // bucket 0
	}
	mc.Advance(10 * time.Second)
	count, successes := histogramCount(t, c, "Idle")
	require.Equal(t, uint64(5), count)
	require.Equal(t, 5.0, successes)

	mc.Advance(25 * time.Second)                          // t0+35s
	record(m, 20*time.Millisecond, metricsstream.Success) // bucket 3
	mc.Advance(5 * time.Second)
	count, _ = histogramCount(t, c, "Idle")
	require.Equal(t, uint64(6), count)

	mc.Advance(20 * time.Second) // t0+60s: idle for 25s
	require.Equal(t, 1, reg.EvictIdle())
	count, _ = histogramCount(t, c, "Idle") // out of the registry: not reported
	require.Zero(t, count)

	mc.Advance(11 * time.Second)                          // t0+71s: bucket 0 has left the window
	record(m, 20*time.Millisecond, metricsstream.Success) // back in the registry
	_, ok := reg.LookupCommand("Idle")
	require.True(t, ok)
	mc.Advance(9 * time.Second)
	count, successes = histogramCount(t, c, "Idle")
	assert.Equal(t, 7.0, successes, "the event counter goes on")
	assert.Equal(t, uint64(7), count, "the histogram goes on too")
}
