package metricsstream

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"pgregory.net/rapid"

	"github.com/rxhystrix/rxhystrix/observable"
)

// The timer-driven streams of CommandMetrics, as the model knows them.
type streamKind int

const (
	healthStream streamKind = iota
	rollingStream
	cumulativeStream
	latencyStream
	maxConcurrencyStream
)

var streamKinds = []streamKind{healthStream, rollingStream, cumulativeStream, latencyStream, maxConcurrencyStream}

func (k streamKind) String() string {
	return [...]string{"HealthStream", "RollingCountsStream", "CumulativeCountsStream", "LatencyStream", "MaxConcurrencyStream"}[k]
}

// window is the window whose bucket boundaries k ticks at.
func (k streamKind) window(m *metricsModel) modelWindow {
	switch k {
	case healthStream:
		return m.health()
	case latencyStream:
		return m.latency()
	}
	return m.rolling()
}

// streamSubscriber is a subscriber of one stream: the values it got, of
// which only the field of its kind is set, and the model's views at the
// instants the stream should have told it.
type streamSubscriber struct {
	kind streamKind
	sub  observable.Subscription
	mu   sync.Mutex
	got  []modelStreamValue
	want []modelView
	at   []time.Duration // when each want was due
}

// modelStreamValue is one value a subscriber got.
type modelStreamValue struct {
	health    HealthCounts
	counts    EventTotals
	max       int64
	latencies Latencies
}

func (s *streamSubscriber) got1(v modelStreamValue) {
	s.mu.Lock()
	s.got = append(s.got, v)
	s.mu.Unlock()
}

// subscribe subscribes to the stream of kind k: the subscriber gets the
// stream's value at once, and the health stream wakes unless it has
// nothing to count.
func (m *metricsModel) subscribe(metrics *CommandMetrics, k streamKind) {
	s := &streamSubscriber{kind: k}
	s.expect(m, m.now)
	ctx := context.Background()
	switch k {
	case healthStream:
		s.sub = metrics.HealthStream().SubscribeFunc(ctx, func(h HealthCounts) { s.got1(modelStreamValue{health: h}) }, nil, nil)
	case rollingStream:
		s.sub = metrics.RollingCountsStream().SubscribeFunc(ctx, func(t EventTotals) { s.got1(modelStreamValue{counts: t}) }, nil, nil)
	case cumulativeStream:
		s.sub = metrics.CumulativeCountsStream().SubscribeFunc(ctx, func(t EventTotals) { s.got1(modelStreamValue{counts: t}) }, nil, nil)
	case latencyStream:
		s.sub = metrics.LatencyStream().SubscribeFunc(ctx, func(l Latencies) { s.got1(modelStreamValue{latencies: l}) }, nil, nil)
	case maxConcurrencyStream:
		s.sub = metrics.MaxConcurrencyStream().SubscribeFunc(ctx, func(n int64) { s.got1(modelStreamValue{max: n}) }, nil, nil)
	}
	m.subs = append(m.subs, s)
	if k == healthStream && !m.awake {
		m.awake = !m.healthQuiet(m.now)
	}
}

// expect adds the model's view at now to what s should get.
func (s *streamSubscriber) expect(m *metricsModel, now time.Duration) {
	s.want = append(s.want, m.viewAt(now))
	s.at = append(s.at, now)
}

// subscribed reports whether anybody subscribes to the stream of kind k.
func (m *metricsModel) subscribed(k streamKind) bool {
	return slices.ContainsFunc(m.subs, func(s *streamSubscriber) bool { return s.kind == k })
}

func (m *metricsModel) unsubscribe(i int) {
	m.subs[i].sub.Unsubscribe()
	m.subs = slices.Delete(m.subs, i, i+1)
	if !m.subscribed(healthStream) {
		m.awake = false
	}
}

func (m *metricsModel) unsubscribeAll() {
	for len(m.subs) > 0 {
		m.unsubscribe(0)
	}
}

// ticking reports whether the stream of kind k runs its timer: somebody
// subscribes, and, for the health stream, it is not resting.
func (m *metricsModel) ticking(k streamKind) bool {
	return m.subscribed(k) && (k != healthStream || m.awake)
}

// nextTick returns the first boundary after now of the window of k.
func (m *metricsModel) nextTick(k streamKind) time.Duration {
	w := k.window(m)
	if m.now < w.epoch {
		return w.epoch
	}
	return w.epoch + time.Duration(w.bucket(m.now)+1)*w.width
}

// advance moves the model's clock by d, through every tick due on the
// way in the order they fall: at each, the streams ticking then deliver
// their value to each of their subscribers, and the health stream rests
// after a tick at which nothing is left to count.
func (m *metricsModel) advance(d time.Duration) {
	to := m.now + d
	for {
		next := to + 1
		for _, k := range streamKinds {
			if m.ticking(k) {
				next = min(next, m.nextTick(k))
			}
		}
		if next > to {
			break
		}
		var due []streamKind
		for _, k := range streamKinds {
			if m.ticking(k) && m.nextTick(k) == next {
				due = append(due, k)
			}
		}
		m.now = next
		for _, s := range m.subs {
			if slices.Contains(due, s.kind) {
				s.expect(m, m.now)
			}
		}
		if slices.Contains(due, healthStream) {
			m.awake = !m.healthQuiet(m.now)
		}
	}
	m.now = to
}

// checkStreams compares what each subscriber got with the model.
func (m *metricsModel) checkStreams(rt *rapid.T) {
	for i, s := range m.subs {
		s.mu.Lock()
		got := slices.Clone(s.got)
		s.mu.Unlock()
		if len(got) != len(s.want) {
			rt.Fatalf("at %v (health reset at %v): %v subscriber %d got %d values, want %d, due at %v",
				m.now, m.resetAt, s.kind, i, len(got), len(s.want), s.at)
		}
		for j, v := range got {
			want, where := s.want[j], fmt.Sprintf("%v subscriber %d, value %d (due at %v)", s.kind, i, j, s.at[j])
			switch s.kind {
			case healthStream:
				if v.health != want.health {
					rt.Fatalf("%s (health reset at %v): %+v, want %+v", where, m.resetAt, v.health, want.health)
				}
			case rollingStream:
				if v.counts != want.rolling {
					rt.Fatalf("%s: %v, want %v", where, v.counts, want.rolling)
				}
			case cumulativeStream:
				if v.counts != want.cumulative {
					rt.Fatalf("%s: %v, want %v", where, v.counts, want.cumulative)
				}
			case latencyStream:
				checkLatencies(rt, where, v.latencies, want)
			case maxConcurrencyStream:
				if v.max != want.maxConcurrency {
					rt.Fatalf("%s: %d, want %d", where, v.max, want.maxConcurrency)
				}
			}
		}
	}
}
