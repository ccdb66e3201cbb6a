package plugins

import (
	"context"
	"errors"
	"math"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/cactus/go-statsd-client/v5/statsd"
	"github.com/cactus/go-statsd-client/v5/statsd/statsdtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	hystrix "github.com/rxhystrix/rxhystrix/hystrixgo"
	metricCollector "github.com/rxhystrix/rxhystrix/hystrixgo/metric_collector"
)

// recordingClient returns a client whose statistics go to a recorder, as
// InitializeStatsdCollector's would go to the server.
func recordingClient(t *testing.T, prefix string) (*StatsdCollectorClient, *statsdtest.RecordingSender) {
	t.Helper()
	sender := statsdtest.NewRecordingSender()
	c, err := statsd.NewClientWithSender(sender, prefix, 0)
	require.NoError(t, err)
	return &StatsdCollectorClient{client: c, sampleRate: 1}, sender
}

// sent lists the statistics sent, one "name:value|type" each.
func sent(s *statsdtest.RecordingSender) []string {
	var out []string
	for _, st := range s.GetSent() {
		out = append(out, string(st.Raw))
	}
	return out
}

func TestStatsdCollectorSendsHystrixGosStatistics(t *testing.T) {
	ms := time.Millisecond
	cases := []struct {
		name   string
		result metricCollector.MetricResult
		want   []string
	}{
		{"a success", metricCollector.MetricResult{
			Attempts: 1, Successes: 1, TotalDuration: 12 * ms, RunDuration: 10500 * time.Microsecond, ConcurrencyInUse: 0.25,
		}, []string{
			"app.get-user-v1-x.circuitOpen:0|g",
			"app.get-user-v1-x.attempts:1|c",
			"app.get-user-v1-x.successes:1|c",
			"app.get-user-v1-x.totalDuration:12|ms",
			"app.get-user-v1-x.runDuration:10.5|ms",
			"app.get-user-v1-x.concurrencyInUse:25|ms",
		}},
		{"a short-circuit answered by the fallback", metricCollector.MetricResult{
			Attempts: 1, Errors: 1, ShortCircuits: 1, FallbackSuccesses: 1, TotalDuration: ms,
		}, []string{
			"app.get-user-v1-x.circuitOpen:1|g",
			"app.get-user-v1-x.attempts:1|c",
			"app.get-user-v1-x.errors:1|c",
			"app.get-user-v1-x.shortCircuits:1|c",
			"app.get-user-v1-x.fallbackSuccesses:1|c",
			"app.get-user-v1-x.totalDuration:1|ms",
			"app.get-user-v1-x.runDuration:0|ms",
			"app.get-user-v1-x.concurrencyInUse:0|ms",
		}},
		{"every other counter", metricCollector.MetricResult{
			Attempts: 1, Errors: 1, Failures: 1, Rejects: 1, Timeouts: 1, FallbackFailures: 1,
			ContextCanceled: 1, ContextDeadlineExceeded: 1,
		}, []string{
			"app.get-user-v1-x.attempts:1|c",
			"app.get-user-v1-x.errors:1|c",
			"app.get-user-v1-x.failures:1|c",
			"app.get-user-v1-x.rejects:1|c",
			"app.get-user-v1-x.timeouts:1|c",
			"app.get-user-v1-x.fallbackFailures:1|c",
			"app.get-user-v1-x.contextCanceled:1|c",
			"app.get-user-v1-x.contextDeadlineExceeded:1|c",
			"app.get-user-v1-x.totalDuration:0|ms",
			"app.get-user-v1-x.runDuration:0|ms",
			"app.get-user-v1-x.concurrencyInUse:0|ms",
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, rec := recordingClient(t, "app")
			// "/", ":" and "." in the circuit's name become "-", so that
			// the name is one segment of the statistic's.
			c.NewStatsdCollector("get/user.v1:x").Update(tc.result)
			assert.Equal(t, tc.want, sent(rec))
		})
	}
}

func TestStatsdCollectorSamples(t *testing.T) {
	c, rec := recordingClient(t, "")
	c.sampleRate = 1e-9 // as good as never
	col := c.NewStatsdCollector("c")
	for range 100 {
		col.Update(metricCollector.MetricResult{Attempts: 1, Successes: 1})
	}
	assert.Empty(t, sent(rec), "the collector passes its rate on to the client, which samples")
}

