// The rxhystrix dashboard page. It reads a Hystrix metrics stream (a
// text/event-stream of "data: {json}" events, one per HystrixCommand,
// HystrixThreadPool and HystrixCollapser every 500 ms) with EventSource and
// draws each object as the Hystrix dashboard does. It uses no library.
//
// Every value from the stream reaches the page through textContent or an
// attribute, never as HTML. Unknown fields are ignored; a missing field shows
// as "–" and never stops the rest of the object from being drawn.
(function () {
	'use strict';

	var SPARKLINE_WINDOW_MS = 2 * 60 * 1000; // the sparkline and the advice's peak look back this far
	var SPARKLINE_WIDTH = 120;
	var SPARKLINE_HEIGHT = 60;
	var RESORT_INTERVAL_MS = 10000; // rates change all the time; Hystrix re-sorts every 10 s too
	var RECONNECT_DELAY_MS = 5000; // after the browser gives up on a stream
	var DEFAULT_WINDOW_MS = 10000; // Hystrix's default rolling statistical window
	var ADVICE_SPARE = 4; // seed sizing rule: rate x p99 + 4
	var ADVICE_TIMEOUT_FACTOR = 1.5; // and a timeout of p99.5 with 50% headroom
	var UNLIMITED_BATCH = 2147483647; // maxRequestsInBatch's default, Java's Integer.MAX_VALUE: no limit
	var MISSING = '\u2013';
	var MAX_REQUESTS = 20; // the requests panel keeps the latest this many

	// Hystrix's scales: the bubble's colour goes green, yellow, orange, red
	// as the error percentage goes 10, 25, 40, 50; the error text goes grey,
	// black, orange, red over 0, 10, 35, 50.
	var HEALTH_STOPS = [[10, [0, 128, 0]], [25, [255, 204, 0]], [40, [255, 153, 0]], [50, [255, 0, 0]]];
	var ERROR_TEXT_STOPS = [[0, [128, 128, 128]], [10, [0, 0, 0]], [35, [255, 153, 0]], [50, [255, 0, 0]]];

	// ---- values -------------------------------------------------------

	// num returns v as a finite number, or NaN when it is missing or not a number.
	function num(v) {
		if (typeof v === 'number') {
			return isFinite(v) ? v : NaN;
		}
		if (typeof v === 'string' && v.trim() !== '') {
			var n = Number(v);
			return isFinite(n) ? n : NaN;
		}
		return NaN;
	}

	function truthy(v) {
		return v === true || v === 'true' || (typeof v === 'number' && v > 0);
	}

	function has(v) {
		return !isNaN(v);
	}

	function commas(n) {
		if (!has(n)) {
			return MISSING;
		}
		var parts = String(n).split('.');
		parts[0] = parts[0].replace(/\B(?=(\d{3})+(?!\d))/g, ',');
		return parts.join('.');
	}

	function oneDecimal(n) {
		return has(n) ? commas((Math.round(n * 10) / 10).toFixed(1)) : MISSING;
	}

	function ms(n) {
		return has(n) ? commas(n) + 'ms' : MISSING;
	}

	// perHost divides a value that Turbine sums over the hosts, rounding down
	// as the Hystrix dashboard does.
	function perHost(v, hosts) {
		var n = num(v);
		return has(n) ? Math.floor(n / hosts) : NaN;
	}

	function hostsOf(d) {
		var h = num(d.reportingHosts);
		return h >= 1 ? h : 1;
	}

	// streamTime is the time of an object by the stream's clock, in Unix
	// milliseconds, or the browser's when the stream writes none. Netflix's
	// Turbine sums currentTime over its hosts, as it sums every number;
	// package metricsstream/turbine writes the latest host's. The two are
	// decades apart for two hosts or more, so the one nearer the browser's
	// clock is the stream's.
	function streamTime(d, hosts) {
		var t = num(d.currentTime), now = Date.now();
		if (!has(t)) {
			return now;
		}
		if (hosts > 1 && Math.abs(t / hosts - now) < Math.abs(t - now)) {
			return t / hosts;
		}
		return t;
	}

	function windowSeconds(d, hosts) {
		var w = perHost(d.propertyValue_metricsRollingStatisticalWindowInMilliseconds, hosts);
		return (w > 0 ? w : DEFAULT_WINDOW_MS) / 1000;
	}

	function interpolate(stops, x) {
		if (!has(x) || x <= stops[0][0]) {
			return rgb(stops[0][1]);
		}
		for (var i = 1; i < stops.length; i++) {
			if (x <= stops[i][0]) {
				var a = stops[i - 1], b = stops[i], f = (x - a[0]) / (b[0] - a[0]);
				return rgb(a[1].map(function (c, k) { return Math.round(c + f * (b[1][k] - c)); }));
			}
		}
		return rgb(stops[stops.length - 1][1]);
	}

	function rgb(c) {
		return 'rgb(' + c[0] + ', ' + c[1] + ', ' + c[2] + ')';
	}

	// healthName names the colour band of an error percentage, for tests
	// and for readers of the DOM: the stops of HEALTH_STOPS from 25 up.
	function healthName(err) {
		if (!has(err) || err < 25) {
			return 'green';
		}
		if (err < 40) {
			return 'yellow';
		}
		if (err < 50) {
			return 'orange';
		}
		return 'red';
	}

	// ---- cards --------------------------------------------------------

	// A Card is the DOM of one command, pool or collapser, with its fields
	// found once by their data-field names.
	function Card(templateId, kind, name) {
		var tpl = document.getElementById(templateId);
		this.el = tpl.content.firstElementChild.cloneNode(true);
		this.el.setAttribute('data-' + kind, name);
		this.name = name;
		this.fields = {};
		var nodes = this.el.querySelectorAll('[data-field]');
		for (var i = 0; i < nodes.length; i++) {
			this.fields[nodes[i].getAttribute('data-field')] = nodes[i];
		}
		this.set('name', name.length > 32 ? name.slice(0, 4) + '\u2026' + name.slice(-20) : name);
		this.fields.name.title = name;
		this.keys = {name: name.toLowerCase()};
		this.points = [];
	}

	Card.prototype.set = function (field, text) {
		var node = this.fields[field];
		if (node && node.textContent !== text) {
			node.textContent = text;
		}
	};

	// bubble sizes and colours the circle as Hystrix does: the radius grows
	// with the square root of the rate per host (5 at 0 up to 125), the centre
	// moves from 30% to 40%.
	Card.prototype.bubble = function (ratePerHost, domainMax, errorLike) {
		var c = this.fields.circle;
		if (!c) {
			return;
		}
		var rate = has(ratePerHost) && ratePerHost > 0 ? Math.min(ratePerHost, domainMax) : 0;
		var r = 5 + Math.sqrt(rate / domainMax) * 120;
		var pos = 30 + (rate / domainMax) * 10;
		c.setAttribute('r', r.toFixed(1));
		c.setAttribute('cx', pos.toFixed(1) + '%');
		c.setAttribute('cy', pos.toFixed(1) + '%');
		c.setAttribute('fill', interpolate(HEALTH_STOPS, errorLike));
		this.el.setAttribute('data-health', healthName(errorLike));
	};

	// record keeps the rates of the last two minutes, by the stream's own
	// clock (currentTime) when it has one, for the sparkline and the advice.
	Card.prototype.record = function (t, rate, ratePerHost) {
		var pts = this.points;
		if (pts.length && t < pts[pts.length - 1].t) {
			pts.length = 0; // the stream's clock went back: a new source
		}
		pts.push({t: t, v: rate, h: ratePerHost});
		while (pts.length && pts[0].t < t - SPARKLINE_WINDOW_MS) {
			pts.shift();
		}
	};

	Card.prototype.peakPerHost = function () {
		var peak = NaN;
		this.points.forEach(function (p) {
			if (has(p.h) && !(p.h <= peak)) {
				peak = p.h;
			}
		});
		return peak;
	};

	Card.prototype.sparkline = function () {
		var path = this.fields.sparkline;
		var pts = this.points.filter(function (p) { return has(p.v); });
		if (!path || pts.length < 2) {
			return;
		}
		var end = pts[pts.length - 1].t;
		var lo = Infinity, hi = -Infinity;
		pts.forEach(function (p) {
			lo = Math.min(lo, p.v);
			hi = Math.max(hi, p.v);
		});
		// Hystrix scales the line from its lowest to its highest point; a
		// span of at least a fifth of the highest keeps noise from filling
		// the whole height.
		var span = Math.max(hi - lo, hi * 0.2);
		if (span > hi - lo) {
			lo = Math.max(0, (lo + hi) / 2 - span / 2);
		}
		var d = pts.map(function (p, i) {
			var x = SPARKLINE_WIDTH - (end - p.t) / SPARKLINE_WINDOW_MS * SPARKLINE_WIDTH;
			var y = span > 0 ? SPARKLINE_HEIGHT - 2 - (p.v - lo) / span * (SPARKLINE_HEIGHT - 4) : SPARKLINE_HEIGHT - 2;
			return (i ? 'L' : 'M') + x.toFixed(1) + ',' + y.toFixed(1);
		}).join('');
		path.setAttribute('d', d);
	};

	// ---- HystrixCommand -------------------------------------------------

	function circuitState(d, hosts) {
		if (truthy(d.propertyValue_circuitBreakerForceOpen)) {
			return {text: 'Forced Open', state: 'forced-open'};
		}
		var open = d.isCircuitBreakerOpen;
		if (open === true || open === 'true') {
			// rxhystrix's stream tells a half-open circuit, whose trials
			// are out, from an open one.
			return d.circuitBreakerState === 'HALF_OPEN' ?
				{text: 'Half Open', state: 'half-open'} : {text: 'Open', state: 'open'};
		}
		if (open === false || open === 'false' || open === 0) {
			return {text: 'Closed', state: 'closed'};
		}
		if (typeof open === 'number') {
			// Turbine counts the hosts whose circuit is open.
			return open >= hosts ? {text: 'Open', state: 'open'} :
				{text: 'Open ' + open + ' Closed ' + (hosts - open), state: 'partial'};
		}
		if (open && typeof open === 'object') {
			return {text: 'Open ' + (num(open['true']) || 0) + ' Closed ' + (num(open['false']) || 0), state: 'partial'};
		}
		if (typeof open === 'string') {
			return {text: open.replace(/true/g, 'Open').replace(/false/g, 'Closed'), state: 'partial'};
		}
		return {text: 'Unknown', state: 'unknown'};
	}

	// sleepWindowNote is what follows 'Open' for a circuit whose failed
	// trials have lengthened its sleep window beyond the configured one
	// (rxhystrix's breaker.Config.MaxSleepWindow): '' for any other.
	function sleepWindowNote(d, hosts) {
		var w = perHost(d.circuitBreakerSleepWindowInMilliseconds, hosts);
		var configured = perHost(d.propertyValue_circuitBreakerSleepWindowInMilliseconds, hosts);
		return w > configured ? ' \u00b7 window ' + Math.round(w / 100) / 10 + 's' : '';
	}

	// throttleNote is what follows 'Closed' for a circuit whose breaker
	// refuses a share of the executions (rxhystrix's
	// breaker.Config.ThrottleSuccessPercentage): '' while it refuses none.
	function throttleNote(d, hosts) {
		var p = perHost(d.circuitBreakerThrottlePercentage, hosts);
		return p > 0 ? ' \u00b7 refusing ' + Math.round(p) + '%' : '';
	}

	// faultsEnd is ' until 12:30 UTC' for faults that end by themselves
	// at that time (rxhystrix's faultInjectionUntil, RFC 3339), '' for
	// others: in UTC, as the stream writes it, so that every reader of a
	// game day sees the same time.
	function faultsEnd(until) {
		var t = typeof until === 'string' ? Date.parse(until) : NaN;
		if (!has(t)) {
			return '';
		}
		var iso = new Date(t).toISOString(); // 2026-12-06T12:30:00.000Z
		return ' until ' + iso.slice(11, 16) + ' UTC';
	}

	// resilienceCounts is the line of rxhystrix's own events, which only
	// its stream has: empty for Hystrix's and Turbine's, and while nothing
	// was retried, hedged or rate limited and no fault is injected. Faults
	// injected (command.Config.Faults) come first, so that nobody takes
	// the failures they make for the downstream's.
	function resilienceCounts(d) {
		var parts = [];
		// Turbine counts the hosts of each value where they disagree, as
		// {"false": 2, "true": 1}: faults on some hosts are faults too.
		var enabled = d.faultInjectionEnabled, on = '';
		if (enabled && typeof enabled === 'object' && num(enabled['true']) > 0) {
			on = ' on ' + commas(num(enabled['true'])) + ' of ' + commas(hostsOf(d)) + ' hosts';
		}
		if (enabled === true || on) {
			parts.push('Injecting faults' + on + faultsEnd(d.faultInjectionUntil) + ': ' +
				commas(num(d.cumulativeCountFaultDelays)) + ' delayed, ' +
				commas(num(d.cumulativeCountFaultErrors)) + ' failed');
		}
		var named = [
			['Retried', d.rollingCountRetried], ['Hedged', d.rollingCountHedged],
			['Budget refused', d.rollingCountRetryBudgetExhausted], ['Rate limited', d.rollingCountRateLimited]];
		for (var i = 0; i < named.length; i++) {
			var n = num(named[i][1]);
			if (n > 0) {
				parts.push(named[i][0] + ' ' + commas(n));
			}
		}
		return parts.join(' \u00b7 ');
	}

	// partitionsLine is the line of a command's partitions of its
	// permits, which only rxhystrix's stream has: each partition's
	// executions in flight out of the permits it is guaranteed, and the
	// executions refused since the command started. Turbine's sums are
	// the cluster's.
	function partitionsLine(d) {
		var inFlight = d.partitionInFlight, guaranteed = d.partitionGuaranteed || {}, rejected = d.partitionRejected || {};
		if (!inFlight || typeof inFlight !== 'object') {
			return '';
		}
		return Object.keys(inFlight).map(function (name) {
			var text = name + ' ' + commas(num(inFlight[name])) + '/' + commas(num(guaranteed[name]));
			var refused = num(rejected[name]);
			return refused > 0 ? text + ' (' + commas(refused) + ' refused)' : text;
		}).join(' \u00b7 ');
	}

	// backlogLine is the line of a command's backlog of executions
	// waiting for a permit, which only rxhystrix's stream has: those
	// waiting now out of the most that may. A key with a backlog has no
	// partitions, so the two lines share one place on the card.
	function backlogLine(d) {
		var size = num(d.backlogSize);
		if (!has(size) || size <= 0) {
			return '';
		}
		return 'Backlog ' + commas(num(d.backlogWaiting) || 0) + '/' + commas(size) + ' waiting';
	}

	function rejectedCount(d) {
		var pool = num(d.rollingCountThreadPoolRejected), sem = num(d.rollingCountSemaphoreRejected);
		switch (d.propertyValue_executionIsolationStrategy) {
		case 'THREAD':
			return pool;
		case 'SEMAPHORE':
			return sem;
		}
		if (has(pool) && has(sem)) {
			return pool + sem;
		}
		return has(pool) ? pool : sem;
	}

	// ceilInt rounds up, forgiving the float noise of products such as
	// 30 * 0.2 = 6.000000000000001.
	function ceilInt(x) {
		return Math.ceil(x - 1e-9);
	}

	function updateCommand(card, d) {
		var hosts = hostsOf(d);
		var seconds = windowSeconds(d, hosts);
		var requests = num(d.requestCount);
		var rate = has(requests) ? Math.max(requests, 0) / seconds : NaN;
		var ratePerHost = rate / hosts;
		var err = num(d.errorPercentage);
		if (has(err)) {
			err = Math.round(err / hosts * 10) / 10; // Turbine sums the hosts' percentages
		} else if (requests > 0 && has(num(d.errorCount))) {
			// Both counts are the cluster's: their ratio is already one
			// host's average percentage.
			err = Math.round(num(d.errorCount) * 1000 / requests) / 10;
		}
		card.record(streamTime(d, hosts), rate, ratePerHost);

		var latency = d.latencyExecute && typeof d.latencyExecute === 'object' ? d.latencyExecute : {};
		var p50 = perHost(latency['50'], hosts), p90 = perHost(latency['90'], hosts);
		var p99 = perHost(latency['99'], hosts), p995 = perHost(latency['99.5'], hosts);
		var mean = perHost(d.latencyExecute_mean, hosts);

		card.set('success', commas(num(d.rollingCountSuccess)));
		card.set('shortCircuited', commas(num(d.rollingCountShortCircuited)));
		card.set('badRequest', commas(num(d.rollingCountBadRequests)));
		card.set('timeout', commas(num(d.rollingCountTimeout)));
		card.set('rejected', commas(rejectedCount(d)));
		card.set('failure', commas(num(d.rollingCountFailure)));
		var resilience = resilienceCounts(d);
		card.set('resilience', resilience);
		card.el.classList.toggle('resilient', resilience !== '');
		var partitions = partitionsLine(d), backlog = backlogLine(d);
		card.set('partitions', partitions);
		card.set('backlog', backlog);
		card.el.classList.toggle('permits', partitions !== '' || backlog !== '');
		card.set('errorPercentage', has(err) ? oneDecimal(err) + ' %' : MISSING + ' %');
		card.fields.errorPercentage.style.color = interpolate(ERROR_TEXT_STOPS, err);
		card.set('hostRate', oneDecimal(ratePerHost));
		card.set('clusterRate', oneDecimal(rate));

		var circuit = circuitState(d, hosts);
		var note = circuit.state === 'open' ? sleepWindowNote(d, hosts) :
			circuit.state === 'closed' ? throttleNote(d, hosts) : '';
		card.set('circuit', circuit.text + note);
		card.fields.circuit.setAttribute('data-state', circuit.state);
		card.el.setAttribute('data-circuit', circuit.state);
		card.set('forcedClosed', truthy(d.propertyValue_circuitBreakerForceClosed) ? '[ Forced Closed ]' : '');

		var turbine = d.reportingHosts !== undefined && hosts > 1;
		card.set('hostsLabel', turbine ? 'Hosts' : 'Host');
		card.set('hosts', turbine ? commas(hosts) : 'Single');
		card.set('latency90', ms(p90));
		card.set('latencyMedian', ms(p50));
		card.set('latency99', ms(p99));
		card.set('latencyMean', ms(mean));
		card.set('latency995', ms(p995));

		updateAdvice(card, d, hosts, p99, p995);

		card.bubble(ratePerHost, 400, err);
		card.sparkline();
		card.keys.volume = has(rate) ? rate : -1;
		card.keys.error = has(err) ? err : -1;
		card.keys.errorThenVolume = has(rate) ? (has(err) ? err : 0) * 1e8 + rate : -1;
		card.keys.mean = has(mean) ? mean : -1;
		card.keys.median = has(p50) ? p50 : -1;
		card.keys.p90 = has(p90) ? p90 : -1;
		card.keys.p99 = has(p99) ? p99 : -1;
		card.keys.p995 = has(p995) ? p995 : -1;
		card.threadPool = typeof d.threadPool === 'string' ? d.threadPool : '';
	}

	// updateAdvice applies the sizing rule of production Hystrix users: a
	// pool that serves the peak rate at p99 latency plus 4 spare threads, and
	// a timeout at p99.5 with 50% headroom when the latencies can tell it
	// (timeoutAdvice). It is advice, shown as such.
	function updateAdvice(card, d, hosts, p99, p995) {
		var strategy = d.propertyValue_executionIsolationStrategy;
		var semaphore = strategy === 'SEMAPHORE';
		card.set('adviceIsolation', semaphore ? 'semaphore' : 'pool');

		var peak = card.peakPerHost();
		var size = peak > 0 && has(p99) ? ceilInt(peak * p99 / 1000) + ADVICE_SPARE : NaN;
		card.set('advicePoolSize', has(size) ? String(size) : MISSING);
		var advice = timeoutAdvice(d, hosts, p995);
		var timeout = advice.timeout;
		card.set('adviceTimeout', advice.text);
		card.fields.adviceTimeout.setAttribute('data-advice', advice.kind);
		card.fields.advice.title = has(size) ?
			'Advice, not a setting: peak ' + oneDecimal(peak) + '/s per host in the last 2 minutes \u00d7 p99 ' +
			ms(p99) + ' + ' + ADVICE_SPARE + ' = ' + size + (semaphore ? ' permits' : ' threads') +
			(advice.why ? '; ' + advice.why : '') :
			'Advice needs traffic: no rate or latency yet';

		// An adaptive limit (rxhystrix's) moves with latency; it is shown
		// beside the static advice, with its algorithm.
		card.adviceArgs = [d, hosts, p99, p995];
		var pool = semaphore ? undefined : poolOf(d);
		var currentSize = semaphore ?
			perHost(d.propertyValue_executionIsolationSemaphoreMaxConcurrentRequests, hosts) :
			(pool ? perHost(pool.currentCorePoolSize, hostsOf(pool)) : NaN);
		var adaptive = semaphore ? d.propertyValue_executionIsolationSemaphoreAdaptiveLimit :
			(pool ? pool.propertyValue_adaptiveLimit : undefined);
		card.set('currentPoolSize', has(currentSize) ? String(currentSize) : '');
		card.set('currentLimitKind', has(currentSize) && typeof adaptive === 'string' ? adaptive : '');
		card.fields.currentPoolSize.classList.toggle('differs', has(currentSize) && has(size) && currentSize < size);

		var currentTimeout = currentTimeoutOf(d, hosts);
		card.set('currentTimeout', has(currentTimeout) ? ms(currentTimeout) : '');
		card.fields.currentTimeout.classList.toggle('differs', has(currentTimeout) && has(timeout) &&
			(currentTimeout < timeout || currentTimeout > 2 * timeout));
	}

	// currentTimeoutOf is the command's timeout setting, which Turbine
	// sums over the hosts as it sums every number; older Hystrix wrote it
	// under its thread-isolation name.
	function currentTimeoutOf(d, hosts) {
		var t = perHost(d.propertyValue_executionTimeoutInMilliseconds, hosts);
		return has(t) ? t : perHost(d.propertyValue_executionIsolationThreadTimeoutInMilliseconds, hosts);
	}

	// timeoutAdvice suggests a timeout from what the latency distribution
	// can tell. The latency of a call that timed out is the timeout itself,
	// so a percentile measures the downstream only while fewer calls time
	// out than lie above it: p99.5 while under 0.5% of the requests time
	// out. Then the advice is p99.5 \u00d7 1.5. Past that, the tail of the
	// distribution is the timeout's, and p99.5 \u00d7 1.5 would only ever say
	// "raise it"; so the page says it cannot tell, and which percentile is
	// still the downstream's. kind is "advice", "cut-off", "most-time-out"
	// or "none".
	function timeoutAdvice(d, hosts, p995) {
		var requests = num(d.requestCount), timeouts = num(d.rollingCountTimeout);
		var share = requests > 0 && timeouts > 0 ? Math.min(timeouts / requests, 1) : 0;
		var current = currentTimeoutOf(d, hosts);
		var at = has(current) ? ' at ' + ms(current) : '';
		var pct = oneDecimal(share * 100) + '%';
		if (share >= 0.5) {
			return {timeout: NaN, text: 'unknown', kind: 'most-time-out',
				why: 'timeout: most calls time out (' + pct + at + '), so their latencies are the timeout\'s: ' +
					'the downstream is down or far slower, and no timeout can be told from them'};
		}
		if (share * 100 >= 100 - 99.5) {
			var latency = d.latencyExecute && typeof d.latencyExecute === 'object' ? d.latencyExecute : {};
			var below = '';
			var keys = ['99', '95', '90', '75', '50', '25'];
			for (var i = 0; i < keys.length; i++) {
				if (share * 100 < 100 - Number(keys[i])) {
					var v = perHost(latency[keys[i]], hosts);
					if (has(v)) {
						below = '; up to p' + keys[i] + ' (' + ms(v) + ') they are still the downstream\'s';
					}
					break;
				}
			}
			return {timeout: NaN, text: 'unknown', kind: 'cut-off',
				why: 'timeout: ' + pct + ' of calls time out' + at + ', which cuts off the latencies above p' +
					oneDecimal(100 - share * 100) + ', p99.5 included, so they cannot tell a timeout' + below};
		}
		if (!(p995 > 0)) {
			return {timeout: NaN, text: MISSING, kind: 'none', why: ''};
		}
		var timeout = ceilInt(p995 * ADVICE_TIMEOUT_FACTOR);
		return {timeout: timeout, text: ms(timeout), kind: 'advice',
			why: 'timeout p99.5 ' + ms(p995) + ' \u00d7 ' + ADVICE_TIMEOUT_FACTOR + ' = ' + ms(timeout) +
				(share > 0 ? ' (' + pct + ' of calls time out, fewer than the 0.5% above p99.5)' : '')};
	}

	// poolOf finds the latest object of the command's thread pool among the
	// pools the stream has shown.
	function poolOf(d) {
		var key = poolKeyOf(d);
		var pool = key !== undefined ? sections.pools.cards.get(String(key)) : undefined;
		return pool && pool.latest ? pool.latest : undefined;
	}

	function poolKeyOf(d) {
		return typeof d.threadPool === 'string' ? d.threadPool :
			(typeof d.propertyValue_executionIsolationThreadPoolKeyOverride === 'string' ?
				d.propertyValue_executionIsolationThreadPoolKeyOverride : d.group);
	}

	// ---- HystrixThreadPool ------------------------------------------------

	function updatePool(card, d) {
		var hosts = hostsOf(d);
		var seconds = windowSeconds(d, hosts);
		var executed = num(d.rollingCountThreadsExecuted);
		var rate = has(executed) ? Math.max(executed, 0) / seconds : NaN;
		var ratePerHost = rate / hosts;
		card.record(streamTime(d, hosts), rate, ratePerHost);
		card.latest = d;

		card.set('hostRate', oneDecimal(ratePerHost));
		card.set('clusterRate', oneDecimal(rate));
		card.set('active', commas(num(d.currentActiveCount)));
		card.set('maxActive', commas(num(d.rollingMaxActiveThreads)));
		card.set('queued', commas(num(d.currentQueueSize)));
		card.set('executions', commas(executed));
		card.set('poolSize', commas(num(d.currentPoolSize)));
		card.set('queueSize', commas(perHost(d.propertyValue_queueSizeRejectionThreshold, hosts)));
		card.set('rejected', commas(num(d.rollingCountCommandRejections)));
		card.set('maxPoolSize', commas(num(d.currentMaximumPoolSize)));
		var adaptive = typeof d.propertyValue_adaptiveLimit === 'string' ? d.propertyValue_adaptiveLimit : '';
		card.set('adaptiveLimit', adaptive);

		// The advice of the pool's commands shows its size now: a size that
		// an adaptive limit moves between two frames of the command.
		sections.commands.cards.forEach(function (c) {
			if (c.adviceArgs && String(poolKeyOf(c.adviceArgs[0])) === String(d.name)) {
				updateAdvice.apply(null, [c].concat(c.adviceArgs));
			}
		});

		// As in Hystrix, each queued task per host counts as 1% of "error".
		var queued = num(d.currentQueueSize);
		card.bubble(ratePerHost, 2000, has(queued) ? queued / hosts : NaN);
		card.keys.volume = has(rate) ? rate : -1;
	}

	// ---- HystrixCollapser -------------------------------------------------

	function updateCollapser(card, d) {
		var hosts = hostsOf(d);
		var seconds = windowSeconds(d, hosts);
		var batches = num(d.rollingCountBatches);
		var rate = has(batches) ? Math.max(batches, 0) / seconds : NaN;
		var size = d.batchSize && typeof d.batchSize === 'object' ? d.batchSize : {};

		card.set('hostRate', oneDecimal(rate / hosts));
		card.set('clusterRate', oneDecimal(rate));
		card.set('batches', commas(batches));
		card.set('requestsBatched', commas(num(d.rollingCountRequestsBatched)));
		card.set('responsesFromCache', commas(num(d.rollingCountResponsesFromCache)));
		// The stream's batchSize_mean is truncated to an integer (Hystrix's
		// format); the rolling counts give it to a decimal.
		var requested = num(d.rollingCountRequestsBatched);
		card.set('batchSizeMean', batches > 0 && has(requested) ? oneDecimal(requested / batches) :
			commas(perHost(d.batchSize_mean, hosts)));
		card.set('batchSize50', commas(perHost(size['50'], hosts)));
		card.set('batchSize99', commas(perHost(size['99'], hosts)));
		var maxBatch = perHost(d.propertyValue_maxRequestsInBatch, hosts);
		card.set('maxRequestsInBatch', maxBatch >= UNLIMITED_BATCH ? 'unlimited' : commas(maxBatch));
		card.set('timerDelay', ms(perHost(d.propertyValue_timerDelayInMilliseconds, hosts)));
		card.keys.volume = has(rate) ? rate : -1;
	}

	// ---- sections and sorting ---------------------------------------------

	// A Section is one kind of object: its cards by name, in a container,
	// kept in the order the user chose.
	function Section(kind, containerId, templateId, update, defaultSort) {
		this.kind = kind;
		this.container = document.getElementById(containerId);
		this.templateId = templateId;
		this.update = update;
		this.cards = new Map();
		this.sortKey = defaultSort;
		this.descending = defaultSort !== 'name';
		this.menu = document.querySelector('[data-sort-for="' + containerId + '"]');
	}

	Section.prototype.show = function (d) {
		var name = String(d.name);
		var card = this.cards.get(name);
		var added = false;
		if (!card) {
			card = new Card(this.templateId, this.kind, name);
			this.cards.set(name, card);
			var loading = this.container.querySelector('.loading');
			if (loading) {
				loading.remove();
			}
			this.container.appendChild(card.el);
			this.container.closest('section').hidden = false;
			added = true;
		}
		this.update(card, d);
		if (added) {
			this.sort();
		}
	};

	// noneYet says, once the stream has spoken, that it has shown no object
	// of this kind so far (a service with semaphores only has no pools).
	Section.prototype.noneYet = function () {
		var loading = this.container.querySelector('.loading');
		if (loading) {
			loading.textContent = 'None in this stream yet.';
		}
	};

	Section.prototype.remove = function (name) {
		var card = this.cards.get(name);
		if (card) {
			card.el.remove();
			this.cards.delete(name);
		}
	};

	Section.prototype.choose = function (key) {
		if (this.sortKey === key) {
			this.descending = !this.descending;
		} else {
			this.sortKey = key;
			this.descending = key !== 'name';
		}
		this.sort();
	};

	Section.prototype.sort = function () {
		var key = this.sortKey, sign = this.descending ? -1 : 1;
		var cards = Array.from(this.cards.values());
		cards.sort(function (a, b) {
			var x = a.keys[key], y = b.keys[key];
			if (x === undefined) {
				x = -1;
			}
			if (y === undefined) {
				y = -1;
			}
			if (x < y) {
				return -sign;
			}
			if (x > y) {
				return sign;
			}
			return a.keys.name < b.keys.name ? -1 : a.keys.name > b.keys.name ? 1 : 0;
		});
		var container = this.container;
		cards.forEach(function (card, i) {
			if (container.children[i] !== card.el) {
				container.insertBefore(card.el, container.children[i] || null);
			}
		});
		this.markMenu();
	};

	Section.prototype.markMenu = function () {
		if (!this.menu) {
			return;
		}
		var self = this;
		this.menu.querySelectorAll('button[data-sort]').forEach(function (b) {
			var on = b.getAttribute('data-sort') === self.sortKey;
			b.setAttribute('aria-pressed', on ? 'true' : 'false');
			if (on) {
				b.setAttribute('data-direction', self.descending ? 'desc' : 'asc');
			} else {
				b.removeAttribute('data-direction');
			}
		});
	};

	var sections = {};

	// ---- the stream ---------------------------------------------------------

	var statusEl, errorEl;
	var source = null;
	var reconnectTimer = 0;
	var counts = {events: 0, ignored: 0};
	var everOpened = false;

	function setStatus(state, text) {
		statusEl.setAttribute('data-state', state);
		statusEl.textContent = text;
	}

	function showError(text) {
		errorEl.textContent = text;
		errorEl.hidden = false;
	}

	function clearError() {
		errorEl.hidden = true;
		errorEl.textContent = '';
	}

	function handle(raw) {
		var d;
		try {
			d = JSON.parse(raw);
		} catch (e) {
			counts.ignored++;
			return;
		}
		if (!d || typeof d !== 'object' || d.name === undefined || d.name === null) {
			counts.ignored++;
			return;
		}
		var section = {HystrixCommand: sections.commands, HystrixThreadPool: sections.pools,
			HystrixCollapser: sections.collapsers}[d.type];
		if (!section) {
			counts.ignored++; // another kind of object: not ours to draw
			return;
		}
		if (counts.events++ === 0) {
			Object.keys(sections).forEach(function (k) { sections[k].noneYet(); });
		}
		if (d.deleteData === true || d.deleteData === 'true') {
			section.remove(String(d.name));
			return;
		}
		try {
			section.show(d);
		} catch (e) {
			counts.ignored++;
			if (window.console) {
				console.warn('dashboard: cannot draw', d.type, d.name, e);
			}
		}
	}

	function connect(url) {
		clearTimeout(reconnectTimer);
		if (source) {
			source.close();
		}
		setStatus('connecting', 'Connecting to ' + url + '\u2026');
		var es = new EventSource(url);
		source = es;
		es.onopen = function () {
			everOpened = true;
			clearError();
			setStatus('open', 'Connected to ' + url);
		};
		es.onmessage = function (e) {
			handle(e.data);
			var text = 'Connected to ' + url + ' \u00b7 ' + counts.events + ' events' +
				(counts.ignored ? ' \u00b7 ' + counts.ignored + ' ignored' : '') +
				' \u00b7 updated ' + new Date().toLocaleTimeString();
			setStatus('open', text);
		};
		es.onerror = function () {
			if (es !== source) {
				return;
			}
			var lost = everOpened ? 'Lost the stream ' : 'Cannot reach the stream ';
			if (es.readyState === EventSource.CLOSED) {
				// The server answered, but not with a 200 text/event-stream (or
				// the browser refused a stream of another origin that does not
				// allow this one): the browser will not retry by itself.
				showError(lost + url + ': the server did not answer with an event stream ' +
					'(wrong address, an error status, too many connections, or another origin ' +
					'without Access-Control-Allow-Origin). Retrying in ' + RECONNECT_DELAY_MS / 1000 + ' s.');
				setStatus('error', 'Disconnected from ' + url);
				es.close();
				reconnectTimer = setTimeout(function () { connect(url); }, RECONNECT_DELAY_MS);
			} else {
				showError(lost + url + ': the connection failed. Retrying\u2026');
				setStatus('error', 'Reconnecting to ' + url + '\u2026');
			}
		};
	}

	// ---- requests ----------------------------------------------------

	// The request events stream (rxhystrix's requests.stream, Hystrix 1.5's
	// HystrixRequestEventsSseServlet) sends one JSON array per request that
	// ended: its executions, grouped by command and events, as
	// {"name": "GetUser", "events": ["SUCCESS"], "latencies": [12],
	// "cached": 2, "collapsed": {"name": "UserBatch", "count": 4}}. The
	// panel lists the latest requests, newest first, each execution in the
	// colour of its outcome. The stream is optional: where there is none,
	// the panel stays hidden and no error is shown.

	// OUTCOMES gives an execution's colour: the first of these events it has.
	var OUTCOMES = [['SHORT_CIRCUITED', 'shortCircuited'], ['THREAD_POOL_REJECTED', 'rejected'],
		['SEMAPHORE_REJECTED', 'rejected'], ['TIMEOUT', 'timeout'], ['FAILURE', 'failure'],
		['BAD_REQUEST', 'badRequest'], ['SUCCESS', 'success']];

	// eventName returns "SUCCESS" for "SUCCESS" and "EMITx3" for
	// {"name": "EMIT", "count": 3}, as the request log writes them, or null.
	function eventName(e) {
		if (typeof e === 'string') {
			return e;
		}
		if (e && typeof e === 'object' && typeof e.name === 'string') {
			var n = num(e.count);
			return has(n) && n > 1 ? e.name + 'x' + n : e.name;
		}
		return null;
	}

	// describeExecution returns the text and outcome of one object of a
	// request: GetUser[SUCCESS][12ms, 14ms] +2 from cache.
	function describeExecution(x) {
		var events = (Array.isArray(x.events) ? x.events : []).map(eventName).filter(function (e) { return e !== null; });
		var latencies = (Array.isArray(x.latencies) ? x.latencies : []).map(function (v) {
			var n = num(v);
			return ms(n >= 0 ? n : NaN); // -1: the code did not run
		});
		var text = String(x.name) + '[' + events.join(', ') + '][' + latencies.join(', ') + ']';
		var cached = num(x.cached);
		if (has(cached) && cached > 0) {
			text += ' +' + commas(cached) + ' from cache';
		}
		var c = x.collapsed;
		if (c && typeof c === 'object') {
			text += ' (batch of ' + commas(num(c.count)) + ' from ' + String(c.name) + ')';
		}
		var outcome = '';
		for (var i = 0; i < OUTCOMES.length && !outcome; i++) {
			if (events.indexOf(OUTCOMES[i][0]) >= 0) {
				outcome = OUTCOMES[i][1];
			}
		}
		return {text: text, outcome: outcome};
	}

	function showRequest(list, executions) {
		var li = document.createElement('li');
		li.setAttribute('data-request', '');
		var time = document.createElement('time');
		time.textContent = new Date().toLocaleTimeString();
		li.appendChild(time);
		executions.forEach(function (x) {
			if (!x || typeof x !== 'object' || x.name === undefined || x.name === null) {
				return;
			}
			var d = describeExecution(x);
			var span = document.createElement('span');
			span.className = 'execution ' + d.outcome;
			span.setAttribute('data-execution', '');
			span.setAttribute('data-command', String(x.name));
			span.setAttribute('data-outcome', d.outcome);
			span.textContent = d.text;
			li.appendChild(span);
		});
		list.insertBefore(li, list.firstChild);
		while (list.children.length > MAX_REQUESTS) {
			list.removeChild(list.lastChild);
		}
	}

	function connectRequests(url) {
		var section = document.getElementById('requests-section');
		var list = document.getElementById('requests');
		var status = document.getElementById('requests-status');
		var received = 0;
		var ignored = 0;
		var es = new EventSource(url);
		es.onmessage = function (e) {
			var executions;
			try {
				executions = JSON.parse(e.data);
			} catch (err) {
				executions = null;
			}
			if (!Array.isArray(executions)) {
				ignored++;
				return;
			}
			received++;
			showRequest(list, executions);
			section.hidden = false;
			status.textContent = commas(received) + (received === 1 ? ' request' : ' requests') + ' from ' + url +
				(ignored ? ' \u00b7 ' + ignored + ' ignored' : '') + ' \u00b7 the latest ' + MAX_REQUESTS + ' shown';
		};
		es.onerror = function () {
			if (es.readyState === EventSource.CLOSED) {
				// No requests stream there: nothing to retry, nothing to alarm.
				es.close();
				status.textContent = 'The requests stream ' + url + ' is not available.';
			}
		};
	}

	// requestsAddress is the request events stream to read, as written
	// (null for none): ?requests= (empty for none), else, when the page
	// reads its default stream, the default the server put in the page; a
	// stream named with ?stream= may belong to another service, whose
	// requests stream the page does not guess.
	function requestsAddress(params) {
		var raw = params.get('requests');
		if (raw === null) {
			if (params.get('stream')) {
				return null;
			}
			raw = pageDefault('rxhystrix-default-requests', '');
		}
		return raw || null;
	}

	// pageDefault is the default the server put in the page's meta
	// element name, or fallback.
	function pageDefault(name, fallback) {
		var meta = document.querySelector('meta[name="' + name + '"]');
		return meta ? meta.getAttribute('content') : fallback;
	}

	// streamAddress is the stream to read, as written: ?stream=, else the
	// default the server put in the page.
	function streamAddress(params) {
		return params.get('stream') || pageDefault('rxhystrix-default-stream', 'stream');
	}

	// streamURL is streamAddress resolved against the page's address, with
	// ?delay= passed on, as the Hystrix dashboard does. It throws when the
	// address is not a URL to the browser.
	function streamURL(params) {
		var url = new URL(streamAddress(params), document.baseURI);
		var delay = params.get('delay');
		if (delay && !url.searchParams.has('delay')) {
			url.searchParams.set('delay', delay);
		}
		return url;
	}

	function start() {
		statusEl = document.getElementById('status');
		errorEl = document.getElementById('error');
		sections.commands = new Section('command', 'commands', 'command-template', updateCommand, 'errorThenVolume');
		sections.pools = new Section('pool', 'pools', 'pool-template', updatePool, 'volume');
		sections.collapsers = new Section('collapser', 'collapsers', 'collapser-template', updateCollapser, 'volume');
		Object.keys(sections).forEach(function (k) {
			var section = sections[k];
			section.markMenu();
			if (section.menu) {
				section.menu.addEventListener('click', function (e) {
					var b = e.target.closest('button[data-sort]');
					if (b) {
						section.choose(b.getAttribute('data-sort'));
					}
				});
			}
		});
		setInterval(function () {
			Object.keys(sections).forEach(function (k) { sections[k].sort(); });
		}, RESORT_INTERVAL_MS);

		var params = new URLSearchParams(location.search);
		var url;
		try {
			url = streamURL(params);
		} catch (e) {
			showError('The stream address ' + JSON.stringify(streamAddress(params)) + ' is not a URL.');
			setStatus('error', 'No stream');
			return;
		}
		document.getElementById('stream-url').value = params.get('stream') || url.href;
		// The form keeps the delay when another stream is chosen, as the
		// Hystrix dashboard's first page asks for it beside the stream.
		document.getElementById('stream-delay').value = params.get('delay') || '';
		var title = params.get('title') || url.href;
		document.getElementById('title').textContent = 'Hystrix Stream: ' + title;
		document.title = 'Hystrix: ' + title;
		connect(url.href);

		var requests = requestsAddress(params);
		if (requests) {
			try {
				requests = new URL(requests, document.baseURI);
			} catch (e) {
				showError('The requests stream address ' + JSON.stringify(requests) + ' is not a URL.');
				return;
			}
			connectRequests(requests.href);
		}
	}

	if (document.readyState === 'loading') {
		document.addEventListener('DOMContentLoaded', start);
	} else {
		start();
	}
})();
