package fleet

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/rxhystrix/rxhystrix/breaker"
	"github.com/rxhystrix/rxhystrix/clock"
	"github.com/rxhystrix/rxhystrix/command"
	"github.com/rxhystrix/rxhystrix/metricsstream"
)

// Instances of a fleet recording executions, their clocks moving within
// a bucket and across bucket boundaries (where each exchanges, in turn),
// the store failing and coming back, and breakers resetting their health
// at any moment, in a random order, send their breakers what a model of
// the fleet says: this instance's closed buckets of the window plus the
// others' buckets read at its latest exchange, only the buckets that
// began at its latest reset or later, this instance's own health when
// that trips and the fleet's does not or when the store failed; and the
// store holds each instance's buckets as it last wrote them, written
// again in full after a failed exchange, until they expire.
func TestSourcesFollowTheModel(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		m := newFleetModel(rt)
		defer m.close()
		rt.Repeat(map[string]func(*rapid.T){
			"record":      m.record,
			"advance":     m.advance,
			"tick":        m.tick,
			"storeFails":  m.storeFails,
			"resetStream": m.resetStream,
		})
	})
}

const modelInterval = 100 * time.Millisecond

var errStoreDown = errors.New("the store is down")

type fleetModel struct {
	rt        *rapid.T
	window    int // buckets
	breaker   breaker.Config
	store     *memStore
	storeClk  *clock.Manual
	exchanged chan *Source
	now       time.Duration // since epoch, on every clock

	instances []*modelInstance
	// buckets is the store: by fleet index, each instance's counts, and
	// when the bucket expires.
	buckets map[int64]map[int]counts
	expires map[int64]time.Duration
	failing bool
}

type modelInstance struct {
	name    string
	clk     *clock.Manual
	fleet   *Fleet
	source  *Source
	metrics *metricsstream.CommandMetrics

	local     map[int64]counts // this instance's buckets by fleet index
	rejoining bool             // the latest exchange failed
	others    []counts         // read at the latest exchange; nil after a failed one
	from      int64
	seen      int // other instances at the latest successful exchange
	resetAt   time.Duration
	reset     bool
	exchanges uint64
	failures  uint64
}

func newFleetModel(rt *rapid.T) *fleetModel {
	storeClk := clock.NewManual(epoch)
	m := &fleetModel{
		rt:        rt,
		window:    rapid.IntRange(2, 5).Draw(rt, "windowBuckets"),
		store:     newMemStore(storeClk),
		storeClk:  storeClk,
		exchanged: make(chan *Source, 16),
		buckets:   map[int64]map[int]counts{},
		expires:   map[int64]time.Duration{},
	}
	m.breaker = breaker.Config{
		RequestVolumeThreshold:   rapid.IntRange(1, 12).Draw(rt, "requestVolumeThreshold"),
		ErrorThresholdPercentage: rapid.IntRange(1, 100).Draw(rt, "errorThresholdPercentage"),
	}
	metricsCfg := metricsstream.Config{RollingWindow: time.Duration(m.window) * modelInterval, HealthSnapshotInterval: modelInterval}
	for i := range rapid.IntRange(2, 3).Draw(rt, "instances") {
		in := &modelInstance{name: fmt.Sprintf("instance-%d", i), clk: clock.NewManual(epoch), local: map[int64]counts{}}
		in.metrics = metricsstream.NewRegistry(in.clk).Command(key, metricsCfg)
		in.fleet = newFleet(Config{Instance: in.name, Keys: []string{key}}.withDefaults(), m.store)
		in.fleet.afterExchange = func(s *Source) { m.exchanged <- s }
		in.source = in.fleet.HealthSource(command.KeyHealth{
			Key: key, Metrics: in.metrics, Clock: in.clk,
			Breaker: func() breaker.Config { return m.breaker },
		}).(*Source)
		m.instances = append(m.instances, in)
	}
	return m
}

func (m *fleetModel) close() {
	for _, in := range m.instances {
		in.fleet.Close()
	}
}

// bucket is the fleet index of the bucket holding t.
func (m *fleetModel) bucket(t time.Duration) int64 {
	return bucketIndex(epoch.Add(t), modelInterval)
}

// start is the time, since epoch, at which bucket i begins.
func (m *fleetModel) start(i int64) time.Duration {
	return time.Unix(0, i*int64(modelInterval)).Sub(epoch)
}

func (m *fleetModel) record(rt *rapid.T) {
	in := rapid.SampledFrom(m.instances).Draw(rt, "instance")
	n := rapid.IntRange(1, 6).Draw(rt, "executions")
	failed := rapid.Bool().Draw(rt, "failed")
	event := metricsstream.Success
	if failed {
		event = metricsstream.Failure
	}
	for range n {
		var c metricsstream.Completion
		c.Events.Add(event, 1)
		in.metrics.MarkCompletion(&c)
	}
	c := counts{total: int64(n)}
	if failed {
		c.errors = int64(n)
	}
	b := m.bucket(m.now)
	in.local[b] = in.local[b].add(c)
}