func TestInitializeStatsdCollectorSendsToTheServer(t *testing.T) {
	server, err := net.ListenPacket("udp", "127.0.0.1:0")
	require.NoError(t, err)
	defer server.Close()

	c, err := InitializeStatsdCollector(&StatsdCollectorConfig{
		StatsdAddr: server.LocalAddr().String(), Prefix: "myapp.hystrix", SampleRate: 1, FlushBytes: WANStatsdFlushBytes,
	})
	require.NoError(t, err)
	c.NewStatsdCollector("get_user").Update(metricCollector.MetricResult{Attempts: 1, Successes: 1, TotalDuration: time.Millisecond})
	require.NoError(t, c.Close(), "Close sends what is buffered")

	require.NoError(t, server.SetReadDeadline(time.Now().Add(10*time.Second)))
	buf := make([]byte, 64<<10)
	n, _, err := server.ReadFrom(buf)
	require.NoError(t, err, "a packet arrives")
	lines := strings.Split(strings.TrimSpace(string(buf[:n])), "\n")
	assert.Equal(t, []string{
		"myapp.hystrix.get_user.circuitOpen:0|g",
		"myapp.hystrix.get_user.attempts:1|c",
		"myapp.hystrix.get_user.successes:1|c",
		"myapp.hystrix.get_user.totalDuration:1|ms",
		"myapp.hystrix.get_user.runDuration:0|ms",
		"myapp.hystrix.get_user.concurrencyInUse:0|ms",
	}, lines)
}

func TestInitializeStatsdCollectorDefaults(t *testing.T) {
	c, err := InitializeStatsdCollector(&StatsdCollectorConfig{StatsdAddr: "127.0.0.1:8125"})
	require.NoError(t, err)
	defer c.Close()
	assert.Equal(t, float32(1), c.sampleRate, "no SampleRate: every statistic")
	assert.Equal(t, float32(1), c.NewStatsdCollector("c").(*StatsdCollector).sampleRate)
}

func TestInitializeStatsdCollectorRejectsAConfigThatCannotWork(t *testing.T) {
	cases := []struct {
		name   string
		config *StatsdCollectorConfig
		msg    string
	}{
		{"no config", nil, "the config is nil"},
		{"no address", &StatsdCollectorConfig{Prefix: "p"}, "StatsdAddr is empty"},
		{"negative FlushBytes", &StatsdCollectorConfig{StatsdAddr: "127.0.0.1:8125", FlushBytes: -1}, "FlushBytes -1 is negative"},
		{"rate over 1", &StatsdCollectorConfig{StatsdAddr: "127.0.0.1:8125", SampleRate: 1.5}, "SampleRate 1.5 is not between 0 and 1"},
		{"negative rate", &StatsdCollectorConfig{StatsdAddr: "127.0.0.1:8125", SampleRate: -0.5}, "SampleRate -0.5 is not between 0 and 1"},
		{"NaN rate", &StatsdCollectorConfig{StatsdAddr: "127.0.0.1:8125", SampleRate: float32(math.NaN())}, "SampleRate NaN is not between 0 and 1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := InitializeStatsdCollector(tc.config)
			require.ErrorIs(t, err, ErrInvalidConfig)
			assert.ErrorContains(t, err, tc.msg)
			require.NotNil(t, c, "a client that sends nothing, as hystrix-go's fallback")
			c.NewStatsdCollector("c").Update(metricCollector.MetricResult{Attempts: 1, Successes: 1})
			assert.NoError(t, c.Close())
		})
	}
}

func TestInitializeStatsdCollectorReportsAnAddressThatDoesNotResolve(t *testing.T) {
	c, err := InitializeStatsdCollector(&StatsdCollectorConfig{StatsdAddr: "no port"})
	require.Error(t, err)
	assert.False(t, errors.Is(err, ErrInvalidConfig), "not a bad field: the address does not resolve")
	assert.ErrorContains(t, err, `"no port"`)
	c.NewStatsdCollector("c").Update(metricCollector.MetricResult{Attempts: 1})
	assert.NoError(t, c.Close())
}

func TestNewStatsdCollectorPanicsOnAClientNotInitialized(t *testing.T) {
	assert.PanicsWithValue(t, "plugins: NewStatsdCollector on a StatsdCollectorClient not made by InitializeStatsdCollector",
		func() { new(StatsdCollectorClient).NewStatsdCollector("c") })
}

// Registered as hystrix-go's README shows, the collector receives every
// command of the drop-in package.
func TestStatsdCollectorReceivesTheDropInsCommands(t *testing.T) {
	c, rec := recordingClient(t, "myapp")
	metricCollector.Registry.Register(c.NewStatsdCollector)
	require.NoError(t, hystrix.Do("plugins_statsd", func() error { return nil }, nil))
	require.NoError(t, hystrix.DoC(context.Background(), "plugins_statsd", func(context.Context) error { return errors.New("down") },
		func(context.Context, error) error { return nil }))
	got := strings.Join(sent(rec), " ")
	assert.Contains(t, got, "myapp.plugins_statsd.successes:1|c")
	assert.Contains(t, got, "myapp.plugins_statsd.failures:1|c")
	assert.Contains(t, got, "myapp.plugins_statsd.fallbackSuccesses:1|c")
	t.Cleanup(hystrix.Flush)
}
