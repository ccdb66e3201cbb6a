package metricsstream

import (
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// Completions recorded at random times (now, or late: ended a while ago,
// within what the rings keep), executions started and ended, health
// resets and the clock moving by anything from a nanosecond to many
// windows, on whatever processor the recorder happens to run, give at
// every instant what a model of Hystrix's bucketed streams says: rolling
// counts, the rolling maximum concurrency and health counts of the closed
// buckets of their windows, cumulative counts of every closed bucket,
// latency distributions of the closed buckets of the percentile window,
// and the executions in flight; and every subscriber of the five
// timer-driven streams (health, rolling, cumulative, latency, maximum
// concurrency) gets its value at subscription and then one at each
// boundary of its window, in order, the health stream resting while it
// has nothing to count. The model keeps every record and sums them when
// asked; the metrics keep striped rings of packed counters, per-processor
// caches of the current buckets and running totals.
func TestCommandMetricsFollowTheModel(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		cfg := drawMetricsConfig(rt)
		m, mc := newTestMetrics(t, cfg)
		model := &metricsModel{cfg: m.Config()}
		defer model.unsubscribeAll()
		rt.Repeat(map[string]func(*rapid.T){
			"advance": func(rt *rapid.T) {
				d := model.drawAdvance(rt)
				mc.Advance(d)
				model.advance(d)
				model.checkStreams(rt)
			},
			"complete": func(rt *rapid.T) {
				r := model.drawRecord(rt)
				c := r.completion()
				recordSomewhere(rt, func() { m.MarkCompletionAt(&c, t0.Add(r.end).UnixNano()) })
				model.complete(r)
			},
			"start": func(rt *rapid.T) {
				at := model.drawPast(rt, "startedAgo")
				var n int64
				recordSomewhere(rt, func() { n = m.MarkStartAt(t0.Add(at).UnixNano()) })
				if want := model.start(at); n != want {
					rt.Fatalf("MarkStartAt returned %d, want %d", n, want)
				}
			},
			"tryStart": func(rt *rapid.T) {
				at := model.drawPast(rt, "startedAgo")
				limit := rapid.Int64Range(0, int64(len(model.inFlight))+2).Draw(rt, "limit")
				var n int64
				var ok bool
				recordSomewhere(rt, func() { n, ok = m.TryMarkStartAt(t0.Add(at).UnixNano(), limit) })
				if wantOK := int64(len(model.inFlight)) < limit; ok != wantOK {
					rt.Fatalf("TryMarkStartAt with %d running and limit %d: ok %v", len(model.inFlight), limit, ok)
				}
				if ok {
					if want := model.start(at); n != want {
						rt.Fatalf("TryMarkStartAt returned %d, want %d", n, want)
					}
				}
			},
			"resetStream": func(rt *rapid.T) {
				m.ResetStream()
				model.resetStream()
			},
			"subscribe": func(rt *rapid.T) {
				model.subscribe(m, rapid.SampledFrom(streamKinds).Draw(rt, "stream"))
				model.checkStreams(rt)
			},
			"unsubscribe": func(rt *rapid.T) {
				if len(model.subs) == 0 {
					rt.Skip("nobody subscribes")
				}
				model.unsubscribe(rapid.IntRange(0, len(model.subs)-1).Draw(rt, "unsubscriber"))
			},
			"": func(rt *rapid.T) { model.check(rt, m.Snapshot()) },
		})
	})
}

