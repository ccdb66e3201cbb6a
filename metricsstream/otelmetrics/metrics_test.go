package otelmetrics

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/rxhystrix/rxhystrix/breaker"
	"github.com/rxhystrix/rxhystrix/clock"
	"github.com/rxhystrix/rxhystrix/command"
	"github.com/rxhystrix/rxhystrix/limit"
	"github.com/rxhystrix/rxhystrix/metricsstream"
	"github.com/rxhystrix/rxhystrix/metricsstream/internal/reading"
	rxprometheus "github.com/rxhystrix/rxhystrix/metricsstream/prometheus"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// executions runs commands on a manual clock: GetUser (semaphore
// isolated) succeeds, fails into its fallback, is told a bad request
// and times out; Search runs on a pool of two workers; Checkout, of one
// permit partitioned, runs live, then batch within it on batch's
// guarantee, then live again within that, which is refused; Reserve,
// with a backlog, a growing sleep window and a breaker that throttles,
// runs once; Audit fails twice by an injected fault; a collapser
// sends one batch. Their run advances the clock to make their latency. Every
// rolling and percentile bucket they recorded in is closed on return.
func executions(t *testing.T) (*command.Registry, *clock.Manual) {
	t.Helper()
	mc := clock.NewManual(t0)
	reg := command.NewRegistry(command.WithClock(mc))
	t.Cleanup(reg.Close)
	ctx := context.Background()

	getUser := command.New("GetUser", func(ctx context.Context, ms int) (string, error) {
		switch {
		case ms < 0:
			return "", command.BadRequest(errors.New("no such user"))
		case ms == 0:
			return "", errors.New("down")
		}
		mc.Advance(time.Duration(ms) * time.Millisecond)
		return "ann", nil
	}, command.WithRegistry(reg), command.WithConfig(command.Config{
		Group: "Users", Isolation: command.SemaphoreIsolation, Timeout: 500 * time.Millisecond,
	})).WithFallback(func(context.Context, int, error) (string, error) { return "anonymous", nil })
	for _, ms := range []int{2, 20, 20, 300, 0, -1, 700} {
		_, _ = getUser.Execute(ctx, ms)
	}

	search := command.New("Search", func(ctx context.Context, q string) (int, error) { return len(q), nil },
		command.WithRegistry(reg), command.WithConfig(command.Config{Timeout: -1}))
	require.NoError(t, reg.ConfigurePool("Search", command.PoolConfig{CoreSize: 2, AdaptiveLimit: limit.Vegas{MinLimit: 2, MaxLimit: 2}}))
	for _, q := range []string{"a", "bb", "ccc"} {
		n, err := search.Execute(ctx, q)
		require.NoError(t, err)
		require.Equal(t, len(q), n)
	}
	var checkout *command.Command[[]string, int]
	checkout = command.New("Checkout", func(ctx context.Context, partitions []string) (int, error) {
		if len(partitions) == 0 {
			return 0, nil
		}
		return checkout.Execute(command.WithPartition(ctx, partitions[0]), partitions[1:])
	}, command.WithRegistry(reg), command.WithConfig(command.Config{
		Isolation: command.SemaphoreIsolation, MaxConcurrentRequests: 1, Timeout: -1,
		AdaptiveLimit: limit.AIMD{InitialLimit: 1, MinLimit: 1},
		Partitions:    []command.Partition{{Name: "live", Share: 0.5}, {Name: "batch", Share: 0.5}},
	}))
	_, err := checkout.Execute(ctx, []string{"live", "batch", "live"})
	require.ErrorIs(t, err, command.ErrSemaphoreRejected)
	reserve := command.New("Reserve", func(ctx context.Context, n int) (int, error) { return n, nil },
		command.WithRegistry(reg), command.WithConfig(command.Config{
			Isolation: command.SemaphoreIsolation, Timeout: -1, Backlog: command.BacklogConfig{Size: 4},
			Breaker: breaker.Config{MaxSleepWindow: time.Minute, ThrottleSuccessPercentage: 50},
		}))
	_, err = reserve.Execute(ctx, 1)
	require.NoError(t, err)
	audit := command.New("Audit", func(ctx context.Context, n int) (int, error) { return n, nil },
		command.WithRegistry(reg), command.WithConfig(command.Config{
			Isolation: command.SemaphoreIsolation, Faults: command.FaultConfig{Enabled: true, ErrorPercentage: 100},
		}))
	for range 2 {
		_, err = audit.Execute(ctx, 1)
		require.ErrorIs(t, err, command.ErrInjectedFault)
	}

	mc.Advance(10 * time.Second)
	return reg, mc
}

