package dashboard

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/internal/browsertest"
	"github.com/rxhystrix/rxhystrix/internal/ssetest"
)

// browserTimeout bounds each browser step, so that a page that never shows
// what a test waits for fails the test instead of hanging it. It is a
// deadline for failure, not a wait: every step returns as soon as the page
// is ready.
const browserTimeout = browsertest.StepTimeout

// field selects the element of one field of one card.
func field(kind, name, f string) string {
	quoted := strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(name)
	return `[data-` + kind + `="` + quoted + `"] [data-field="` + f + `"]`
}

// text reads the text of the first element that sel matches.
func text(t *testing.T, tab context.Context, sel string) string {
	t.Helper()
	return browsertest.Eval[string](t, tab, `document.querySelector(`+jsString(sel)+`).textContent.trim()`)
}

// waitText waits until the element that sel matches reads want. It polls in
// the page on every animation frame, so it returns as soon as the page has
// drawn the value.
func waitText(t *testing.T, tab context.Context, sel, want string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(tab, browserTimeout)
	defer cancel()
	pred := `(() => { const e = document.querySelector(` + jsString(sel) + `); return e !== null && e.textContent.trim() === ` + jsString(want) + `; })()`
	_, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](pred))
	if err != nil {
		got := browsertest.Eval[string](t, tab, `(() => { const e = document.querySelector(`+jsString(sel)+`); return e === null ? "<no element>" : e.textContent.trim(); })()`)
		require.NoError(t, err, "%s: got %q; want %q", sel, got, want)
	}
}

func jsString(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s) + `"`
}

// names lists the data-<kind> names of the cards in a container, in page order.
func names(t *testing.T, tab context.Context, container, kind string) []string {
	t.Helper()
	return browsertest.Eval[[]string](t, tab, `Array.from(document.querySelectorAll("#`+container+` [data-`+kind+`]"), e => e.getAttribute("data-`+kind+`"))`)
}

func attr(t *testing.T, tab context.Context, sel, name string) string {
	t.Helper()
	return browsertest.Eval[string](t, tab, `document.querySelector(`+jsString(sel)+`).getAttribute(`+jsString(name)+`) || ""`)
}

// watchConsole collects what the page reports as wrong from now on:
// uncaught exceptions, console warnings and errors, and the browser's own
// warnings and errors (a resource that failed, a Content-Security-Policy
// violation).
func watchConsole(t *testing.T, tab context.Context) func() []string {
	t.Helper()
	var mu sync.Mutex
	var problems []string
	require.NoError(t, chromedp.Listen(tab, func(ev any) {
		// This runs in the tab's event loop: record and return.
		var p string
		switch ev := ev.(type) {
		case *runtime.EventExceptionThrown:
			p = "exception: " + ev.ExceptionDetails.Text
			if ev.ExceptionDetails.Exception != nil {
				p += " " + ev.ExceptionDetails.Exception.Description
			}
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.ConsoleAPICalledTypeWarning || ev.Type == runtime.ConsoleAPICalledTypeError {
				p = "console." + string(ev.Type)
			}
		case *cdplog.EventEntryAdded:
			if ev.Entry.Level == cdplog.EntryLevelWarning || ev.Entry.Level == cdplog.EntryLevelError {
				p = string(ev.Entry.Source) + ": " + ev.Entry.Text
			}
		}
		if p != "" {
			mu.Lock()
			problems = append(problems, p)
			mu.Unlock()
		}
	}))
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(problems)
	}
}