// drawMetricsConfig draws windows of a few buckets each, widths from
// 10ms to 1s, health buckets that need not divide the rolling window,
// and sometimes a slow-call threshold or no latencies at all.
func drawMetricsConfig(rt *rapid.T) Config {
	widths := []time.Duration{10 * time.Millisecond, 100 * time.Millisecond, time.Second}
	rollingWidth := rapid.SampledFrom(widths).Draw(rt, "rollingWidth")
	buckets := rapid.IntRange(1, 8).Draw(rt, "buckets")
	window := time.Duration(buckets) * rollingWidth
	healthInterval := time.Duration(rapid.Int64Range(int64(window/16)/int64(time.Millisecond)+1, int64(window/time.Millisecond)).Draw(rt, "healthIntervalMs")) * time.Millisecond
	percentileBuckets := rapid.IntRange(1, 6).Draw(rt, "percentileBuckets")
	cfg := Config{
		RollingWindow:          window,
		Buckets:                buckets,
		HealthSnapshotInterval: healthInterval,
		PercentileWindow:       time.Duration(percentileBuckets) * rapid.SampledFrom(widths).Draw(rt, "percentileWidth"),
		PercentileBuckets:      percentileBuckets,
		PercentileDisabled:     rapid.IntRange(0, 9).Draw(rt, "percentileDisabled") == 0,
		SlowCallDuration:       rapid.SampledFrom([]time.Duration{0, 500 * time.Microsecond, time.Millisecond}).Draw(rt, "slowCall"),
	}
	if err := cfg.Validate(); err != nil {
		rt.Fatalf("drew an invalid config: %v", err)
	}
	return cfg
}

// metricsModel is what the metrics of one key have been told, and the
// rules of Hystrix's streams to read it by. Times are durations since
// the metrics were created.
type metricsModel struct {
	cfg      Config
	now      time.Duration
	resetAt  time.Duration // when the health buckets last started over
	records  []modelRecord
	starts   []modelStart
	inFlight []int64 // the ConcurrencyAtStart of each execution started and not ended

	// The subscribers of the timer-driven streams, and whether the
	// health stream's timer runs: it rests from a tick at which the
	// health window and the bucket in progress are empty until a
	// completion that counts for health (see model_streams_test.go).
	subs  []*streamSubscriber
	awake bool
}

type modelRecord struct {
	end         time.Duration
	events      EventCounts          // as recorded, possibly malformed
	counts      [NumEventTypes]int64 // as Hystrix counts them
	executed    bool
	exec, total time.Duration
	startedAt   int64 // ConcurrencyAtStart
	inHealth    bool  // recorded since the last ResetStream
}

type modelStart struct {
	at time.Duration
	n  int64
}

// completion is what a command would hand MarkCompletionAt for r.
func (r modelRecord) completion() Completion {
	return Completion{
		CommandKey:         "cmd",
		Events:             r.events,
		ExecutionLatency:   r.exec,
		TotalLatency:       r.total,
		Executed:           r.executed,
		ConcurrencyAtStart: r.startedAt,
	}
}

// window is the buckets of width w numbered from epoch, size of which
// make a rolling value.
type modelWindow struct {
	epoch, width time.Duration
	size         int64
}

func (m *metricsModel) rolling() modelWindow {
	return modelWindow{0, m.cfg.RollingWindow / time.Duration(m.cfg.Buckets), int64(m.cfg.Buckets)}
}

func (m *metricsModel) health() modelWindow {
	return modelWindow{m.resetAt, m.cfg.HealthSnapshotInterval, int64(m.cfg.RollingWindow / m.cfg.HealthSnapshotInterval)}
}

func (m *metricsModel) latency() modelWindow {
	return modelWindow{0, m.cfg.PercentileWindow / time.Duration(m.cfg.PercentileBuckets), int64(m.cfg.PercentileBuckets)}
}

// bucket is the bucket of t; times before the epoch are in bucket 0.
func (w modelWindow) bucket(t time.Duration) int64 {
	if t <= w.epoch {
		return 0
	}
	return int64((t - w.epoch) / w.width)
}

// holds reports whether a rolling value read at now counts what happened
// at t: t's bucket is one of the size closed buckets before now's.
func (w modelWindow) holds(now, t time.Duration) bool {
	b, current := w.bucket(t), w.bucket(now)
	return b < current && b >= current-w.size
}