// prometheusSeries returns every sample the Prometheus collector c
// reports, by name and labels.
func prometheusSeries(t *testing.T, c prometheus.Collector) map[string]float64 {
	t.Helper()
	pr := prometheus.NewPedanticRegistry()
	pr.MustRegister(c)
	mfs, err := pr.Gather()
	require.NoError(t, err)
	out := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			name := mf.GetName()
			switch mf.GetType() {
			case dto.MetricType_COUNTER:
				out[series(name, labels)] = m.GetCounter().GetValue()
			case dto.MetricType_GAUGE:
				out[series(name, labels)] = m.GetGauge().GetValue()
			case dto.MetricType_HISTOGRAM:
				h := m.GetHistogram()
				out[series(name+"_count", labels)] = float64(h.GetSampleCount())
				out[series(name+"_sum", labels)] = h.GetSampleSum()
				for _, b := range h.GetBucket() {
					out[series(name+"_bucket", labels, "le", fmt.Sprint(b.GetUpperBound()))] = float64(b.GetCumulativeCount())
				}
			default:
				t.Fatalf("%s: unexpected type %v", name, mf.GetType())
			}
		}
	}
	return out
}

// prometheusNames are the Prometheus collector's names of the
// instruments, and labelNames its names of the attributes.
var (
	prometheusNames = map[string]string{
		"rxhystrix.command.events":                            "rxhystrix_command_events_total",
		"rxhystrix.command.circuit.open":                      "rxhystrix_command_circuit_open",
		"rxhystrix.command.health.error":                      "rxhystrix_command_error_percentage",
		"rxhystrix.command.health.requests":                   "rxhystrix_command_health_requests",
		"rxhystrix.command.health.errors":                     "rxhystrix_command_health_errors",
		"rxhystrix.command.concurrent_executions":             "rxhystrix_command_concurrent_executions",
		"rxhystrix.command.rolling_max_concurrent_executions": "rxhystrix_command_rolling_max_concurrent_executions",
		"rxhystrix.command.completions.dropped":               "rxhystrix_command_completions_dropped_total",
		"rxhystrix.command.stream.subscribers.panicked":       "rxhystrix_command_stream_subscribers_panicked_total",
		"rxhystrix.request_events.dropped":                    "rxhystrix_request_events_dropped_total",
		"rxhystrix.request_events.subscribers.panicked":       "rxhystrix_request_events_subscribers_panicked_total",
		"rxhystrix.command.execution.duration":                "rxhystrix_command_execution_latency_seconds",
		"rxhystrix.command.duration":                          "rxhystrix_command_total_latency_seconds",
		"rxhystrix.pool.active_commands":                      "rxhystrix_pool_active_commands",
		"rxhystrix.pool.queued_commands":                      "rxhystrix_pool_queued_commands",
		"rxhystrix.pool.executed":                             "rxhystrix_pool_executed_total",
		"rxhystrix.pool.rejected":                             "rxhystrix_pool_rejected_total",
		"rxhystrix.pool.core_size":                            "rxhystrix_pool_core_size",
		"rxhystrix.pool.workers":                              "rxhystrix_pool_workers",
		"rxhystrix.collapser.events":                          "rxhystrix_collapser_events_total",
		"rxhystrix.command.partition.guaranteed":              "rxhystrix_command_partition_guaranteed",
		"rxhystrix.command.adaptive_limit":                    "rxhystrix_command_adaptive_limit",
		"rxhystrix.pool.adaptive_limit":                       "rxhystrix_pool_adaptive_limit",
		"rxhystrix.command.partition.in_flight":               "rxhystrix_command_partition_in_flight",
		"rxhystrix.command.partition.rejected":                "rxhystrix_command_partition_rejected_total",
		"rxhystrix.command.backlog.size":                      "rxhystrix_command_backlog_size",
		"rxhystrix.command.backlog.waiting":                   "rxhystrix_command_backlog_waiting",
		"rxhystrix.command.backlog.admitted":                  "rxhystrix_command_backlog_admitted_total",
		"rxhystrix.command.backlog.wait_time":                 "rxhystrix_command_backlog_wait_seconds_total",
		"rxhystrix.command.backlog.rejected":                  "rxhystrix_command_backlog_rejected_total",
		"rxhystrix.command.circuit.sleep_window":              "rxhystrix_command_circuit_sleep_window_seconds",
		"rxhystrix.command.circuit.throttle":                  "rxhystrix_command_circuit_throttle_ratio",
		"rxhystrix.command.circuit.state":                     "rxhystrix_command_circuit_state",
		"rxhystrix.command.fault_injection.enabled":           "rxhystrix_command_fault_injection_enabled",
		"rxhystrix.command.faults.injected":                   "rxhystrix_command_faults_injected_total",
		"rxhystrix.turbine.instance.connected":                "rxhystrix_turbine_instance_connected",
		"rxhystrix.turbine.instance.objects":                  "rxhystrix_turbine_instance_objects",
		"rxhystrix.turbine.instance.ignored_events":           "rxhystrix_turbine_instance_ignored_events_total",
		"rxhystrix.turbine.discovery.failures":                "rxhystrix_turbine_discovery_failures_total",
		"rxhystrix.turbine.discovery.last_success":            "rxhystrix_turbine_discovery_last_success_timestamp_seconds",
	}
	labelNames = map[attribute.Key]string{
		CommandKey: "command", GroupKey: "group", EventKey: "event", PoolKey: "pool", CollapserKey: "collapser",
		TurbineInstanceKey: "instance", PartitionKey: "partition", AlgorithmKey: "algorithm", CircuitStateKey: "state",
		FaultKey: "fault", ReasonKey: "reason",
	}
)