// TestBrowser drives the dashboard in a real, headless chromium.
func TestBrowser(t *testing.T) {
	browser := browsertest.Start(t)

	t.Run("draws a Hystrix stream and follows it", func(t *testing.T) {
		stream, reqs := ssetest.NewStream(), ssetest.NewStream()
		srv := servePage(t, stream, map[string]http.Handler{"/hystrix/requests.stream": reqs})
		tab := browsertest.NewTab(t, browser)
		problems := watchConsole(t, tab)

		browsertest.Do(t, tab, chromedp.Navigate(srv.URL+"/hystrix/"))
		sendCtx, cancel := context.WithTimeout(tab, browserTimeout)
		defer cancel()
		require.NoError(t, stream.Send(sendCtx, scenarioHistory()...), "the page never connected to its stream")

		before := getUser(frameBeforeStep)
		waitText(t, tab, field("command", "GetUser", "success"), commas(before.success))

		assert.ElementsMatch(t,
			[]string{"GetUser", "PaymentGateway", "LegacyInventory", "GetRecommendations", "ReserveStock", "SearchProducts", "AuditLog", "RetiredCommand"},
			names(t, tab, "commands", "command"))
		assert.ElementsMatch(t,
			[]string{"UserService", "PaymentService", "InventoryService", "SearchService"},
			names(t, tab, "pools", "pool"))
		assert.Equal(t, []string{"UserBatch"}, names(t, tab, "collapsers", "collapser"))

		// Circuit states, as the Hystrix dashboard words them.
		assert.Equal(t, "Closed", text(t, tab, field("command", "GetUser", "circuit")))
		assert.Equal(t, "Open \u00b7 window 40s", text(t, tab, field("command", "PaymentGateway", "circuit")),
			"failed trials lengthened its sleep window")
		assert.Equal(t, "open", attr(t, tab, `[data-command="PaymentGateway"]`, "data-circuit"))
		assert.Equal(t, "Forced Open", text(t, tab, field("command", "LegacyInventory", "circuit")))
		assert.Equal(t, "Closed \u00b7 refusing 12%", text(t, tab, field("command", "GetRecommendations", "circuit")),
			"its breaker throttles")
		assert.Equal(t, "closed", attr(t, tab, `[data-command="GetRecommendations"]`, "data-circuit"))
		assert.Equal(t, "Half Open", text(t, tab, field("command", "ReserveStock", "circuit")), "rxhystrix's stream tells a trial out")
		assert.Equal(t, "half-open", attr(t, tab, `[data-command="ReserveStock"]`, "data-circuit"))
		assert.Equal(t, "Open 1 Closed 2", text(t, tab, field("command", "SearchProducts", "circuit")))
		assert.Equal(t, "[ Forced Closed ]", text(t, tab, field("command", "AuditLog", "forcedClosed")))

		// Counts in their places, error percentage and health colour.
		pay := paymentGateway(frameBeforeStep)
		assert.Equal(t, commas(pay.shortCircuited), text(t, tab, field("command", "PaymentGateway", "shortCircuited")))
		assert.Equal(t, commas(pay.failures), text(t, tab, field("command", "PaymentGateway", "failure")))
		assert.Equal(t, commas(pay.timeouts), text(t, tab, field("command", "PaymentGateway", "timeout")))
		assert.Equal(t, commas(pay.poolRejected), text(t, tab, field("command", "PaymentGateway", "rejected")))
		assert.Equal(t, fmt.Sprintf("%d.0 %%", pay.errors()*100/pay.requests()), text(t, tab, field("command", "PaymentGateway", "errorPercentage")))
		assert.Equal(t, "red", attr(t, tab, `[data-command="PaymentGateway"]`, "data-health"))
		assert.Equal(t, "green", attr(t, tab, `[data-command="GetUser"]`, "data-health"))
		assert.Equal(t, "orange", attr(t, tab, `[data-command="SearchProducts"]`, "data-health"))
		rec := getRecommendations(frameBeforeStep)
		assert.Equal(t, commas(rec.semaphoreRejected), text(t, tab, field("command", "GetRecommendations", "rejected")),
			"semaphore isolation shows semaphore rejections")

		// Rates and latency: 300 requests in a 10 s window is 30/s.
		assert.Equal(t, "30.0", text(t, tab, field("command", "GetUser", "hostRate")))
		assert.Equal(t, "30.0", text(t, tab, field("command", "GetUser", "clusterRate")))
		assert.Equal(t, "120ms", text(t, tab, field("command", "GetUser", "latency90")))
		assert.Equal(t, "200ms", text(t, tab, field("command", "GetUser", "latency99")))
		assert.Equal(t, "40ms", text(t, tab, field("command", "GetUser", "latencyMedian")))
		assert.Equal(t, "48ms", text(t, tab, field("command", "GetUser", "latencyMean")))
		assert.Equal(t, "Single", text(t, tab, field("command", "GetUser", "hosts")))

		// Turbine: values summed over 3 hosts are shown per host.
		assert.Equal(t, "3", text(t, tab, field("command", "SearchProducts", "hosts")))
		assert.Equal(t, "240ms", text(t, tab, field("command", "SearchProducts", "latency99")))
		assert.Equal(t, "500ms", text(t, tab, field("command", "SearchProducts", "currentTimeout")), "a setting summed over 3 hosts")

		// rxhystrix's own counts, on a line only its stream fills.
		assert.Equal(t, "Retried 1,200 \u00b7 Rate limited 3", text(t, tab, field("command", "GetUser", "resilience")))
		assert.Equal(t, "", text(t, tab, field("command", "SearchProducts", "resilience")))
		// Faults injected, on the same line, first: nobody takes them
		// for the downstream's.
		assert.Equal(t, fmt.Sprintf("Injecting faults until 12:30 UTC: %s delayed, 12 failed", commas(reserveStock(frameBeforeStep).faultDelays)),
			text(t, tab, field("command", "ReserveStock", "resilience")))
		// A command's partitions of its permits, on a line of their own.
		assert.Equal(t, fmt.Sprintf("live 6/7 \u00b7 batch 4/3 (%s refused)", commas(1200+rec.semaphoreRejected)),
			text(t, tab, field("command", "GetRecommendations", "partitions")))
		assert.Equal(t, "", text(t, tab, field("command", "GetUser", "partitions")))
		// A command's backlog, on the line a command with partitions
		// has for them (a key has one or the other).
		assert.Equal(t, fmt.Sprintf("Backlog %d/32 waiting", reserveStock(frameBeforeStep).backlogWaiting),
			text(t, tab, field("command", "ReserveStock", "backlog")))
		assert.Equal(t, "", text(t, tab, field("command", "GetRecommendations", "backlog")))
		assert.Equal(t, "", text(t, tab, field("command", "ReserveStock", "partitions")))
		for _, name := range []string{"GetUser", "SearchProducts", "GetRecommendations", "ReserveStock"} {
			assert.True(t, browsertest.Eval[bool](t, tab, `(() => {
				const card = document.querySelector('[data-command="`+name+`"]');
				return card.querySelector('[data-field="advice"]').getBoundingClientRect().bottom <= card.getBoundingClientRect().bottom;
			})()`), "%s: the advice fits in the card, with or without the lines of rxhystrix's counts, partitions and backlog", name)
		}

		// An older Hystrix without some fields: drawn, the gaps marked.
		assert.Equal(t, "–", text(t, tab, field("command", "AuditLog", "badRequest")))
		assert.Equal(t, commas(auditLogSuccess(frameBeforeStep)), text(t, tab, field("command", "AuditLog", "success")))

		// The seed's sizing rule: 30/s × 0.2 s + 4 = 10 threads; 200 ms × 1.5 = 300 ms.
		assert.Equal(t, "10", text(t, tab, field("command", "GetUser", "advicePoolSize")))
		assert.Equal(t, "300ms", text(t, tab, field("command", "GetUser", "adviceTimeout")))
		assert.Equal(t, "1,000ms", text(t, tab, field("command", "GetUser", "currentTimeout")))
		assert.Equal(t, "semaphore", text(t, tab, field("command", "GetRecommendations", "adviceIsolation")))
		assert.Equal(t, "–", text(t, tab, field("command", "LegacyInventory", "advicePoolSize")),
			"no advice without traffic")
		// Beside it, the pool's adaptive limit now, and its algorithm.
		assert.Equal(t, "12", text(t, tab, field("command", "GetUser", "currentPoolSize")))
		assert.Equal(t, "vegas", text(t, tab, field("command", "GetUser", "currentLimitKind")))
		assert.Equal(t, "", text(t, tab, field("command", "PaymentGateway", "currentLimitKind")), "a fixed pool")
		assert.Equal(t, "vegas", text(t, tab, field("pool", "UserService", "adaptiveLimit")))
		assert.Equal(t, "12", text(t, tab, field("pool", "UserService", "maxPoolSize")))
		assert.Equal(t, "", text(t, tab, field("pool", "PaymentService", "adaptiveLimit")))

		// 23% of PaymentGateway's calls time out at its 1s timeout: its
		// p99.5 is the timeout, and the advice says it cannot tell one
		// instead of suggesting 1.5 times the timeout.
		assert.Equal(t, "unknown", text(t, tab, field("command", "PaymentGateway", "adviceTimeout")))
		assert.Equal(t, "cut-off", attr(t, tab, field("command", "PaymentGateway", "adviceTimeout"), "data-advice"))
		payAdvice := attr(t, tab, field("command", "PaymentGateway", "advice"), "title")
		assert.Contains(t, payAdvice, fmt.Sprintf("%.1f%% of calls time out at 1,000ms", float64(pay.timeouts)*100/float64(pay.requests())))
		assert.Contains(t, payAdvice, "up to p75 (800ms) they are still the downstream's")
		assert.Equal(t, "advice", attr(t, tab, field("command", "GetUser", "adviceTimeout"), "data-advice"))

		// The collapser's mean batch size to a decimal, beside its median,
		// and its default batch limit as what it is.
		batches, requests := 40+frameBeforeStep%4, 320+frameBeforeStep
		assert.Equal(t, fmt.Sprintf("%.1f", float64(requests)/float64(batches)), text(t, tab, field("collapser", "UserBatch", "batchSizeMean")))
		assert.Equal(t, "unlimited", text(t, tab, field("collapser", "UserBatch", "maxRequestsInBatch")))

		// The thread pool table.
		assert.Equal(t, "10", text(t, tab, field("pool", "PaymentService", "active")))
		assert.Equal(t, "4", text(t, tab, field("pool", "PaymentService", "queued")))
		assert.Equal(t, "10", text(t, tab, field("pool", "PaymentService", "poolSize")))
		assert.Equal(t, "10", text(t, tab, field("pool", "PaymentService", "maxActive")))
		assert.Equal(t, commas(pay.requests()-pay.poolRejected), text(t, tab, field("pool", "PaymentService", "executions")))
		assert.Equal(t, "5", text(t, tab, field("pool", "PaymentService", "queueSize")))
		assert.Equal(t, "5", text(t, tab, field("pool", "PaymentService", "rejected")))
		assert.Equal(t, "18.0", text(t, tab, field("pool", "SearchService", "hostRate")))

		// The status counts the events it could not use, and goes on.
		assert.Contains(t, text(t, tab, "#status"), "2 ignored")
		assert.Equal(t, "open", attr(t, tab, "#status", "data-state"))
		assert.True(t, browsertest.Eval[bool](t, tab, `document.getElementById("error").hidden`), "no error shown")

		// The next frame changes the counts; the page follows.
		require.NoError(t, stream.Send(sendCtx, scenarioFrame(frameAfterStep)...))
		after := getUser(frameAfterStep)
		require.NotEqual(t, before.success, after.success, "the scenario must change the count")
		waitText(t, tab, field("command", "GetUser", "success"), commas(after.success))
		assert.Equal(t, commas(paymentGateway(frameAfterStep).shortCircuited),
			text(t, tab, field("command", "PaymentGateway", "shortCircuited")))
		assert.Equal(t, "5", text(t, tab, field("pool", "PaymentService", "queued")))
		waitText(t, tab, field("command", "GetUser", "currentPoolSize"), "15") // the limit moved, the advice did not
		assert.Equal(t, "10", text(t, tab, field("command", "GetUser", "advicePoolSize")))
		assert.NotContains(t, names(t, tab, "commands", "command"), "RetiredCommand", "deleteData removes a card")
		assert.NotEmpty(t, attr(t, tab, field("command", "GetUser", "sparkline"), "d"), "the sparkline is drawn")

		// Sorting: by name, then by error percentage, highest first.
		browsertest.Do(t, tab, chromedp.Click(chromedp.CSS(`[data-sort-for="commands"] [data-sort="name"]`)))
		got := names(t, tab, "commands", "command")
		assert.True(t, slices.IsSorted(lower(got)), "alphabetical: %v", got)
		browsertest.Do(t, tab, chromedp.Click(chromedp.CSS(`[data-sort-for="commands"] [data-sort="error"]`)))
		got = names(t, tab, "commands", "command")
		require.NotEmpty(t, got)
		assert.Equal(t, "PaymentGateway", got[0], "highest error first: %v", got)
		assert.Equal(t, "desc", attr(t, tab, `[data-sort-for="commands"] [data-sort="error"]`, "data-direction"))

		// A few requests, for the screenshot.
		require.NoError(t, reqs.Send(sendCtx, [][]byte{
			requestEvent(`[{"name":"GetUser","events":["SUCCESS"],"latencies":[38],"cached":1},{"name":"GetRecommendations","events":["SEMAPHORE_REJECTED","FALLBACK_SUCCESS"],"latencies":[-1]}]`),
			requestEvent(`[{"name":"GetUser","events":["SUCCESS"],"latencies":[41]},{"name":"PaymentGateway","events":["SHORT_CIRCUITED","FALLBACK_SUCCESS"],"latencies":[-1]}]`),
		}...))
		waitCount(t, tab, "#requests [data-request]", 2)

		// Back to Hystrix's default order for the screenshot.
		browsertest.Do(t, tab, chromedp.Click(chromedp.CSS(`[data-sort-for="commands"] [data-sort="errorThenVolume"]`)))
		writeScreenshot(t, tab)

		assert.Empty(t, problems(), "the page reported problems")
	})

	t.Run("lists the requests of the requests stream, newest first", func(t *testing.T) {
		stream, requests := ssetest.NewStream(), ssetest.NewStream()
		srv := servePage(t, stream, map[string]http.Handler{"/hystrix/requests.stream": requests})
		tab := browsertest.NewTab(t, browser)
		problems := watchConsole(t, tab)

		browsertest.Do(t, tab, chromedp.Navigate(srv.URL+"/hystrix/"))
		assert.True(t, browsertest.Eval[bool](t, tab, `document.getElementById("requests-section").hidden`),
			"hidden until a request comes")
		ctx, cancel := context.WithTimeout(tab, browserTimeout)
		defer cancel()
		const markup = `<img src=x onerror="document.title='owned'">`
		require.NoError(t, requests.Send(ctx, [][]byte{
			requestEvent(`[{"name":"GetUser","events":["SUCCESS"],"latencies":[12,14],"cached":2},` +
				`{"name":"PaymentGateway","events":["TIMEOUT","FALLBACK_SUCCESS"],"latencies":[1000]},` +
				`{"name":"GetUsers","events":["SUCCESS"],"latencies":[9],"collapsed":{"name":"UserBatch","count":4}},` +
				`{"name":"GetOrders","events":[{"name":"EMIT","count":3},"SUCCESS"],"latencies":[40]},` +
				`{"name":"Inventory","events":["SHORT_CIRCUITED","FALLBACK_FAILURE"],"latencies":[-1]},` +
				`{"name":` + jsString(markup) + `,"events":["BAD_REQUEST"],"latencies":[0]}]`),
			[]byte("data: not json\n\n"),
		}...), "the page never connected to its requests stream")
		waitCount(t, tab, "#requests [data-request]", 1)
		assert.False(t, browsertest.Eval[bool](t, tab, `document.getElementById("requests-section").hidden`))

		type execution struct{ Command, Outcome, Text string }
		executions := func(request int) []execution {
			return browsertest.Eval[[]execution](t, tab, fmt.Sprintf(`Array.from(
				document.querySelectorAll("#requests [data-request]")[%d].querySelectorAll("[data-execution]"),
				e => ({Command: e.getAttribute("data-command"), Outcome: e.getAttribute("data-outcome"), Text: e.textContent}))`, request))
		}
		assert.Equal(t, []execution{
			{"GetUser", "success", "GetUser[SUCCESS][12ms, 14ms] +2 from cache"},
			{"PaymentGateway", "timeout", "PaymentGateway[TIMEOUT, FALLBACK_SUCCESS][1,000ms]"},
			{"GetUsers", "success", "GetUsers[SUCCESS][9ms] (batch of 4 from UserBatch)"},
			{"GetOrders", "success", "GetOrders[EMITx3, SUCCESS][40ms]"},
			{"Inventory", "shortCircuited", "Inventory[SHORT_CIRCUITED, FALLBACK_FAILURE][–]"},
			{markup, "badRequest", markup + "[BAD_REQUEST][0ms]"},
		}, executions(0))
		assert.Equal(t, 0, browsertest.Eval[int](t, tab, `document.querySelectorAll("#requests img").length`), "a name is text")
		assert.NotEqual(t, "owned", browsertest.Eval[string](t, tab, `document.title`))

		// The latest 20 are kept, newest first.
		var more [][]byte
		for i := range 25 {
			more = append(more, requestEvent(fmt.Sprintf(`[{"name":"R%d","events":["SUCCESS"],"latencies":[%d]}]`, i, i)))
		}
		require.NoError(t, requests.Send(ctx, more...))
		waitText(t, tab, "#requests [data-request] [data-execution]", "R24[SUCCESS][24ms]")
		assert.Equal(t, 20, browsertest.Eval[int](t, tab, `document.querySelectorAll("#requests [data-request]").length`))
		assert.Equal(t, "R5[SUCCESS][5ms]", browsertest.Eval[string](t, tab,
			`Array.from(document.querySelectorAll("#requests [data-request]")).pop().querySelector("[data-execution]").textContent`))
		status := text(t, tab, "#requests-status")
		assert.Contains(t, status, "26 requests from "+srv.URL+"/hystrix/requests.stream")
		assert.Contains(t, status, "1 ignored")
		assert.True(t, browsertest.Eval[bool](t, tab, `document.getElementById("error").hidden`), "no error shown")
		assert.Empty(t, problems(), "the page reported problems")
	})

	t.Run("reads the requests stream the address names, and none beside another service's stream", func(t *testing.T) {
		stream, other, requests := ssetest.NewStream(), ssetest.NewStream(), ssetest.NewStream()
		var requestsAsked atomic.Int32
		counted := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			requestsAsked.Add(1)
			requests.ServeHTTP(w, r)
		})
		srv := servePage(t, stream, map[string]http.Handler{
			"/other/stream": other, "/other/requests.stream": counted, "/hystrix/requests.stream": counted,
		})
		t.Cleanup(func() { requests.Close() }) // before the server closes
		ctx, cancel := context.WithTimeout(context.Background(), browserTimeout)
		defer cancel()

		tab := browsertest.NewTab(t, browser)
		browsertest.Do(t, tab, chromedp.Navigate(srv.URL+"/hystrix/?requests="+url.QueryEscape("/other/requests.stream")))
		require.NoError(t, requests.Send(ctx, requestEvent(`[{"name":"GetUser","events":["SUCCESS"],"latencies":[3]}]`)))
		waitText(t, tab, "#requests [data-execution]", "GetUser[SUCCESS][3ms]")
		require.Equal(t, int32(1), requestsAsked.Load())

		// The stream of another service, named in the address: the page
		// draws it and asks for no requests stream.
		tab = browsertest.NewTab(t, browser)
		browsertest.Do(t, tab, chromedp.Navigate(srv.URL+"/hystrix/?stream="+url.QueryEscape(srv.URL+"/other/stream")))
		require.NoError(t, other.Send(ctx, scenarioFrame(0)...))
		waitText(t, tab, field("command", "GetUser", "success"), commas(getUser(0).success))
		assert.Equal(t, int32(1), requestsAsked.Load(), "no requests stream asked for")
		assert.True(t, browsertest.Eval[bool](t, tab, `document.getElementById("requests-section").hidden`))
	})

	t.Run("without a requests stream, the panel stays hidden and quiet", func(t *testing.T) {
		srv := servePage(t, ssetest.NewStream(), nil) // 404 at /hystrix/requests.stream
		tab := browsertest.NewTab(t, browser)

		browsertest.Do(t, tab, chromedp.Navigate(srv.URL+"/hystrix/"))
		waitText(t, tab, "#requests-status", "The requests stream "+srv.URL+"/hystrix/requests.stream is not available.")
		assert.True(t, browsertest.Eval[bool](t, tab, `document.getElementById("requests-section").hidden`))
		assert.True(t, browsertest.Eval[bool](t, tab, `document.getElementById("error").hidden`), "no error shown")
	})

	t.Run("says when the stream cannot be reached", func(t *testing.T) {
		mux := http.NewServeMux()
		mux.Handle("/hystrix/", Handler()) // no stream at /hystrix/stream: 404
		srv := httptest.NewServer(mux)
		t.Cleanup(srv.Close)

		gone := httptest.NewServer(http.NotFoundHandler())
		gone.Close() // nothing listens there any more

		// A stream on another origin that does not allow the page's, as a
		// Java Hystrix service serves it.
		foreign := ssetest.NewStream()
		foreignSrv := httptest.NewServer(foreign)
		t.Cleanup(foreignSrv.Close)
		t.Cleanup(func() { foreign.Close() })

		cases := []struct {
			name, page string
			want       []string
		}{
			{"404 at the default stream", srv.URL + "/hystrix/",
				[]string{srv.URL + "/hystrix/stream", "did not answer with an event stream"}},
			{"refused connection", srv.URL + "/hystrix/?stream=" + url.QueryEscape(gone.URL+"/hystrix.stream"),
				[]string{gone.URL + "/hystrix.stream"}},
			{"another origin without CORS", srv.URL + "/hystrix/?stream=" + url.QueryEscape(foreignSrv.URL+"/hystrix.stream"),
				[]string{foreignSrv.URL + "/hystrix.stream", "Access-Control-Allow-Origin"}},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				tab := browsertest.NewTab(t, browser)
				browsertest.Do(t, tab, chromedp.Navigate(tc.page), chromedp.WaitVisible(chromedp.ID("error")))
				msg := text(t, tab, "#error")
				assert.Contains(t, msg, "Cannot reach the stream")
				for _, w := range tc.want {
					assert.Contains(t, msg, w)
				}
				assert.Equal(t, "error", attr(t, tab, "#status", "data-state"))
			})
		}
	})

	t.Run("reads the stream named in the page address, on another origin that allows it", func(t *testing.T) {
		srv := httptest.NewServer(Handler())
		t.Cleanup(srv.Close)
		stream := ssetest.NewStream()
		streamSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Access-Control-Allow-Origin", srv.URL)
			stream.ServeHTTP(w, r)
		}))
		t.Cleanup(streamSrv.Close)
		t.Cleanup(func() { stream.Close() })
		tab := browsertest.NewTab(t, browser)

		page := srv.URL + "/?stream=" + url.QueryEscape(streamSrv.URL+"/hystrix.stream") + "&title=Checkout"
		browsertest.Do(t, tab, chromedp.Navigate(page))
		ctx, cancel := context.WithTimeout(tab, browserTimeout)
		defer cancel()
		// A name is text, never markup.
		const markup = `<img src=x onerror="document.title='owned'">"&amp;`
		odd := hystrixCommand(commandCounts{name: markup, group: "G", pool: "G", isolation: "THREAD",
			open: false, success: 1, windowMillis: 10000}, scenarioStart)
		require.NoError(t, stream.Send(ctx, append(scenarioFrame(0), dataEvent(odd))...), "the page never connected to ?stream=")
		waitText(t, tab, field("command", "GetUser", "success"), commas(getUser(0).success))
		waitText(t, tab, field("command", markup, "success"), "1")
		assert.Equal(t, markup, browsertest.Eval[string](t, tab,
			`Array.from(document.querySelectorAll("[data-command]")).find(e => e.getAttribute("data-command").startsWith("<img")).querySelector('[data-field="name"]').title`))
		assert.Equal(t, 0, browsertest.Eval[int](t, tab, `document.querySelectorAll("#commands img").length`))
		assert.NotEqual(t, "owned", browsertest.Eval[string](t, tab, `document.title`))
		assert.Equal(t, "Hystrix Stream: Checkout", text(t, tab, "#title"))
		assert.Equal(t, streamSrv.URL+"/hystrix.stream",
			browsertest.Eval[string](t, tab, `document.getElementById("stream-url").value`), "the form shows the stream")
	})

	// Through Turbine (package turbine), a setting the instances disagree
	// on becomes an object that counts the instances of each value, as
	// {"false":2,"true":1}. A command that injects faults on one host of
	// three must still say so, or its failures pass for the downstream's.
	t.Run("says faults are injected on some of Turbine's hosts", func(t *testing.T) {
		stream := ssetest.NewStream()
		srv := servePage(t, stream, nil)
		tab := browsertest.NewTab(t, browser)
		browsertest.Do(t, tab, chromedp.Navigate(srv.URL+"/hystrix/"))

		const hosts = 3
		c := hystrixCommand(commandCounts{
			name: "Checkout", group: "Shop", pool: "Shop", isolation: "THREAD", open: false,
			success: 90, failures: 6, windowMillis: 10000 * hosts,
			faultInjection: true, faultDelays: 40, faultErrors: 6,
		}, scenarioStart).
			with("faultInjectionEnabled", map[string]int{"false": 2, "true": 1}).
			with("reportingHosts", hosts)
		ctx, cancel := context.WithTimeout(tab, browserTimeout)
		defer cancel()
		assert.NoError(t, stream.Send(ctx, dataEvent(c)))
		waitText(t, tab, field("command", "Checkout", "success"), "90")
		assert.Equal(t, "Injecting faults on 1 of 3 hosts: 40 delayed, 6 failed",
			text(t, tab, field("command", "Checkout", "resilience")))
	})

	// A default stream URL that Go's url.Parse accepts but the browser's
	// URL parser does not (a port past 65535) is named in the error, not
	// shown as "null".
	t.Run("names a default stream address the browser cannot parse", func(t *testing.T) {
		srv := httptest.NewServer(Handler(WithStreamURL("http://127.0.0.1:99999/hystrix.stream")))
		t.Cleanup(srv.Close)
		tab := browsertest.NewTab(t, browser)
		browsertest.Do(t, tab, chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.ID("error")))
		assert.Equal(t, `The stream address "http://127.0.0.1:99999/hystrix.stream" is not a URL.`, text(t, tab, "#error"))
	})

	// Netflix's Turbine sums currentTime over its hosts, as every number:
	// the sparkline still spans two minutes, and an error percentage made
	// of the cluster's counts is not divided by the hosts again.
	t.Run("a Java Turbine stream keeps two minutes of sparkline", func(t *testing.T) {
		stream := ssetest.NewStream()
		srv := servePage(t, stream, nil)
		tab := browsertest.NewTab(t, browser)
		browsertest.Do(t, tab, chromedp.Navigate(srv.URL+"/hystrix/"))

		const hosts = 3
		var events [][]byte
		for k := 0; k <= historyFrames; k++ {
			now := scenarioStart + int64(k)*scenarioStepMs
			c := hystrixCommand(commandCounts{
				name: "Checkout", group: "Shop", pool: "Shop", isolation: "THREAD", open: false,
				success: 30*hosts + int64(k%5), windowMillis: 10000 * hosts, timeoutMillis: 1000 * hosts,
			}, hosts*now). // Netflix's Turbine sums currentTime too
					with("reportingHosts", hosts)
			events = append(events, dataEvent(c))
		}
		// A stream of an older Hystrix without errorPercentage, through
		// Turbine: 30 errors of 300 requests in the cluster is 10%.
		old := hystrixCommand(commandCounts{
			name: "Old", group: "G", pool: "G", isolation: "THREAD", open: false,
			success: 270, failures: 30, windowMillis: 10000 * hosts,
		}, scenarioStart).without("errorPercentage").with("reportingHosts", hosts)
		events = append(events, dataEvent(old))

		ctx, cancel := context.WithTimeout(tab, browserTimeout)
		defer cancel()
		require.NoError(t, stream.Send(ctx, events...))
		waitText(t, tab, field("command", "Old", "failure"), "30")

		d := attr(t, tab, field("command", "Checkout", "sparkline"), "d")
		assert.Equal(t, historyFrames+1, strings.Count(d, "M")+strings.Count(d, "L"),
			"all frames of the last two minutes are on the sparkline: %s", d)
		assert.Equal(t, "10.0 %", text(t, tab, field("command", "Old", "errorPercentage")))
	})

	// The form asks for the delay beside the stream, as the Hystrix
	// dashboard does, and keeps it when another stream is chosen.
	t.Run("the form keeps the delay when another stream is chosen", func(t *testing.T) {
		stream := ssetest.NewStream()
		srv := servePage(t, stream, nil)
		tab := browsertest.NewTab(t, browser)
		browsertest.Do(t, tab, chromedp.Navigate(srv.URL+"/hystrix/?delay=2000"))

		other := srv.URL + "/hystrix/stream?x=1"
		browsertest.Do(t, tab,
			chromedp.SetValue(chromedp.ID("stream-url"), other),
			chromedp.Click(chromedp.CSS(`#stream-form button[type="submit"]`)))
		ctx, cancel := context.WithTimeout(tab, browserTimeout)
		defer cancel()
		var search string
		for ctx.Err() == nil && !strings.Contains(search, "stream=") {
			// The page navigates under the poll; ask again until the
			// new page answers.
			search, _ = chromedp.Run(ctx, chromedp.Poll[string](`location.search.includes("stream=") && location.search`))
		}
		require.Contains(t, search, "stream=", "the form was not submitted")
		q, err := url.ParseQuery(strings.TrimPrefix(search, "?"))
		require.NoError(t, err)
		assert.Equal(t, other, q.Get("stream"))
		assert.Equal(t, "2000", q.Get("delay"), "the delay the page was asked for")
	})
}

