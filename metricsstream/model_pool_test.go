package metricsstream

import (
	"testing"
	"time"

	"pgregory.net/rapid"
)

// Commands started and finished at random times (now, or a while ago,
// within what the ring keeps), rejections, queue sizes and the clock
// moving by anything from a nanosecond to many windows give, at every
// instant, what a model of Hystrix's HystrixThreadPoolMetrics says: the
// rolling and cumulative executed and rejected counts of the closed
// buckets, the rolling maximum of the active count over the starts in
// those buckets, the active count, its highest ever, the queue size, and
// the executor's completed and total task counts, which count the bucket
// in progress too. The pool counts its active commands either through
// the metrics (MarkStart, MarkDone) or itself (CountActiveWith,
// MarkStartedAt, MarkExecutedAt), as rapid draws.
func TestPoolMetricsFollowTheModel(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		cfg := drawMetricsConfig(rt)
		r := NewRegistry(newManual())
		p := r.Pool("pool", cfg)
		mc := r.clock.(interface{ Advance(time.Duration) })
		model := &poolModel{rolling: modelWindow{0, p.Config().rollingBucket(), int64(p.Config().Buckets)}}
		selfCounted := rapid.Bool().Draw(rt, "poolCountsItself")
		if selfCounted {
			p.CountActiveWith(func() int64 { return model.active })
		}
		rt.Repeat(map[string]func(*rapid.T){
			"advance": func(rt *rapid.T) {
				d := drawAdvance(rt, model.now, model.rolling)
				mc.Advance(d)
				model.now += d
			},
			"start": func(rt *rapid.T) {
				at, onClock := model.drawTime(rt, "startedAgo")
				want := model.start(at)
				var n int64
				recordSomewhere(rt, func() {
					switch {
					case selfCounted:
						n = p.MarkStartedAt(t0.Add(at).UnixNano(), want)
					case onClock:
						n = p.MarkStart()
					default:
						n = p.MarkStartAt(t0.Add(at).UnixNano())
					}
				})
				if n != want {
					rt.Fatalf("a start at %v returned %d, want %d", at, n, want)
				}
			},
			"done": func(rt *rapid.T) {
				if model.active == 0 {
					rt.Skip("nothing runs")
				}
				at, onClock := model.drawTime(rt, "doneAgo")
				model.done(at)
				recordSomewhere(rt, func() {
					switch {
					case selfCounted:
						p.MarkExecutedAt(t0.Add(at).UnixNano())
					case onClock:
						p.MarkDone()
					default:
						p.MarkDoneAt(t0.Add(at).UnixNano())
					}
				})
			},
			"reject": func(rt *rapid.T) {
				recordSomewhere(rt, p.MarkRejected)
				model.rejected = append(model.rejected, model.now)
			},
			"queue": func(rt *rapid.T) {
				n := rapid.IntRange(0, 10).Draw(rt, "queueSize")
				p.SetQueueSize(n)
				model.queue = int64(n)
			},
			"": func(rt *rapid.T) { model.check(rt, p) },
		})
	})
}

// poolModel is what the metrics of one pool have been told, read by the
// rules of Hystrix's thread pool metrics. Times are durations since the
// metrics were created.
type poolModel struct {
	rolling            modelWindow
	now                time.Duration
	executed, rejected []time.Duration
	starts             []modelStart
	active, largest    int64
	queue              int64
}

// drawTime draws when something happened, from the earliest the rolling
// window still places exactly to now, and whether to record it with the
// call that reads the clock (onClock), which it then happened at now.
func (m *poolModel) drawTime(rt *rapid.T, label string) (at time.Duration, onClock bool) {
	if rapid.Bool().Draw(rt, label+"OnClock") {
		return m.now, true
	}
	return drawPast(rt, label, m.now, m.rolling), false
}

// start is a command starting at at: it returns the new active count.
func (m *poolModel) start(at time.Duration) int64 {
	m.active++
	m.largest = max(m.largest, m.active)
	m.starts = append(m.starts, modelStart{at, m.active})
	return m.active
}

// done is a command finishing at at (EXECUTED).
func (m *poolModel) done(at time.Duration) {
	m.active--
	m.executed = append(m.executed, at)
}

// check compares p's snapshot and readers with the model at now.
func (m *poolModel) check(rt *rapid.T, p *PoolMetrics) {
	var rolling, cumulative [NumPoolEventTypes]int64
	var maxActive int64
	count := func(e PoolEventType, times []time.Duration) {
		for _, at := range times {
			if m.rolling.bucket(at) < m.rolling.bucket(m.now) {
				cumulative[e]++
			}
			if m.rolling.holds(m.now, at) {
				rolling[e]++
			}
		}
	}
	count(PoolExecuted, m.executed)
	count(PoolRejection, m.rejected)
	for _, s := range m.starts {
		if m.rolling.holds(m.now, s.at) {
			maxActive = max(maxActive, s.n)
		}
	}
	completed := int64(len(m.executed))

	s := p.Snapshot()
	if !s.Time.Equal(t0.Add(m.now)) {
		rt.Fatalf("snapshot at %v, want %v", s.Time, t0.Add(m.now))
	}
	if s.Rolling != rolling || s.Cumulative != cumulative {
		rt.Fatalf("at %v: rolling %v, cumulative %v; want %v, %v", m.now, s.Rolling, s.Cumulative, rolling, cumulative)
	}
	if s.RollingMaxActive != maxActive {
		rt.Fatalf("at %v: rolling max active %d, want %d", m.now, s.RollingMaxActive, maxActive)
	}
	if s.ActiveCount != m.active || s.LargestActiveCount != m.largest || s.QueueSize != m.queue {
		rt.Fatalf("at %v: active %d, largest %d, queued %d; want %d, %d, %d",
			m.now, s.ActiveCount, s.LargestActiveCount, s.QueueSize, m.active, m.largest, m.queue)
	}
	if s.CompletedTaskCount != completed || s.TaskCount != completed+m.active+m.queue {
		rt.Fatalf("at %v: %d tasks completed of %d; want %d of %d",
			m.now, s.CompletedTaskCount, s.TaskCount, completed, completed+m.active+m.queue)
	}
	for e := range NumPoolEventTypes {
		if p.RollingCount(e) != rolling[e] || p.CumulativeCount(e) != cumulative[e] {
			rt.Fatalf("at %v: %v rolling %d, cumulative %d; want %d, %d", m.now, e, p.RollingCount(e), p.CumulativeCount(e), rolling[e], cumulative[e])
		}
	}
	if p.RollingMaxActive() != maxActive || p.ActiveCount() != m.active || p.LargestActiveCount() != m.largest || p.QueueSize() != m.queue {
		rt.Fatalf("at %v: the readers disagree with the snapshot %+v", m.now, s)
	}
}