// otelSeries collects m through a ManualReader and returns every data
// point under the Prometheus collector's names.
func otelSeries(t *testing.T, m *Metrics) map[string]float64 {
	t.Helper()
	reader := sdkmetric.NewManualReader(sdkmetric.WithProducer(m))
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = provider.Shutdown(context.Background()) })
	_, err := m.Register(provider.Meter(ScopeName))
	require.NoError(t, err)
	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(context.Background(), &rm))
	return otelPoints(t, rm)
}

// manualMeter returns a meter named ScopeName of a provider that lives
// until the test ends, and a function that collects the provider's
// points (otelPoints).
func manualMeter(t *testing.T) (metric.Meter, func() map[string]float64) {
	reader := sdkmetric.NewManualReader()
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = provider.Shutdown(context.Background()) })
	return provider.Meter(ScopeName), func() map[string]float64 {
		var rm metricdata.ResourceMetrics
		require.NoError(t, reader.Collect(context.Background(), &rm))
		return otelPoints(t, rm)
	}
}

func otelPoints(t *testing.T, rm metricdata.ResourceMetrics) map[string]float64 {
	out := map[string]float64{}
	for _, sm := range rm.ScopeMetrics {
		require.Equal(t, ScopeName, sm.Scope.Name)
		for _, md := range sm.Metrics {
			name, ok := prometheusNames[md.Name]
			require.True(t, ok, "unexpected instrument %s", md.Name)
			labels := func(s attribute.Set) map[string]string {
				l := map[string]string{}
				for _, kv := range s.ToSlice() {
					l[labelNames[kv.Key]] = kv.Value.AsString()
				}
				return l
			}
			switch d := md.Data.(type) {
			case metricdata.Sum[int64]:
				require.True(t, d.IsMonotonic, md.Name)
				require.Equal(t, metricdata.CumulativeTemporality, d.Temporality, md.Name)
				for _, p := range d.DataPoints {
					out[series(name, labels(p.Attributes))] = float64(p.Value)
				}
			case metricdata.Sum[float64]:
				require.True(t, d.IsMonotonic, md.Name)
				require.Equal(t, metricdata.CumulativeTemporality, d.Temporality, md.Name)
				for _, p := range d.DataPoints {
					out[series(name, labels(p.Attributes))] = p.Value
				}
			case metricdata.Gauge[int64]:
				for _, p := range d.DataPoints {
					out[series(name, labels(p.Attributes))] = float64(p.Value)
				}
			case metricdata.Gauge[float64]:
				for _, p := range d.DataPoints {
					out[series(name, labels(p.Attributes))] = p.Value
				}
			case metricdata.Histogram[float64]:
				require.Equal(t, metricdata.CumulativeTemporality, d.Temporality, md.Name)
				for _, p := range d.DataPoints {
					l := labels(p.Attributes)
					out[series(name+"_count", l)] = float64(p.Count)
					out[series(name+"_sum", l)] = p.Sum
					n := uint64(0)
					for i, b := range p.Bounds {
						n += p.BucketCounts[i]
						out[series(name+"_bucket", l, "le", fmt.Sprint(b))] = float64(n)
					}
					require.Equal(t, p.Count, n+p.BucketCounts[len(p.Bounds)], "the buckets add up to the count")
				}
			default:
				t.Fatalf("%s: unexpected data %T", md.Name, md.Data)
			}
		}
	}
	return out
}

