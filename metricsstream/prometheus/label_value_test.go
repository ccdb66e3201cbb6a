package prometheus

import (
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/rxhystrix/rxhystrix/internal/clock"
	"github.com/rxhystrix/rxhystrix/metricsstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Keys that are not valid UTF-8 get distinct label values, and the scrape
// of the others succeeds.
func TestCollectorScrapesKeysThatAreNotUTF8(t *testing.T) {
	mc := clock.NewManual(t0)
	reg := metricsstream.NewRegistry(mc)
	for _, key := range []string{"ok", "bad-\xff", "bad-\xfe"} {
		record(reg.Command(key, metricsstream.Config{}), 0, metricsstream.Success)
		reg.Pool(key, metricsstream.Config{})
		reg.Collapser(key, metricsstream.Config{}).MarkBatch(1)
	}
	reg.Command("grouped", metricsstream.Config{}).SetStatusProvider(commandStatus{Group: "group-\xff"})
	mc.Advance(10 * time.Second)
	pr := prometheus.NewPedanticRegistry()
	pr.MustRegister(NewCollector(reg))
	srv := httptest.NewServer(promhttp.HandlerFor(pr, promhttp.HandlerOpts{}))
	t.Cleanup(srv.Close)

	body := scrape(t, srv.URL) // HTTP 200
	assert.Contains(t, body, `rxhystrix_command_events_total{command="ok",event="SUCCESS",group="ok"} 1`)
	assert.Contains(t, body, `rxhystrix_command_events_total{command="bad-\\xff",event="SUCCESS",group="bad-\\xff"} 1`)
	assert.Contains(t, body, `rxhystrix_command_events_total{command="bad-\\xfe",event="SUCCESS",group="bad-\\xfe"} 1`)
	assert.Contains(t, body, `rxhystrix_command_circuit_open{command="grouped",group="group-\\xff"} 0`)

	mfs, err := pr.Gather()
	require.NoError(t, err)
	values := func(metric, label string) []string {
		var vs []string
		for _, mf := range mfs {
			if mf.GetName() == metric {
				for _, m := range mf.GetMetric() {
					vs = append(vs, labels(m.GetLabel())[label])
				}
			}
		}
		return vs
	}
	assert.Equal(t, []string{`bad-\xfe`, `bad-\xff`, "grouped", "ok"}, values("rxhystrix_command_health_requests", "command"))
	assert.Equal(t, []string{`bad-\xfe`, `bad-\xff`, "ok"}, values("rxhystrix_pool_active_commands", "pool"))
	assert.Contains(t, body, `rxhystrix_collapser_events_total{collapser="bad-\\xfe",event="BATCH_EXECUTED"} 1`)
	assert.Contains(t, body, `rxhystrix_collapser_events_total{collapser="bad-\\xff",event="BATCH_EXECUTED"} 1`)
}