// earliestKept is the earliest time whose bucket a rolling value read at
// now, or later, may still count: the first of the size buckets before
// now's. A recorder later than that is later than the metrics promise to
// place exactly.
func (w modelWindow) earliestKept(now time.Duration) time.Duration {
	b := w.bucket(now) - w.size
	if b <= 0 {
		return 0
	}
	return w.epoch + time.Duration(b)*w.width
}

// recordSomewhere calls f on this goroutine or, as rt draws, on another,
// maybe on another processor and so into another stripe, and returns
// once f has.
func recordSomewhere(rt *rapid.T, f func()) {
	if !rapid.Bool().Draw(rt, "elsewhere") {
		f()
		return
	}
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	<-done
}

// drawPast draws a time from the earliest every window still places
// exactly to now, most often now.
func (m *metricsModel) drawPast(rt *rapid.T, label string) time.Duration {
	return drawPast(rt, label, m.now, m.rolling(), m.health(), m.latency())
}

// drawPast draws a time from the earliest each of windows still places
// exactly to now, most often now.
func drawPast(rt *rapid.T, label string, now time.Duration, windows ...modelWindow) time.Duration {
	var earliest time.Duration
	for _, w := range windows {
		earliest = max(earliest, w.earliestKept(now))
	}
	if rapid.Bool().Draw(rt, label+"IsNow") {
		return now
	}
	return now - time.Duration(rapid.Int64Range(0, int64(now-earliest)).Draw(rt, label))
}

// drawAdvance draws a move of the clock: within a bucket, to a bucket
// boundary of some window, or by several windows.
func (m *metricsModel) drawAdvance(rt *rapid.T) time.Duration {
	return drawAdvance(rt, m.now, m.rolling(), m.health(), m.latency())
}

// drawAdvance draws a move of a clock reading now: within a bucket, to a
// bucket boundary of one of windows, or by several of its windows.
func drawAdvance(rt *rapid.T, now time.Duration, windows ...modelWindow) time.Duration {
	switch rapid.IntRange(0, 2).Draw(rt, "advanceKind") {
	case 0:
		return time.Duration(rapid.Int64Range(1, int64(time.Second)).Draw(rt, "advanceBy"))
	case 1:
		w := rapid.SampledFrom(windows).Draw(rt, "toBoundaryOf")
		next := w.epoch + time.Duration(w.bucket(now)+1)*w.width
		if now < w.epoch {
			next = w.epoch
		}
		return next - now + time.Duration(rapid.SampledFrom([]int64{-1, 0, 1}).Draw(rt, "nearBoundary"))
	default:
		w := rapid.SampledFrom(windows).Draw(rt, "byWindowsOf")
		return time.Duration(rapid.Int64Range(1, 3*w.size+2).Draw(rt, "buckets")) * w.width
	}
}

// drawRecord draws a completion: any events (some malformed, as a
// careless caller may send them), ended at now or a while ago, with
// latencies in whole microseconds below 2048µs (which the histograms keep
// exactly) or unknown, and maybe the end of an execution in flight.
func (m *metricsModel) drawRecord(rt *rapid.T) modelRecord {
	r := modelRecord{end: m.drawPast(rt, "endedAgo")}
	for e := range NumEventTypes {
		if rapid.IntRange(0, 3).Draw(rt, "has"+e.String()) == 0 {
			r.events[e] = rapid.Int32Range(-2, 4).Draw(rt, e.String())
		}
	}
	r.executed = rapid.Bool().Draw(rt, "executed")
	r.exec, r.total = -1, -1
	latency := func(label string) time.Duration {
		if rapid.IntRange(0, 9).Draw(rt, label+"Unknown") == 0 {
			return -1
		}
		return time.Duration(rapid.Int64Range(0, 2047).Draw(rt, label+"Micros")) * time.Microsecond
	}
	if r.executed {
		r.exec, r.total = latency("execution"), latency("total")
	}
	if len(m.inFlight) > 0 && rapid.Bool().Draw(rt, "endsAStart") {
		i := rapid.IntRange(0, len(m.inFlight)-1).Draw(rt, "whichStart")
		r.startedAt = m.inFlight[i]
		m.inFlight = slices.Delete(m.inFlight, i, i+1)
	}
	for e := range NumEventTypes {
		n := int64(r.events[e])
		switch {
		case n <= 0 || e == ExceptionThrown:
		case e == Emit || e == FallbackEmit || e == Collapsed:
			r.counts[e] = n
		default:
			r.counts[e] = 1
		}
	}
	return r
}