// series names one sample: its name and sorted labels, plus extra pairs.
func series(name string, labels map[string]string, extra ...string) string {
	var pairs []string
	for k, v := range labels {
		pairs = append(pairs, k+"="+v)
	}
	for i := 0; i < len(extra); i += 2 {
		pairs = append(pairs, extra[i]+"="+extra[i+1])
	}
	sort.Strings(pairs)
	return name + "{" + strings.Join(pairs, ",") + "}"
}

// The instruments report what the Prometheus collector reports for the
// same executions, series for series and value for value.
func TestValuesEqualThePrometheusCollectors(t *testing.T) {
	reg, _ := executions(t)
	prom := prometheusSeries(t, rxprometheus.NewCollector(reg.Metrics()))
	got := otelSeries(t, New(reg.Metrics()))

	// The executions are all there, so an empty reading cannot pass.
	assert.Equal(t, 4.0, got["rxhystrix_command_events_total{command=GetUser,event=SUCCESS,group=Users}"])
	assert.Equal(t, 1.0, got["rxhystrix_command_events_total{command=GetUser,event=TIMEOUT,group=Users}"])
	assert.Equal(t, 1.0, got["rxhystrix_command_events_total{command=GetUser,event=BAD_REQUEST,group=Users}"])
	assert.Equal(t, 3.0, got["rxhystrix_pool_executed_total{pool=Search}"])
	assert.Equal(t, 2.0, got["rxhystrix_pool_core_size{pool=Search}"])
	assert.Equal(t, 7.0, got["rxhystrix_command_execution_latency_seconds_count{command=GetUser,group=Users}"])
	assert.Equal(t, 5.0, got["rxhystrix_command_execution_latency_seconds_bucket{command=GetUser,group=Users,le=0.025}"])
	assert.Equal(t, 6.0, got["rxhystrix_command_execution_latency_seconds_bucket{command=GetUser,group=Users,le=0.3}"])
	assert.Equal(t, 1.0, got["rxhystrix_command_partition_guaranteed{command=Checkout,group=Checkout,partition=batch}"])
	assert.Equal(t, 1.0, got["rxhystrix_command_adaptive_limit{algorithm=aimd,command=Checkout,group=Checkout}"])
	assert.Equal(t, 2.0, got["rxhystrix_pool_adaptive_limit{algorithm=vegas,pool=Search}"])
	assert.Equal(t, 1.0, got["rxhystrix_command_partition_rejected_total{command=Checkout,group=Checkout,partition=live}"])
	assert.Equal(t, 0.0, got["rxhystrix_command_partition_in_flight{command=Checkout,group=Checkout,partition=live}"])
	assert.Equal(t, 4.0, got["rxhystrix_command_backlog_size{command=Reserve,group=Reserve}"])
	assert.Equal(t, 0.0, got["rxhystrix_command_backlog_waiting{command=Reserve,group=Reserve}"])
	assert.Equal(t, 0.0, got["rxhystrix_command_backlog_rejected_total{command=Reserve,group=Reserve,reason=full}"])
	assert.Contains(t, got, "rxhystrix_command_backlog_wait_seconds_total{command=Reserve,group=Reserve}")
	assert.Equal(t, 5.0, got["rxhystrix_command_circuit_sleep_window_seconds{command=Reserve,group=Reserve}"])
	assert.Equal(t, 1.0, got["rxhystrix_command_circuit_state{command=GetUser,group=Users,state=CLOSED}"])
	assert.Equal(t, 0.0, got["rxhystrix_command_circuit_state{command=GetUser,group=Users,state=OPEN}"])
	assert.NotContains(t, got, "rxhystrix_command_circuit_sleep_window_seconds{command=GetUser,group=Users}", "a fixed window")
	assert.Equal(t, 0.0, got["rxhystrix_command_circuit_throttle_ratio{command=Reserve,group=Reserve}"], "its one execution succeeded")
	assert.NotContains(t, got, "rxhystrix_command_circuit_throttle_ratio{command=GetUser,group=Users}", "a breaker that does not throttle")
	assert.Equal(t, 1.0, got["rxhystrix_command_fault_injection_enabled{command=Audit,group=Audit}"])
	assert.Equal(t, 2.0, got["rxhystrix_command_faults_injected_total{command=Audit,fault=error,group=Audit}"])
	assert.Equal(t, 0.0, got["rxhystrix_command_faults_injected_total{command=Audit,fault=delay,group=Audit}"])
	assert.NotContains(t, got, "rxhystrix_command_fault_injection_enabled{command=GetUser,group=Users}", "no faults")

	assert.Equal(t, prom, got)
}

