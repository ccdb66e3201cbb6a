package plugins

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	hystrix "github.com/rxhystrix/rxhystrix/hystrixgo"
	metricCollector "github.com/rxhystrix/rxhystrix/hystrixgo/metric_collector"
)

// datadogRecorder is a DatadogClient that records each statistic as
// "kind name value tags".
type datadogRecorder struct {
	mu   sync.Mutex
	sent []string
	err  error
}

func (d *datadogRecorder) record(kind, name string, v any, tags []string, rate float64) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if rate != 1 {
		panic(fmt.Sprintf("rate %v, want 1", rate))
	}
	d.sent = append(d.sent, fmt.Sprintf("%s %s %v %s", kind, name, v, strings.Join(tags, ",")))
	return d.err
}

func (d *datadogRecorder) Count(name string, v int64, tags []string, rate float64) error {
	return d.record("count", name, v, tags, rate)
}

func (d *datadogRecorder) Gauge(name string, v float64, tags []string, rate float64) error {
	return d.record("gauge", name, v, tags, rate)
}

func (d *datadogRecorder) TimeInMilliseconds(name string, v float64, tags []string, rate float64) error {
	return d.record("ms", name, v, tags, rate)
}

func (d *datadogRecorder) lines() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.sent)
}

func TestDatadogCollectorSendsHystrixGosStatistics(t *testing.T) {
	ms := time.Millisecond
	tag := "hystrixcircuit:get/user.v1"
	cases := []struct {
		name   string
		result metricCollector.MetricResult
		want   []string
	}{
		{"a success", metricCollector.MetricResult{
			Attempts: 1, Successes: 1, TotalDuration: 12 * ms, RunDuration: 10900 * time.Microsecond, ConcurrencyInUse: 0.25,
		}, []string{
			"gauge hystrix.circuitOpen 0 " + tag,
			"count hystrix.attempts 1 " + tag,
			"count hystrix.successes 1 " + tag,
			"ms hystrix.totalDuration 12 " + tag,
			"ms hystrix.runDuration 10 " + tag, // whole milliseconds, as hystrix-go
			"ms hystrix.concurrencyInUse 25 " + tag,
		}},
		{"a short-circuit answered by the fallback", metricCollector.MetricResult{
			Attempts: 1, Errors: 1, ShortCircuits: 1, FallbackSuccesses: 1, TotalDuration: ms,
		}, []string{
			"gauge hystrix.circuitOpen 1 " + tag,
			"count hystrix.attempts 1 " + tag,
			"count hystrix.errors 1 " + tag,
			"count hystrix.shortCircuits 1 " + tag,
			"count hystrix.fallbackSuccesses 1 " + tag,
			"ms hystrix.totalDuration 1 " + tag,
			"ms hystrix.runDuration 0 " + tag,
			"ms hystrix.concurrencyInUse 0 " + tag,
		}},
		{"every other counter", metricCollector.MetricResult{
			Attempts: 1, Errors: 1, Failures: 1, Rejects: 1, Timeouts: 1, FallbackFailures: 1,
			ContextCanceled: 1, ContextDeadlineExceeded: 1,
		}, []string{
			"count hystrix.attempts 1 " + tag,
			"count hystrix.errors 1 " + tag,
			"count hystrix.failures 1 " + tag,
			"count hystrix.rejects 1 " + tag,
			"count hystrix.timeouts 1 " + tag,
			"count hystrix.fallbackFailures 1 " + tag,
			"count hystrix.contextCanceled 1 " + tag,
			"count hystrix.contextDeadlineExceeded 1 " + tag,
			"ms hystrix.totalDuration 0 " + tag,
			"ms hystrix.runDuration 0 " + tag,
			"ms hystrix.concurrencyInUse 0 " + tag,
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := new(datadogRecorder)
			// The circuit's name goes into the tag as it is.
			NewDatadogCollectorWithClient(rec)("get/user.v1").Update(tc.result)
			assert.Equal(t, tc.want, rec.lines())
		})
	}
}

func TestDatadogCollectorLogsWhatTheClientRefuses(t *testing.T) {
	logged := captureLog(t)
	rec := &datadogRecorder{err: errors.New("client is closed")}
	NewDatadogCollectorWithClient(rec)("c").Update(metricCollector.MetricResult{Attempts: 1})
	assert.Len(t, rec.lines(), 4, "a refused statistic does not stop the others")
	assert.Contains(t, logged.next(t), "plugins: sending datadog statistic hystrix.attempts: client is closed")
}

// NewDatadogCollector's client, datadog-go's, sends DogStatsD lines with
// the prefix as namespace and the circuit as tag.
func TestNewDatadogCollectorsClientSendsToTheAgent(t *testing.T) {
	for _, tc := range []struct{ prefix, name string }{
		{"myapp", "myapp.hystrix.attempts"},
		{"myapp.", "myapp.hystrix.attempts"},
		{"", "hystrix.attempts"},
	} {
		t.Run(fmt.Sprintf("prefix %q", tc.prefix), func(t *testing.T) {
			agent, err := net.ListenPacket("udp", "127.0.0.1:0")
			require.NoError(t, err)
			defer agent.Close()

			c, err := newDatadogClient(agent.LocalAddr().String(), tc.prefix)
			require.NoError(t, err)
			NewDatadogCollectorWithClient(c)("get_user").Update(metricCollector.MetricResult{Attempts: 1, Successes: 1})
			require.NoError(t, c.Close(), "Close sends what is buffered")

			want := tc.name + ":1|c|#hystrixcircuit:get_user"
			require.NoError(t, agent.SetReadDeadline(time.Now().Add(10*time.Second)))
			buf := make([]byte, 64<<10)
			for {
				n, _, err := agent.ReadFrom(buf)
				require.NoError(t, err, "%s arrives", want)
				if slices.ContainsFunc(strings.Split(string(buf[:n]), "\n"), func(l string) bool {
					return strings.HasPrefix(l, want)
				}) {
					return
				}
			}
		})
	}
}

func TestNewDatadogCollectorReportsAnAddressThatDoesNotResolve(t *testing.T) {
	f, err := NewDatadogCollector("no port", "myapp")
	require.Error(t, err)
	assert.ErrorContains(t, err, `plugins: datadog client for "no port"`)
	assert.Nil(t, f)
}

// Registered as hystrix-go's README shows, the collector receives every
// command of the drop-in package.
func TestDatadogCollectorReceivesTheDropInsCommands(t *testing.T) {
	rec := new(datadogRecorder)
	metricCollector.Registry.Register(NewDatadogCollectorWithClient(rec))
	t.Cleanup(hystrix.Flush)
	require.NoError(t, hystrix.Do("plugins_datadog", func() error { return nil }, nil))
	assert.Contains(t, rec.lines(), "count hystrix.successes 1 hystrixcircuit:plugins_datadog")
}