func (m *metricsModel) complete(r modelRecord) {
	r.inHealth = true
	m.records = append(m.records, r)
	if r.healthTotal() > 0 && m.subscribed(healthStream) {
		m.awake = true // for the next boundary of the health buckets
	}
}

// healthQuiet reports whether the health counts at now hold until
// something is recorded: no record since the latest reset counts for
// health in the window or in the bucket in progress.
func (m *metricsModel) healthQuiet(now time.Duration) bool {
	w := m.health()
	current := w.bucket(now)
	for _, r := range m.records {
		if b := w.bucket(r.end); r.inHealth && r.healthTotal() > 0 && b >= current-w.size && b <= current {
			return false
		}
	}
	return true
}

// start is an execution starting at at: it returns the executions now
// running, which is what MarkStartAt returns and what the rolling maximum
// of at's bucket is raised to.
func (m *metricsModel) start(at time.Duration) int64 {
	n := int64(len(m.inFlight)) + 1
	m.inFlight = append(m.inFlight, n)
	m.starts = append(m.starts, modelStart{at, n})
	return n
}

func (m *metricsModel) resetStream() {
	m.resetAt = m.now
	for i := range m.records {
		m.records[i].inHealth = false
	}
}

// The events whose counts make EXCEPTION_THROWN, and those that count in
// health, as Hystrix's HealthCounts.plus.
var (
	exceptionEvents   = []EventType{BadRequest, FallbackFailure, FallbackMissing, FallbackRejection}
	healthErrorEvents = []EventType{Failure, Timeout, PoolRejected, SemaphoreRejected}
)

// modelView is what the model says each rolling value is at an instant.
type modelView struct {
	health              HealthCounts
	rolling, cumulative EventTotals
	maxConcurrency      int64
	execs, totals       []time.Duration // the latencies of the percentile window
}

// viewAt is the model's rolling values at now.
func (m *metricsModel) viewAt(now time.Duration) modelView {
	rolling, latency := m.rolling(), m.latency()
	v := modelView{health: m.healthAt(now)}
	for _, r := range m.records {
		if rolling.bucket(r.end) < rolling.bucket(now) {
			addCounts(&v.cumulative, &r.counts)
		}
		if rolling.holds(now, r.end) {
			addCounts(&v.rolling, &r.counts)
		}
		if r.executed && !m.cfg.PercentileDisabled && latency.holds(now, r.end) {
			if r.exec >= 0 {
				v.execs = append(v.execs, r.exec)
			}
			if r.total >= 0 {
				v.totals = append(v.totals, r.total)
			}
		}
	}
	for _, s := range m.starts {
		if rolling.holds(now, s.at) {
			v.maxConcurrency = max(v.maxConcurrency, s.n)
		}
	}
	return v
}