// The histograms are cumulative: a percentile bucket is added once,
// however often it is read, and stays after it leaves the window.
func TestHistogramsAreCumulative(t *testing.T) {
	reg, mc := executions(t)
	m := New(reg.Metrics())
	count := func() float64 {
		return otelSeries(t, m)["rxhystrix_command_total_latency_seconds_count{command=GetUser,group=Users}"]
	}
	require.Equal(t, 7.0, count())
	require.Equal(t, 7.0, count(), "read twice, counted once")
	mc.Advance(2 * time.Minute) // the window empties
	require.Equal(t, 7.0, count())
}

func TestUnregisterStopsTheCallback(t *testing.T) {
	reg, _ := executions(t)
	meter, collect := manualMeter(t)
	r, err := New(reg.Metrics()).Register(meter)
	require.NoError(t, err)
	require.NotEmpty(t, collect())
	require.NoError(t, r.Unregister())
	assert.Empty(t, collect())
}

func TestOptionsPanicOnBadInput(t *testing.T) {
	reg := command.NewRegistry(command.WithClock(clock.NewManual(t0)))
	cases := []struct {
		name string
		f    func()
		msg  string
	}{
		{"nil registry", func() { New(nil) }, "otelmetrics: New with nil registry"},
		{"nil option", func() { New(reg.Metrics(), nil) }, "otelmetrics: New: option 0 is nil"},
		{"no bounds", func() { WithLatencyBuckets() }, "otelmetrics: WithLatencyBuckets: no bucket bounds"},
		{"decreasing", func() { WithLatencyBuckets(1, .5) }, "otelmetrics: WithLatencyBuckets: bound 1 (0.5) does not exceed bound 0 (1)"},
	}
	for _, tc := range cases {
		assert.PanicsWithValue(t, tc.msg, tc.f, tc.name)
	}
	m := New(reg.Metrics(), WithLatencyBuckets(.1, 1))
	assert.True(t, slices.Equal([]float64{.1, 1}, m.bounds))
}

// Every command metric both exporters report has its instrument, and
// each labelled one its attribute key.
func TestEveryCommandMetricHasAnInstrument(t *testing.T) {
	for m, i := range commandInstruments {
		cm := reading.CommandMetric(m)
		assert.NotEmpty(t, i.name, "command metric %d", m)
		assert.Contains(t, prometheusNames, i.name)
		assert.Equal(t, cm.Labelled(), commandLabelKeys[m] != "", "%s: a key for a labelled metric only", i.name)
	}
}

// A second Register on the same meter would add a second callback that
// observes every counter again, which the SDK sums: the counters would
// double. It is refused until the first is unregistered, and the
// counters keep their values.
func TestRegisteringTwiceOnAMeterDoesNotDoubleTheCounters(t *testing.T) {
	reg, _ := executions(t)
	meter, collect := manualMeter(t)
	const success = "rxhystrix_command_events_total{command=GetUser,event=SUCCESS,group=Users}"

	m := New(reg.Metrics())
	first, err := m.Register(meter)
	require.NoError(t, err)
	_, err = m.Register(meter)
	assert.ErrorIs(t, err, ErrAlreadyRegistered)
	assert.Equal(t, 4.0, collect()[success], "counted once")

	require.NoError(t, first.Unregister())
	again, err := m.Register(meter)
	require.NoError(t, err, "registered again once the first is unregistered")
	assert.Equal(t, 4.0, collect()[success])
	require.NoError(t, again.Unregister())
	require.NoError(t, again.Unregister(), "a second Unregister, as the SDK's, is no error")
}