// advance moves every clock on within the bucket in progress.
func (m *fleetModel) advance(rt *rapid.T) {
	room := m.start(m.bucket(m.now)+1) - m.now - 1
	if room < 1 {
		rt.Skip("at the end of a bucket")
	}
	d := time.Duration(rapid.Int64Range(1, int64(room)).Draw(rt, "advanceBy"))
	m.storeClk.Advance(d)
	for _, in := range m.instances {
		in.clk.Advance(d)
	}
	m.now += d
}

// tick moves every clock to the next bucket boundary, one instance after
// the other, each exchanging with the store as its clock gets there.
func (m *fleetModel) tick(rt *rapid.T) {
	next := m.start(m.bucket(m.now) + 1)
	m.storeClk.Advance(next - m.now)
	m.now = next
	for _, in := range m.instances {
		in.clk.Advance(next - in.clk.Now().Sub(epoch))
		select {
		case s := <-m.exchanged:
			if s != in.source {
				rt.Fatalf("%s exchanged, want %s", s.fleet.cfg.Instance, in.name)
			}
		case <-time.After(settle):
			rt.Fatalf("%s did not exchange at its tick", in.name)
		}
		m.exchange(in)
		m.check(rt, in, "after its exchange")
	}
}

// exchange is in's exchange at m.now, a bucket boundary.
func (m *fleetModel) exchange(in *modelInstance) {
	current := m.bucket(m.now)
	from := current - int64(m.window)
	if m.failing {
		in.failures++
		in.others, in.rejoining = nil, true
		return
	}
	for b, at := range m.expires {
		if m.now >= at {
			delete(m.buckets, b)
			delete(m.expires, b)
		}
	}
	for b, c := range in.local { // every closed bucket of the window, each time
		if b < from || b >= current || c.total == 0 {
			continue
		}
		if m.buckets[b] == nil {
			m.buckets[b] = map[int]counts{}
		}
		m.buckets[b][m.index(in)] = c
		// Until two intervals after it leaves the window: m.now is the
		// start of the current bucket.
		m.expires[b] = m.now + time.Duration(b+int64(m.window)+3-current)*modelInterval
	}
	others := make([]counts, m.window+1)
	seen := map[int]bool{}
	for j := range others {
		for who, c := range m.buckets[from+int64(j)] {
			if who != m.index(in) {
				others[j] = others[j].add(c)
				seen[who] = true
			}
		}
	}
	in.seen = len(seen)
	in.exchanges++
	if in.rejoining { // the first success after a failure writes, and judges alone
		in.rejoining = false
		return
	}
	in.others, in.from = others, from
}

func (m *fleetModel) index(in *modelInstance) int {
	for i, x := range m.instances {
		if x == in {
			return i
		}
	}
	panic("not an instance of the fleet")
}

func (m *fleetModel) storeFails(rt *rapid.T) {
	m.failing = !m.failing
	if m.failing {
		m.store.setFail(errStoreDown)
	} else {
		m.store.setFail(nil)
	}
}

func (m *fleetModel) resetStream(rt *rapid.T) {
	in := rapid.SampledFrom(m.instances).Draw(rt, "instance")
	in.source.ResetStream()
	in.resetAt, in.reset = m.now, true
	m.check(rt, in, "after its reset")
}

// counts reports whether in counts a bucket that began at start.
func (in *modelInstance) counts(start time.Duration) bool { return !in.reset || start >= in.resetAt }

// health is what in's breaker should have been sent last.
func (m *fleetModel) health(in *modelInstance) metricsstream.HealthCounts {
	current := m.bucket(m.now)
	var local counts
	for b, c := range in.local {
		if b >= current-int64(m.window) && b < current && in.counts(m.start(b)) {
			local = local.add(c)
		}
	}
	own := metricsstream.HealthCountsOf(local.total, local.errors, local.slow)
	if in.others == nil {
		return own
	}
	sum := local
	for j, c := range in.others {
		if in.counts(m.start(in.from + int64(j))) {
			sum = sum.add(c)
		}
	}
	fleet := metricsstream.HealthCountsOf(sum.total, sum.errors, sum.slow)
	if !m.breaker.Trips(fleet) && m.breaker.Trips(own) {
		return own
	}
	return fleet
}

func (m *fleetModel) check(rt *rapid.T, in *modelInstance, when string) {
	st := in.source.Stats()
	want := Stats{
		Exchanges: in.exchanges,
		Failures:  in.failures,
		Fallback:  in.others == nil,
		Instances: in.seen,
		Health:    m.health(in),
	}
	st.LastError = nil
	if st != want {
		rt.Fatalf("%s at %v, %s:\n got %+v\nwant %+v", in.name, m.now, when, st, want)
	}
}
