package turbine

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/clock"
	"github.com/rxhystrix/rxhystrix/command"
	"github.com/rxhystrix/rxhystrix/internal/browsertest"
	"github.com/rxhystrix/rxhystrix/metricsstream"
	"github.com/rxhystrix/rxhystrix/metricsstream/dashboard"
)

// The dashboard draws the sum of two services: one answers its calls, the
// other's circuit is forced open.
func TestDashboardDrawsTheSumOfTwoServices(t *testing.T) {
	browser := browsertest.Start(t)
	shutdown := make(chan struct{})
	var urls []string
	for i, calls := range []int{3, 4} {
		mc := clock.NewManual(t0)
		reg := command.NewRegistry(command.WithClock(mc))
		t.Cleanup(reg.Close)
		cfg := command.Config{}
		cfg.Breaker.ForceOpen = i == 1
		getUser := command.New("GetUser", func(context.Context, int) (string, error) { return "ann", nil },
			command.WithRegistry(reg), command.WithConfig(cfg))
		for range calls {
			getUser.Execute(context.Background(), 1)
		}
		mc.Advance(time.Second) // the rolling bucket closes
		srv := httptest.NewServer(metricsstream.Handler(metricsstream.WithRegistry(reg.Metrics()), metricsstream.WithShutdown(shutdown)))
		t.Cleanup(srv.Close)
		urls = append(urls, srv.URL+"/hystrix.stream")
	}
	agg, err := New(urls)
	require.NoError(t, err)
	mux := http.NewServeMux()
	mux.Handle("/turbine.stream", agg.Handler(metricsstream.WithShutdown(shutdown)))
	mux.Handle("/hystrix/", dashboard.Handler(dashboard.WithStreamURL("../turbine.stream"), dashboard.WithRequestsURL("")))
	page := httptest.NewServer(mux)
	t.Cleanup(page.Close)
	t.Cleanup(func() { agg.Close() })     // before the services' servers close
	t.Cleanup(func() { close(shutdown) }) // first: every stream ends

	tab := browsertest.NewTab(t, browser)
	browsertest.Do(t, tab, chromedp.Navigate(page.URL+"/hystrix/"))
	field := func(f string) string { return `[data-command="GetUser"] [data-field="` + f + `"]` }
	ctx, cancel := context.WithTimeout(tab, browsertest.StepTimeout)
	defer cancel()
	_, err = chromedp.Run(ctx, chromedp.Poll[chromedp.Void](
		`(() => { const e = document.querySelector('`+field("hosts")+`'); return e !== null && e.textContent.trim() === "2"; })()`))
	require.NoError(t, err, "the card of both hosts")
	text := func(f string) string {
		return browsertest.Eval[string](t, tab, `document.querySelector('`+field(f)+`').textContent.trim()`)
	}
	assert.Equal(t, "3", text("success"))
	assert.Equal(t, "4", text("shortCircuited"))
	assert.Equal(t, "Open 1 Closed 1", text("circuit"), "open on one host, closed on the other")
	assert.Equal(t, "1,000ms", text("currentTimeout"), "one host's setting, not the sum")
}
