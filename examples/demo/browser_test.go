package main

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/internal/browsertest"
)

// TestBrowserShowsLiveCommands opens the demo's dashboard in a headless
// chromium, reading the real stream of live commands: the page lists them,
// shows the forced-open circuit and the circuit that failures opened,
// follows the counts as they change, and lists the requests as they end.
//
// With DASHBOARD_SCREENSHOT=<file> it also saves a screenshot of the page
// there; with DASHBOARD_SCREENSHOT_AFTER=<duration> (over 10s) as well, it
// first lets the page draw that much history. That is how
// docs/dashboard.png is made:
//
//	DASHBOARD_SCREENSHOT=$PWD/docs/dashboard.png DASHBOARD_SCREENSHOT_AFTER=90s \
//		go test -run TestBrowser -timeout 5m ./examples/demo/
func TestBrowserShowsLiveCommands(t *testing.T) {
	browser := startBrowser(t)
	sc := scenario{paymentFailFrom: 2 * time.Second, paymentFailFor: time.Hour, paymentCycle: 2 * time.Hour}
	screenshot := browsertest.ScreenshotFile()
	var history time.Duration
	if screenshot != "" {
		d, err := time.ParseDuration(os.Getenv("DASHBOARD_SCREENSHOT_AFTER"))
		if err == nil && d > 10*time.Second {
			history = d
			sc.paymentFailFrom = d - 8*time.Second // open for a few seconds by then
		}
	}
	d := startDemo(t, sc)
	tab := browsertest.NewTab(t, browser)
	problems := watchConsole(t, tab)
	browsertest.Do(t, tab, chromedp.Navigate(d.base+"/hystrix/"))
	if history > 0 {
		// Only for the documentation's picture: let the sparklines draw
		// some history.
		time.Sleep(history)
	}

	waitFor(t, tab, fmt.Sprintf(`document.querySelectorAll("#commands [data-command]").length === %d`, len(demoCommands)))
	assert.ElementsMatch(t, demoCommands, browsertest.Eval[[]string](t, tab,
		`Array.from(document.querySelectorAll("#commands [data-command]"), e => e.getAttribute("data-command"))`))
	assert.Equal(t, "Forced Open", text(t, tab, field("command", "LegacyInventory", "circuit")))
	assert.Equal(t, "forced-open", browsertest.Eval[string](t, tab, `document.querySelector('[data-command="LegacyInventory"]').getAttribute("data-circuit")`))
	assert.Equal(t, "Closed", text(t, tab, field("command", "GetUser", "circuit")))
	waitFor(t, tab, `document.querySelector('[data-collapser="GetPrice"]') !== null`)

	// The counts follow the live commands.
	waitFor(t, tab, `(() => { const e = document.querySelector('`+field("command", "GetUser", "success")+`'); return e !== null && /^[1-9]/.test(e.textContent.trim()); })()`)
	before := text(t, tab, field("command", "GetUser", "success"))
	waitFor(t, tab, `document.querySelector('`+field("command", "GetUser", "success")+`').textContent.trim() !== "`+before+`"`)

	// The pool too small for its callers rejects, and failures open
	// PaymentGateway's circuit.
	waitFor(t, tab, `(() => { const e = document.querySelector('`+field("pool", "SearchService", "rejected")+`'); return e !== null && /^[1-9]/.test(e.textContent.trim()); })()`)
	waitFor(t, tab, `(() => { const e = document.querySelector('`+field("command", "PaymentGateway", "circuit")+`'); return e !== null && e.textContent.trim() === "Open"; })()`)
	assert.Equal(t, "open", browsertest.Eval[string](t, tab, `document.querySelector('[data-command="PaymentGateway"]').getAttribute("data-circuit")`))

	// Each call of the traffic is a request: the page lists them as they
	// end, with the commands they ran.
	waitFor(t, tab, `document.querySelectorAll("#requests [data-request] [data-execution]").length > 0`)
	ran := browsertest.Eval[[]string](t, tab,
		`Array.from(document.querySelectorAll("#requests [data-execution]"), e => e.getAttribute("data-command"))`)
	for _, c := range ran {
		assert.Contains(t, demoCommands, c, "a request ran a command of the demo")
	}

	if screenshot != "" {
		browsertest.WriteScreenshot(t, browsertest.Screenshot(t, tab, time.Minute))
	}
	assert.Empty(t, problems(), "the page reported problems")
}

