package fleet

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"

	"github.com/rxhystrix/rxhystrix/clock"
	"github.com/rxhystrix/rxhystrix/command"
	"github.com/rxhystrix/rxhystrix/metricsstream"
)

func TestCollectorShowsTheFallbackToLocalHealth(t *testing.T) {
	c, mem, in := threeOnMem(t)
	a, b := in[0], in[1]
	a.down.Store(true)
	a.run(10)
	b.run(10)
	c.ticks(2)
	mem.setFail(errors.New("connection refused"))
	c.tick()
	assert.NoError(t, testutil.CollectAndCompare(a.fleet.Collector(), strings.NewReader(`
# HELP rxhystrix_fleet_exchange_failures_total Exchanges of the command's health buckets with Redis that failed or timed out.
# TYPE rxhystrix_fleet_exchange_failures_total counter
rxhystrix_fleet_exchange_failures_total{command="GetUser"} 1
# HELP rxhystrix_fleet_exchanges_total Exchanges of the command's health buckets with Redis that succeeded.
# TYPE rxhystrix_fleet_exchanges_total counter
rxhystrix_fleet_exchanges_total{command="GetUser"} 2
# HELP rxhystrix_fleet_local_fallback 1 while the command's breaker judges on this instance's health alone, Redis having failed, else 0.
# TYPE rxhystrix_fleet_local_fallback gauge
rxhystrix_fleet_local_fallback{command="GetUser"} 1
# HELP rxhystrix_fleet_health_requests Requests in the health snapshot the command's breaker was last sent: the fleet's, or this instance's.
# TYPE rxhystrix_fleet_health_requests gauge
rxhystrix_fleet_health_requests{command="GetUser"} 10
`), "rxhystrix_fleet_exchanges_total", "rxhystrix_fleet_exchange_failures_total", "rxhystrix_fleet_local_fallback", "rxhystrix_fleet_health_requests"))

	mem.setFail(nil)
	c.tick()
	assert.True(t, b.source().Stats().Fallback, "the first exchange after the outage writes, and judges alone")
	c.tick()
	assert.NoError(t, testutil.CollectAndCompare(b.fleet.Collector(), strings.NewReader(`
# HELP rxhystrix_fleet_local_fallback 1 while the command's breaker judges on this instance's health alone, Redis having failed, else 0.
# TYPE rxhystrix_fleet_local_fallback gauge
rxhystrix_fleet_local_fallback{command="GetUser"} 0
# HELP rxhystrix_fleet_health_requests Requests in the health snapshot the command's breaker was last sent: the fleet's, or this instance's.
# TYPE rxhystrix_fleet_health_requests gauge
rxhystrix_fleet_health_requests{command="GetUser"} 20
# HELP rxhystrix_fleet_error_percentage Errors per 100 requests in the health snapshot the command's breaker was last sent.
# TYPE rxhystrix_fleet_error_percentage gauge
rxhystrix_fleet_error_percentage{command="GetUser"} 50
`), "rxhystrix_fleet_local_fallback", "rxhystrix_fleet_health_requests", "rxhystrix_fleet_error_percentage"))
}

func TestCollectorShowsTheClockSkewFromTheStore(t *testing.T) {
	c, mem, in := threeOnMem(t)
	a := in[0]
	assert.Zero(t, testutil.CollectAndCount(a.fleet.Collector(), "rxhystrix_fleet_clock_skew_seconds"),
		"no skew is known before an exchange")

	mem.setAhead(1500 * time.Millisecond)
	c.tick()
	assert.Equal(t, -1500*time.Millisecond, a.source().Stats().ClockSkew, "the instance's clock runs behind the store's")
	assert.NoError(t, testutil.CollectAndCompare(a.fleet.Collector(), strings.NewReader(`
# HELP rxhystrix_fleet_clock_skew_seconds How far this instance's clock ran ahead of Redis's (negative: behind) at the latest successful exchange of the command's health buckets.
# TYPE rxhystrix_fleet_clock_skew_seconds gauge
rxhystrix_fleet_clock_skew_seconds{command="GetUser"} -1.5
`), "rxhystrix_fleet_clock_skew_seconds"))

	mem.setAhead(-250 * time.Millisecond)
	mem.setFail(errors.New("connection refused"))
	c.tick()
	assert.Equal(t, -1500*time.Millisecond, a.source().Stats().ClockSkew, "a failed exchange measures nothing")
	mem.setFail(nil)
	c.tick()
	assert.Equal(t, 250*time.Millisecond, a.source().Stats().ClockSkew)
}

// A key that is not UTF-8 labels the metrics escaped, as package
// metricsstream/prometheus labels its command's, where it made the
// collector panic inside the scrape.
func TestCollectorEscapesAKeyThatIsNotUTF8(t *testing.T) {
	const bad = "bad-\xff"
	clk := clock.NewManual(epoch)
	f := newFleet(Config{Instance: "a", Keys: []string{bad}}.withDefaults(), newMemStore(clk))
	t.Cleanup(f.Close)
	reg := metricsstream.NewRegistry(clk)
	f.HealthSource(command.KeyHealth{Key: bad, Metrics: reg.Command(bad, metricsstream.Config{}), Clock: clk})
	assert.NoError(t, testutil.CollectAndCompare(f.Collector(), strings.NewReader(`
# HELP rxhystrix_fleet_exchanges_total Exchanges of the command's health buckets with Redis that succeeded.
# TYPE rxhystrix_fleet_exchanges_total counter
rxhystrix_fleet_exchanges_total{command="bad-\\xff"} 0
`), "rxhystrix_fleet_exchanges_total"))
}
