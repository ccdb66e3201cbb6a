package plugins

import (
	"bytes"
	"context"
	"io"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	metrics "github.com/rcrowley/go-metrics"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/clock"
	metricCollector "github.com/rxhystrix/rxhystrix/hystrixgo/metric_collector"
)

func TestGraphiteCollectorAddsHystrixGosStatistics(t *testing.T) {
	r := metrics.NewRegistry()
	// "/", ":" and "." in the circuit's name become "-".
	c := newGraphiteCollector("get/user.v1:x", r)
	c.Update(metricCollector.MetricResult{Attempts: 1, Successes: 1, TotalDuration: 12 * time.Millisecond, RunDuration: 10 * time.Millisecond})
	c.Update(metricCollector.MetricResult{Attempts: 1, Errors: 1, ShortCircuits: 1, FallbackSuccesses: 1, TotalDuration: time.Millisecond})
	c.Update(metricCollector.MetricResult{Attempts: 1, Errors: 1, Failures: 1, Rejects: 1, Timeouts: 1, FallbackFailures: 1,
		ContextCanceled: 1, ContextDeadlineExceeded: 1})

	counts := map[string]int64{}
	r.Each(func(name string, m any) {
		switch m := m.(type) {
		case metrics.Counter:
			counts[name] = m.Count()
		case metrics.Gauge:
			counts[name] = m.Value()
		case metrics.Timer:
			counts[name] = m.Count()
			assert.Equal(t, int64(0), m.Min(), "%s: the failure took no time", name)
		}
	})
	assert.Equal(t, map[string]int64{
		"get-user-v1-x.circuitOpen":             1, // the short-circuit came last
		"get-user-v1-x.attempts":                3,
		"get-user-v1-x.errors":                  2,
		"get-user-v1-x.successes":               1,
		"get-user-v1-x.failures":                1,
		"get-user-v1-x.rejects":                 1,
		"get-user-v1-x.shortCircuits":           1,
		"get-user-v1-x.timeouts":                1,
		"get-user-v1-x.fallbackSuccesses":       1,
		"get-user-v1-x.fallbackFailures":        1,
		"get-user-v1-x.contextCanceled":         1,
		"get-user-v1-x.contextDeadlineExceeded": 1,
		"get-user-v1-x.totalDuration":           3,
		"get-user-v1-x.runDuration":             3,
	}, counts)
	assert.Equal(t, int64(12*time.Millisecond), r.Get("get-user-v1-x.totalDuration").(metrics.Timer).Max())
}

func TestGraphiteCollectorRegistersAStatisticWhenItIsFirstNotZero(t *testing.T) {
	r := metrics.NewRegistry()
	newGraphiteCollector("c", r).Update(metricCollector.MetricResult{Attempts: 1, Successes: 1})
	var names []string
	r.Each(func(name string, _ any) { names = append(names, name) })
	assert.ElementsMatch(t, []string{"c.circuitOpen", "c.attempts", "c.successes", "c.totalDuration", "c.runDuration"}, names)
}

func TestGraphiteCollectorLogsANameHeldByAnotherKindOfMetric(t *testing.T) {
	logged := captureLog(t)
	r := metrics.NewRegistry()
	require.NoError(t, r.Register("c.attempts", metrics.NewGauge()))
	newGraphiteCollector("c", r).Update(metricCollector.MetricResult{Attempts: 1, Successes: 1})
	assert.Equal(t, "plugins: sending graphite statistic c.attempts: go-metrics holds another kind of metric under the name, not a counter\n",
		logged.next(t))
	assert.Equal(t, int64(1), r.Get("c.successes").(metrics.Counter).Count(), "the other statistics are added")
}