// check compares a snapshot of the metrics with the model at now.
func (m *metricsModel) check(rt *rapid.T, got CommandSnapshot) {
	want := m.viewAt(m.now)
	if got.Rolling != want.rolling {
		rt.Fatalf("at %v: rolling counts %v, want %v", m.now, got.Rolling, want.rolling)
	}
	if got.Cumulative != want.cumulative {
		rt.Fatalf("at %v: cumulative counts %v, want %v", m.now, got.Cumulative, want.cumulative)
	}
	if got.Health != want.health {
		rt.Fatalf("at %v (health reset at %v): health %+v, want %+v", m.now, m.resetAt, got.Health, want.health)
	}
	if got.RollingMaxConcurrentExecutions != want.maxConcurrency {
		rt.Fatalf("at %v: rolling max concurrency %d, want %d", m.now, got.RollingMaxConcurrentExecutions, want.maxConcurrency)
	}
	if want := int64(len(m.inFlight)); got.ConcurrentExecutions != want {
		rt.Fatalf("at %v: %d executions in flight, want %d", m.now, got.ConcurrentExecutions, want)
	}
	checkLatencies(rt, fmt.Sprintf("at %v", m.now), got.Latency, want)
}

// checkLatencies compares both distributions of got with want's.
func checkLatencies(rt *rapid.T, where string, got Latencies, want modelView) {
	checkDistribution(rt, where+": execution latencies", got.Execution, want.execs)
	checkDistribution(rt, where+": total latencies", got.Total, want.totals)
}

// healthAt is the health counts at now: the records since the latest
// reset in the closed buckets of the health window.
func (m *metricsModel) healthAt(now time.Duration) HealthCounts {
	health := m.health()
	var total, errs, slow int64
	for _, r := range m.records {
		if r.inHealth && health.holds(now, r.end) {
			t := r.healthTotal()
			for _, e := range healthErrorEvents {
				errs += r.counts[e]
			}
			total += t
			if t > 0 && m.cfg.SlowCallDuration > 0 && r.exec >= m.cfg.SlowCallDuration {
				slow++
			}
		}
	}
	return HealthCountsOf(total, errs, slow)
}

// healthTotal is what r counts in HealthCounts.Total.
func (r *modelRecord) healthTotal() int64 {
	t := r.counts[Success]
	for _, e := range healthErrorEvents {
		t += r.counts[e]
	}
	return t
}

// addCounts adds counts to t, and their exception-producing events to its
// EXCEPTION_THROWN.
func addCounts(t *EventTotals, counts *[NumEventTypes]int64) {
	for e, n := range counts {
		t[e] += n
	}
	for _, e := range exceptionEvents {
		t[ExceptionThrown] += counts[e]
	}
}

// checkDistribution compares d, named name in a failure, with the values
// it should hold, all whole microseconds below 2048µs: count, mean, and
// the percentiles at HdrHistogram's ranks.
func checkDistribution(rt *rapid.T, name string, d Distribution, want []time.Duration) {
	if d.Count() != int64(len(want)) {
		rt.Fatalf("%s: %d, want %d", name, d.Count(), len(want))
	}
	if len(want) == 0 {
		if d.Mean() != 0 || d.Max() != 0 {
			rt.Fatalf("%s, empty: mean %v, max %v", name, d.Mean(), d.Max())
		}
		return
	}
	slices.Sort(want)
	var sum time.Duration
	for _, v := range want {
		sum += v
	}
	mean := time.Duration(math.Round(float64(sum) / float64(len(want))))
	if diff := d.Mean() - mean; diff < -1 || diff > 1 {
		rt.Fatalf("%s: mean %v, want %v", name, d.Mean(), mean)
	}
	for _, p := range []float64{0, 25, 50, 90, 99, 100} {
		if got, want := d.Percentile(p), percentileOf(want, p); got != want {
			rt.Fatalf("%s %v: p%v %v, want %v", name, want, p, got, want)
		}
	}
}

// percentileOf is the value at percentile p of sorted, which is not
// empty, at HdrHistogram's rank: p of the count, rounded, and at least
// the first.
func percentileOf(sorted []time.Duration, p float64) time.Duration {
	rank := min(max(int64(p/100*float64(len(sorted))+0.5), 1), int64(len(sorted)))
	return sorted[rank-1]
}
