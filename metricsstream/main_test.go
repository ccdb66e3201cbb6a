package metricsstream

import (
	"testing"
	"time"

	"github.com/rxhystrix/rxhystrix/internal/clock"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// t0 is where the manual clocks of the tests start.
var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// newTestMetrics returns the metrics of key "cmd" with cfg, on a manual
// clock reading t0.
func newTestMetrics(t testing.TB, cfg Config) (*CommandMetrics, *clock.Manual) {
	t.Helper()
	mc := clock.NewManual(t0)
	return NewRegistry(mc).Command("cmd", cfg), mc
}

// record records one execution made of events that ended now.
func record(m *CommandMetrics, events ...EventType) {
	c := Completion{CommandKey: m.Key()}
	for _, e := range events {
		c.Events.Add(e, 1)
	}
	m.MarkCompletion(&c)
}

// recordN records n executions made of events.
func recordN(m *CommandMetrics, n int, events ...EventType) {
	for range n {
		record(m, events...)
	}
}

func newManual() *clock.Manual { return clock.NewManual(t0) }