// TestBrowserDrawsWithTheStreamOpenFor10s keeps the dashboard on the
// demo's live stream for 10 seconds: the connection never drops, events
// keep coming, the cards keep drawing, and a screenshot taken then, with
// the stream still open, is a whole page.
func TestBrowserDrawsWithTheStreamOpenFor10s(t *testing.T) {
	browser := startBrowser(t)
	d := startDemo(t, defaultScenario)
	tab := browsertest.NewTab(t, browser)
	problems := watchConsole(t, tab)
	browsertest.Do(t, tab, chromedp.Navigate(d.base+"/hystrix/"))
	waitFor(t, tab, `document.getElementById("status").getAttribute("data-state") === "open"`)

	// From now on the page counts every change of the connection's state.
	browsertest.Eval[bool](t, tab, `(() => {
		const status = document.getElementById("status");
		window.streamOpenedAt = performance.now();
		window.streamDrops = 0;
		new MutationObserver(() => {
			if (status.getAttribute("data-state") !== "open") window.streamDrops++;
		}).observe(status, {attributes: true, attributeFilter: ["data-state"]});
		return true;
	})()`)
	events := func() int {
		return browsertest.Eval[int](t, tab, `Number((document.getElementById("status").textContent.match(/(\d+) events/) || [0, 0])[1])`)
	}
	waitFor(t, tab, fmt.Sprintf(`document.querySelectorAll("#commands [data-command]").length === %d`, len(demoCommands)))
	first := events()
	waitFor(t, tab, `performance.now() - window.streamOpenedAt >= 10000`)
	atTen := events()
	assert.Greater(t, atTen, first, "events kept coming for 10s")
	assert.Zero(t, browsertest.Eval[int](t, tab, `window.streamDrops`), "the stream stayed open")
	assert.Greater(t, browsertest.Eval[float64](t, tab,
		`Number(document.querySelector('[data-command="GetUser"] [data-field="circle"]').getAttribute("r"))`), 5.0,
		"GetUser's bubble is drawn at its rate")

	shot := browsertest.Screenshot(t, tab, time.Minute)
	cfg, err := png.DecodeConfig(bytes.NewReader(shot))
	require.NoError(t, err)
	assert.Greater(t, cfg.Width, 0)
	assert.Greater(t, cfg.Height, 0)
	waitFor(t, tab, `Number((document.getElementById("status").textContent.match(/(\d+) events/) || [0, 0])[1]) > `+strconv.Itoa(atTen))
	assert.Zero(t, browsertest.Eval[int](t, tab, `window.streamDrops`), "the stream was live through the screenshot")
	assert.Equal(t, "open", browsertest.Eval[string](t, tab, `document.getElementById("status").getAttribute("data-state")`))
	assert.Empty(t, problems(), "the page reported problems")
}

// startBrowser starts a headless chromium, closed when the test ends; the
// test is skipped in -short mode and when there is no chromium.
func startBrowser(t *testing.T) context.Context {
	t.Helper()
	if testing.Short() {
		t.Skip("browser test skipped in -short mode")
	}
	return browsertest.Start(t)
}

// waitFor waits until the JavaScript predicate holds in the page; it polls
// on every animation frame, so it returns as soon as the page shows it.
func waitFor(t *testing.T, tab context.Context, predicate string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(tab, failAfter)
	defer cancel()
	_, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](predicate))
	require.NoError(t, err, "waiting for %s", predicate)
}

// field selects the element of one field of one card.
func field(kind, name, f string) string {
	return `[data-` + kind + `="` + name + `"] [data-field="` + f + `"]`
}

func text(t *testing.T, tab context.Context, sel string) string {
	t.Helper()
	return browsertest.Eval[string](t, tab, `document.querySelector('`+sel+`').textContent.trim()`)
}

// watchConsole collects the page's exceptions, console warnings and errors
// and the browser's own warnings and errors from now on.
func watchConsole(t *testing.T, tab context.Context) func() []string {
	t.Helper()
	var mu sync.Mutex
	var problems []string
	require.NoError(t, chromedp.Listen(tab, func(ev any) {
		var p string
		switch ev := ev.(type) {
		case *runtime.EventExceptionThrown:
			p = "exception: " + ev.ExceptionDetails.Text
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.ConsoleAPICalledTypeWarning || ev.Type == runtime.ConsoleAPICalledTypeError {
				p = "console." + string(ev.Type)
			}
		case *cdplog.EventEntryAdded:
			if ev.Entry.Level == cdplog.EntryLevelWarning || ev.Entry.Level == cdplog.EntryLevelError {
				p = string(ev.Entry.Source) + ": " + ev.Entry.Text
			}
		}
		if p != "" && !strings.Contains(p, "favicon") {
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