// servePage serves, on a test server until the test ends, the dashboard
// at /hystrix/ reading stream, and each of more at its pattern. The fake
// streams among them end before the server closes, so that it can.
func servePage(t *testing.T, stream *ssetest.Stream, more map[string]http.Handler) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle("/hystrix/", Handler(WithStream(stream)))
	for pattern, h := range more {
		mux.Handle(pattern, h)
	}
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	t.Cleanup(func() { // runs first
		stream.Close()
		for _, h := range more {
			if s, ok := h.(*ssetest.Stream); ok {
				s.Close()
			}
		}
	})
	return srv
}

// waitCount waits until sel matches n elements, polling on every
// animation frame.
func waitCount(t *testing.T, tab context.Context, sel string, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(tab, browserTimeout)
	defer cancel()
	pred := fmt.Sprintf(`document.querySelectorAll(%s).length === %d`, jsString(sel), n)
	if _, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](pred)); err != nil {
		got := browsertest.Eval[int](t, tab, `document.querySelectorAll(`+jsString(sel)+`).length`)
		require.NoError(t, err, "%s: %d elements; want %d", sel, got, n)
	}
}

func lower(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strings.ToLower(s)
	}
	return out
}

// writeScreenshot saves a PNG of the whole page in the test's temporary
// directory and, when DASHBOARD_SCREENSHOT names a file, there too.
func writeScreenshot(t *testing.T, tab context.Context) {
	t.Helper()
	png := browsertest.Screenshot(t, tab, browserTimeout)
	require.True(t, len(png) > 8 && string(png[1:4]) == "PNG", "the screenshot is a PNG")
	require.NoError(t, os.WriteFile(filepath.Join(t.TempDir(), "dashboard.png"), png, 0o644))
	browsertest.WriteScreenshot(t, png)
}