// A command whose metrics idle eviction took out for longer than their
// percentile window comes back with latency histograms that start from
// zero. OpenTelemetry's cumulative points must then carry a new start
// time (the data model's reset), or a reader that turns them into deltas
// takes the fall for a negative count.
func TestHistogramStartsAgainAfterEviction(t *testing.T) {
	mc := clock.NewManual(t0)
	reg := metricsstream.NewRegistry(mc, metricsstream.WithIdleEviction(20*time.Second))
	cm := reg.Command("Idle", metricsstream.Config{}) // percentile window 60s in 10s buckets
	m := New(reg)
	record := func() {
		c := metricsstream.Completion{CommandKey: "Idle", Executed: true,
			ExecutionLatency: 20 * time.Millisecond, TotalLatency: 21 * time.Millisecond}
		c.Events.Add(metricsstream.Success, 1)
		cm.MarkCompletion(&c)
	}
	point := func() (metricdata.HistogramDataPoint[float64], bool) {
		sm, err := m.Produce(context.Background())
		require.NoError(t, err)
		for _, md := range sm[0].Metrics {
			if md.Name != executionDuration.name {
				continue
			}
			for _, p := range md.Data.(metricdata.Histogram[float64]).DataPoints {
				return p, true
			}
		}
		return metricdata.HistogramDataPoint[float64]{}, false
	}

	for range 5 {
		record()
	}
	mc.Advance(10 * time.Second)
	before, ok := point()
	require.True(t, ok)
	require.Equal(t, uint64(5), before.Count)

	mc.Advance(30 * time.Second)
	require.Equal(t, 1, reg.EvictIdle())
	_, ok = point()
	require.False(t, ok, "evicted metrics are not reported")
	mc.Advance(2 * time.Minute) // every bucket folded has left the window
	_, ok = point()
	require.False(t, ok)

	record() // back in the registry
	mc.Advance(10 * time.Second)
	after, ok := point()
	require.True(t, ok)
	require.Equal(t, uint64(1), after.Count, "the histogram starts again")
	assert.True(t, after.StartTime.After(before.Time), "a new series: start %v, the old one's last point %v", after.StartTime, before.Time)
	assert.False(t, after.StartTime.After(after.Time))
}

// gatedClock is a manual clock whose next Now, once armed, reads the time
// and then waits until the test releases it: a collection held between
// reading its time and using it.
type gatedClock struct {
	*clock.Manual
	gate atomic.Pointer[gate]
}

type gate struct{ read, release chan struct{} }

func (c *gatedClock) arm() *gate {
	g := &gate{read: make(chan struct{}), release: make(chan struct{})}
	c.gate.Store(g)
	return g
}

func (c *gatedClock) Now() time.Time {
	t := c.Manual.Now()
	if g := c.gate.Swap(nil); g != nil {
		close(g.read)
		<-g.release
	}
	return t
}

// Two readers that share m collect at once: the one that read the clock
// first must not take its turn after the other, or its points go back in
// time and a command new to it gets a start time after its own time.
func TestConcurrentProducesKeepStartBeforeTime(t *testing.T) {
	gc := &gatedClock{Manual: clock.NewManual(t0)}
	reg := metricsstream.NewRegistry(gc)
	m := New(reg)
	points := func(sm []metricdata.ScopeMetrics) []metricdata.HistogramDataPoint[float64] {
		var out []metricdata.HistogramDataPoint[float64]
		for _, md := range sm[0].Metrics {
			out = append(out, md.Data.(metricdata.Histogram[float64]).DataPoints...)
		}
		return out
	}
	_, err := m.Produce(context.Background()) // a first collection, at t0
	require.NoError(t, err)

	gc.Advance(5 * time.Second)
	g := gc.arm()
	done := make(chan []metricdata.ScopeMetrics)
	go func() { // reader A reads t0+5s, then waits
		sm, _ := m.Produce(context.Background())
		done <- sm
	}()
	<-g.read

	gc.Advance(5 * time.Second)
	var a, b []metricdata.ScopeMetrics
	if m.mu.TryLock() {
		// A holds no lock while it waits: reader B collects at t0+10s
		// meanwhile, then a command appears before A goes on.
		m.mu.Unlock()
		b, err = m.Produce(context.Background())
		require.NoError(t, err)
		reg.Command("Late", metricsstream.Config{})
		close(g.release)
		a = <-done
	} else {
		// A read the clock under its lock: B, after it, reads a later time.
		reg.Command("Late", metricsstream.Config{})
		close(g.release)
		a = <-done
		b, err = m.Produce(context.Background())
		require.NoError(t, err)
	}
	for _, sm := range [][]metricdata.ScopeMetrics{a, b} {
		for _, p := range points(sm) {
			assert.False(t, p.StartTime.After(p.Time), "start %v after time %v", p.StartTime, p.Time)
		}
	}
	c, err := m.Produce(context.Background()) // at t0+10s, after both
	require.NoError(t, err)
	for _, p := range points(c) {
		assert.False(t, p.StartTime.After(p.Time), "start %v after time %v", p.StartTime, p.Time)
	}
}