func TestWriteGraphiteWritesGoMetricsLines(t *testing.T) {
	r := metrics.NewRegistry()
	metrics.GetOrRegisterCounter("requests", r).Inc(3)
	metrics.GetOrRegisterGauge("open", r).Update(1)
	metrics.GetOrRegisterGaugeFloat64("share", r).Update(0.25)
	h := metrics.GetOrRegisterHistogram("sizes", r, metrics.NewUniformSample(100))
	for _, v := range []int64{10, 20, 30, 40} {
		h.Update(v)
	}
	var b bytes.Buffer
	writeGraphite(&b, r, "myapp", 1700000000)
	assert.ElementsMatch(t, []string{
		"myapp.requests.count 3 1700000000",
		"myapp.open.value 1 1700000000",
		"myapp.share.value 0.250000 1700000000",
		"myapp.sizes.count 4 1700000000",
		"myapp.sizes.min 10 1700000000",
		"myapp.sizes.max 40 1700000000",
		"myapp.sizes.mean 25.00 1700000000",
		"myapp.sizes.std-dev 11.18 1700000000",
		"myapp.sizes.50-percentile 25.00 1700000000",
		"myapp.sizes.75-percentile 37.50 1700000000",
		"myapp.sizes.95-percentile 40.00 1700000000",
		"myapp.sizes.99-percentile 40.00 1700000000",
		"myapp.sizes.999-percentile 40.00 1700000000",
	}, strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n"))

	b.Reset()
	metrics.GetOrRegisterTimer("latency", r).Update(time.Millisecond)
	metrics.GetOrRegisterMeter("arrivals", r).Mark(1)
	writeGraphite(&b, r, "", 1700000000) // no prefix: no leading dot
	assert.Equal(t, []string{
		"arrivals.count", "arrivals.fifteen-minute", "arrivals.five-minute", "arrivals.mean", "arrivals.one-minute",
		"latency.50-percentile", "latency.75-percentile", "latency.95-percentile", "latency.99-percentile", "latency.999-percentile",
		"latency.count", "latency.fifteen-minute", "latency.five-minute", "latency.max", "latency.mean", "latency.mean-rate",
		"latency.min", "latency.one-minute", "latency.std-dev",
	}, statNamesOf(t, b.String(), "arrivals.", "latency."))
	assert.Contains(t, b.String(), "latency.min 1000000 1700000000\n", "durations in nanoseconds")
}

// statNamesOf returns, sorted, the names of the plaintext lines whose name
// starts with one of prefixes.
func statNamesOf(t *testing.T, plaintext string, prefixes ...string) []string {
	t.Helper()
	var names []string
	for _, line := range strings.Split(strings.TrimSuffix(plaintext, "\n"), "\n") {
		f := strings.Fields(line)
		require.Len(t, f, 3, "name value timestamp: %q", line)
		for _, p := range prefixes {
			if strings.HasPrefix(f[0], p) {
				names = append(names, f[0])
			}
		}
	}
	slices.Sort(names)
	return names
}

// graphiteServer accepts one connection at a time and returns what was
// sent over it.
type graphiteServer struct{ *net.TCPListener }

func newGraphiteServer(t *testing.T) graphiteServer {
	t.Helper()
	ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	return graphiteServer{ln}
}

func (s graphiteServer) addr() *net.TCPAddr { return s.Addr().(*net.TCPAddr) }

func (s graphiteServer) receive(t *testing.T) string {
	t.Helper()
	require.NoError(t, s.SetDeadline(time.Now().Add(10*time.Second)))
	conn, err := s.Accept()
	require.NoError(t, err, "the reporter connects")
	defer conn.Close()
	b, err := io.ReadAll(conn)
	require.NoError(t, err)
	return string(b)
}

func TestGraphiteReporterSendsEveryTickOverANewConnection(t *testing.T) {
	server := newGraphiteServer(t)
	r := metrics.NewRegistry()
	c := newGraphiteCollector("get/user", r)
	start := time.Unix(1700000000, 0)
	mc := clock.NewManual(start)

	g, err := startGraphiteReporter(&GraphiteCollectorConfig{GraphiteAddr: server.addr(), Prefix: "myapp.hystrix", TickInterval: 10 * time.Second}, r, mc)
	require.NoError(t, err)
	defer g.Close()
	require.NoError(t, mc.BlockUntil(context.Background(), 1), "the reporter's ticker")

	c.Update(metricCollector.MetricResult{Attempts: 1, Successes: 1, TotalDuration: 12 * time.Millisecond})
	mc.Advance(10 * time.Second)
	first := server.receive(t)
	assert.Contains(t, first, "myapp.hystrix.get-user.attempts.count 1 1700000010\n", "stamped with the tick's time")
	assert.Contains(t, first, "myapp.hystrix.get-user.circuitOpen.value 0 1700000010\n")
	assert.Contains(t, first, "myapp.hystrix.get-user.totalDuration.max 12000000 1700000010\n")

	c.Update(metricCollector.MetricResult{Attempts: 1, Errors: 1, ShortCircuits: 1})
	mc.Advance(10 * time.Second)
	second := server.receive(t)
	assert.Contains(t, second, "myapp.hystrix.get-user.attempts.count 2 1700000020\n", "the counters are cumulative")
	assert.Contains(t, second, "myapp.hystrix.get-user.shortCircuits.count 1 1700000020\n")
	assert.Contains(t, second, "myapp.hystrix.get-user.circuitOpen.value 1 1700000020\n")

	require.NoError(t, g.Close())
	assert.Equal(t, 0, mc.Pending(), "Close stops the ticker")
	require.NoError(t, g.Close(), "a second Close is harmless")
}

func TestGraphiteReporterLogsASendingThatFailsAndCarriesOn(t *testing.T) {
	logged := captureLog(t)
	server := newGraphiteServer(t)
	addr := server.addr()
	require.NoError(t, server.Close()) // nobody listens there now
	mc := clock.NewManual(time.Unix(1700000000, 0))

	g, err := startGraphiteReporter(&GraphiteCollectorConfig{GraphiteAddr: addr, TickInterval: time.Second}, metrics.NewRegistry(), mc)
	require.NoError(t, err)
	defer g.Close()
	require.NoError(t, mc.BlockUntil(context.Background(), 1))
	mc.Advance(time.Second)
	assert.Contains(t, logged.next(t), "plugins: sending to graphite at "+addr.String()+": dial tcp")
	assert.Equal(t, 1, mc.Pending(), "the ticker keeps ticking")
}

func TestInitializeGraphiteCollectorRejectsAConfigThatCannotWork(t *testing.T) {
	addr := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 2003}
	cases := []struct {
		name   string
		config *GraphiteCollectorConfig
		msg    string
	}{
		{"no config", nil, "the config is nil"},
		{"no address", &GraphiteCollectorConfig{TickInterval: time.Second}, "GraphiteAddr is nil"},
		{"no interval", &GraphiteCollectorConfig{GraphiteAddr: addr}, "TickInterval 0s is not positive"},
		{"negative interval", &GraphiteCollectorConfig{GraphiteAddr: addr, TickInterval: -time.Second}, "TickInterval -1s is not positive"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g, err := InitializeGraphiteCollector(tc.config)
			require.ErrorIs(t, err, ErrInvalidConfig)
			assert.ErrorContains(t, err, tc.msg)
			require.NotNil(t, g, "a reporter that sends nothing")
			assert.NoError(t, g.Close())
		})
	}
}
