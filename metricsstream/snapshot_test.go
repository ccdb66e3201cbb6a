package metricsstream

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

type fixedCommandStatus CommandStatus

func (s fixedCommandStatus) CommandStatus() CommandStatus { return CommandStatus(s) }

func TestCommandSnapshot(t *testing.T) {
	m, mc := newTestMetrics(t, Config{})
	s := m.Snapshot()
	assert.False(t, s.HasStatus, "no provider: the breaker counts as closed")
	assert.False(t, s.Status.CircuitBreakerOpen)

	st := CommandStatus{
		Group: "g", Pool: "p", CircuitBreakerOpen: true,
		Properties: CommandProperties{CircuitBreakerEnabled: true, RequestVolumeThreshold: 20, Isolation: "THREAD", Timeout: time.Second},
	}
	m.SetStatusProvider(fixedCommandStatus(st))
	m.MarkStart()
	c := Completion{ConcurrencyAtStart: m.MarkStart(), Executed: true, ExecutionLatency: time.Millisecond, TotalLatency: 2 * time.Millisecond}
	c.Events.Add(Failure, 1)
	c.Events.Add(FallbackMissing, 1)
	m.MarkCompletion(&c)
	recordN(m, 3, Success)
	mc.Advance(10 * time.Second)

	s = m.Snapshot()
	assert.Equal(t, "cmd", s.Key)
	assert.Equal(t, t0.Add(10*time.Second), s.Time)
	assert.True(t, s.HasStatus)
	assert.Equal(t, st, s.Status)
	assert.Equal(t, HealthCounts{Total: 4, Errors: 1, ErrorPercentage: 25}, s.Health)
	assert.Equal(t, int64(3), s.Rolling[Success])
	assert.Equal(t, int64(1), s.Rolling[ExceptionThrown])
	assert.Equal(t, s.Rolling, s.Cumulative)
	assert.Equal(t, int64(1), s.ConcurrentExecutions)
	assert.Equal(t, int64(2), s.RollingMaxConcurrentExecutions)
	assert.Equal(t, time.Millisecond, s.Latency.Execution.Percentile(0))
	assert.Equal(t, 2*time.Millisecond, s.Latency.Total.Percentile(0))
	assert.Equal(t, m.Config(), s.Config)

	m.SetStatusProvider(nil)
	_, ok := m.Status()
	assert.False(t, ok)
}

// Snapshot.Config is the windows in use, as Config returns them: with the
// slow-call duration SetSlowCallDuration set.
func TestSnapshotConfigHasTheLiveSlowCallDuration(t *testing.T) {
	m, _ := newTestMetrics(t, Config{SlowCallDuration: time.Second})
	m.SetSlowCallDuration(2 * time.Second)
	if got, want := m.Snapshot().Config, m.Config(); got != want {
		t.Errorf("Snapshot().Config = %+v, want Config() %+v", got, want)
	}
}
