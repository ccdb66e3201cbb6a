// Package dashboard serves a web page that draws a Hystrix metrics stream as
// the Hystrix dashboard does: one card per command with its health circle,
// its two-minute sparkline, its counts in Hystrix's colours, its circuit state
// and latency percentiles; one card per thread pool and per collapser.
//
// The page is three embedded files (HTML, JavaScript, CSS) with no library
// and nothing fetched from elsewhere, so it works offline and behind a
// firewall. It reads the stream in the browser with EventSource, so it shows
// any stream in Hystrix's format: rxhystrix's own, a Java Hystrix service's
// hystrix.stream, or a Turbine cluster.
//
// # Mounting
//
// [Handler] answers by the last element of the request path, so it can be
// mounted anywhere, with or without [net/http.StripPrefix]. Mount it on a
// pattern that ends in a slash, and the stream next to it:
//
//	mux.Handle("/hystrix/", dashboard.Handler())
//	mux.Handle("/hystrix/stream", streamHandler)
//
// or let the dashboard serve the stream itself with [WithStream]:
//
//	mux.Handle("/hystrix/", dashboard.Handler(dashboard.WithStream(streamHandler)))
//
// Either way the page is at /hystrix/ and reads /hystrix/stream.
//
// # Which stream
//
// The page reads, in order of preference:
//
//   - the URL in its own address's ?stream= parameter, which the input box at
//     the top of the page sets (for example
//     /hystrix/?stream=http://api-1:8080/hystrix.stream);
//   - the URL given to [WithStreamURL];
//   - [DefaultStreamURL], "stream".
//
// A relative URL is resolved against the page's address, as a link would be.
// As in the Hystrix dashboard, ?delay=ms is passed on to the stream (servers
// before Hystrix 1.5.4 honour it, and so does package metricsstream) and
// ?title= names the page. The form at the top has the delay beside the
// stream, and keeps it when another stream is chosen.
//
// A stream on another origin (host or port) than the page must allow it:
// the browser reads it only if the response carries
// Access-Control-Allow-Origin for the page's origin. Java Hystrix and Turbine
// do not send that header; the Hystrix dashboard gets around it with its own
// proxy servlet. This package has no proxy, because a proxy that fetches any
// URL a visitor names is an open door into the network it runs in. Serve such
// streams through a reverse proxy on the page's origin
// ([net/http/httputil.ReverseProxy] flushes a text/event-stream as it comes)
// or add the header where the stream is served.
//
// # What the page draws
//
// Each HystrixCommand object becomes a card with Hystrix's layout and
// colours: success (green), short-circuited (blue), bad request (light sea
// green), timeout (orange), rejected (purple, thread-pool or semaphore
// rejections by the command's isolation) and failure (red) counts of the
// rolling window; the error percentage; the request rate per host and for the
// cluster (the window's request count over its length); the circuit:
// Closed, Open, Forced Open, or Turbine's "Open 1 Closed 2", with
// "[ Forced Closed ]" when forced closed, and Half Open when an rxhystrix
// stream says its trials are out; and the 90th, 99th, 99.5th
// percentile, median and mean execution latency. A circle behind the figures
// grows with the square root of the rate per host and turns from green
// through yellow and orange to red as the error percentage goes 10, 25, 40,
// 50; a sparkline draws the rate over the last two minutes.
//
// Each HystrixThreadPool object becomes a card with its rate and the table of
// the Hystrix dashboard: active, queued, pool size, max active, executions,
// queue size (the rejection threshold), plus rejections and maximum size. Its
// circle turns towards red as tasks queue (one queued task per host counts as
// one error percent, as in Hystrix). Each HystrixCollapser object becomes a
// card with its batch rate, counts and batch sizes.
//
// Commands sort by error then volume (the default), alphabetically, by
// volume, by error, or by mean, median, 90th, 99th or 99.5th percentile
// latency; clicking the same order again reverses it. Pools and collapsers
// sort alphabetically or by volume. As in Hystrix the page re-sorts every
// 10 s, since rates keep changing.
//
// # Requests
//
// Below the cards, the page lists the latest 20 requests of the request
// events stream (Hystrix 1.5's requests.stream, which
// metricsstream.RequestEventsHandler serves), newest first: each
// request's executions in the request log's words, as
// GetUser[SUCCESS][12ms, 14ms] +2 from cache, each in the colour of its
// outcome. The page reads, in order of preference, the URL in its
// address's ?requests= parameter (empty for none), the URL given to
// [WithRequestsURL] when the address has no ?stream=, and
// [DefaultRequestsURL], "requests.stream", relative to the page, likewise.
// A stream named with ?stream= may be another service's, so the page does
// not guess where that service's requests are. The section appears with
// the first request; where there is no requests stream, it stays hidden
// and no error is shown.
//
// # Sizing advice
//
// Beyond Hystrix, each command card shows sizing advice, marked ADVICE: it is
// computed in the browser and changes nothing. It applies the rule of
// production Hystrix users: a pool (or, under semaphore isolation, a
// semaphore) of peak requests per second per host × p99 execution latency in
// seconds + 4 spare, rounded up — 30/s at 200 ms gives 30 × 0.2 + 4 = 10 —
// and a timeout of the p99.5 execution latency × 1.5, rounded up, so 200 ms
// gives 300 ms. The peak is the highest rate of the last two minutes. When
// the stream carries the current setting (the command's timeout, its pool's
// core size through the threadPool field, or its semaphore size) the card
// shows it after "now", in orange when the pool is smaller than advised or
// the timeout is below the advice or more than twice it. When that size is
// an adaptive limit (rxhystrix's propertyValue_adaptiveLimit on the pool,
// propertyValue_executionIsolationSemaphoreAdaptiveLimit on a
// semaphore-isolated command), the card names its algorithm after
// "adaptive", and the size follows each frame of the pool, so that the
// limit is seen moving beside the static advice; the pool card names the
// algorithm too.
//
// # rxhystrix's own lines
//
// A command card of an rxhystrix stream has up to two lines more, which a
// Java Hystrix stream never fills: the rolling counts of retries, hedges,
// the retries and hedges the budget refused, and rate-limit rejections,
// while one is not zero, after "Injecting faults: 1,500 delayed, 12
// failed" while the command injects faults (command.Config.Faults), with
// " until 12:30 UTC" for faults that end by themselves, and through
// Turbine with " on 1 of 3 hosts" while only some hosts inject them, so
// that nobody takes the failures they make for the downstream's; and,
// for a command whose permits are partitioned
// (command.Config.Partitions), each partition's executions in flight out
// of the permits it is guaranteed, with those refused since the command
// started, as "live 6/7 · batch 4/3 (1,243 refused)", or, for a command
// with a backlog (command.Config.Backlog), the executions waiting for a
// permit out of the most that may, as "Backlog 5/32 waiting". Through
// Turbine, they are the cluster's sums. The circuit of a command whose
// breaker's failed trials have lengthened its sleep window
// (breaker.Config.MaxSleepWindow) reads "Open · window 40s", and the
// circuit of a command whose closed breaker refuses a share of its
// executions (breaker.Config.ThrottleSuccessPercentage) "Closed ·
// refusing 12%".
//
// # Streams as they are
//
// The page takes each "data:" event as one JSON object and ignores the rest
// of the stream ("ping:" keep-alives, comments). It ignores fields it does
// not know (Turbine adds its own), draws "–" for a field an older Hystrix
// did not write, counts events that are not JSON or not of the three types
// without stopping, and drops a card when Turbine sends deleteData. Turbine
// (and package metricsstream/turbine) sums every number over its hosts;
// the values that must be one host's (percentiles, means, the error
// percentage, the window length, the timeout and the other settings shown)
// are divided by reportingHosts, as the Hystrix dashboard divides those it
// shows.
//
// When the stream cannot be reached, the page says so in a banner that names
// the URL, and keeps trying: the browser retries a failed connection by
// itself, and the page starts over 5 s after a response the browser will not
// retry (an error status or a response that is not an event stream).
//
// # Hooks for tests and tools
//
// The page's DOM is stable and meant to be read: each command card has
// data-command="<name>" (pools data-pool, collapsers data-collapser), and each
// figure in it data-field="<field>": name, success, shortCircuited,
// badRequest, timeout, rejected, failure, errorPercentage, hostRate,
// clusterRate, resilience, partitions, backlog, circuit, forcedClosed, hosts, latency90, latency99,
// latency995, latencyMean, latencyMedian, advicePoolSize, adviceTimeout,
// currentPoolSize, currentLimitKind, currentTimeout, sparkline; and for pools
// active, queued, poolSize, maxActive, executions, queueSize, rejected,
// maxPoolSize, adaptiveLimit. Each request of the requests panel (#requests)
// is an li with data-request, and each of its executions has
// data-execution, data-command="<name>" and data-outcome (success,
// shortCircuited, badRequest, timeout, rejected, failure, or empty). A
// command card's data-circuit is closed, open, half-open, forced-open,
// partial or unknown; a card's data-health is green, yellow, orange or red (error
// percentage below 25, below 40, below 50, and from 50). The connection
// status is #status, whose data-state is connecting, open or error, and the
// error banner is #error.
//
// # Differences from the Hystrix dashboard
//
//   - The sparkline is drawn against the stream's currentTime, not the
//     browser's clock, so a slow network does not bend it; a stream without
//     currentTime is drawn against the browser's clock. Netflix's Turbine
//     sums currentTime over its hosts, so where currentTime divided by
//     reportingHosts is the nearer to the browser's clock, that is the
//     stream's time.
//   - There is no proxy for streams on other origins (see above), and no
//     page to type several streams into: one page shows one stream, and the
//     input box changes it.
//   - Collapsers are drawn, and the advice is added.
//
// # Concurrency
//
// The handler that [Handler] returns starts no goroutine, holds no lock and is
// safe for concurrent use. The page's files are rendered once, when Handler is
// called. The handler of [WithStream] runs on the request's goroutine, as any
// [net/http.Handler].
package dashboard
