package fleet

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rxhystrix/rxhystrix/breaker"
	"github.com/rxhystrix/rxhystrix/clock"
	"github.com/rxhystrix/rxhystrix/metricsstream"
	"github.com/rxhystrix/rxhystrix/observable"
)

// Source is the health source of one command key that opted in to the
// fleet: a breaker.HealthSource that adds the other instances' health,
// read from Redis, to this instance's. It owns one goroutine, which every
// health snapshot interval writes this instance's newly closed buckets,
// reads the others' and sends the breaker the result; nothing else of
// the command waits for it. [Fleet.Close] stops it.
type Source struct {
	fleet    *Fleet
	key      string
	local    *metricsstream.CommandMetrics
	breaker  func() breaker.Config
	clock    clock.Clock
	interval time.Duration
	window   int // the health buckets of the rolling window

	health *observable.Subject[metricsstream.HealthCounts]
	stop   chan struct{}
	done   chan struct{}

	// written holds the buckets the latest successful exchange wrote,
	// which the store holds until they leave the window: the next
	// exchange marks their writes again, to learn whether the store lost
	// them. It is nil before the first successful exchange and after a
	// failed one: otherwise the store holds this instance's mark too
	// (see exchange.marked). Only the run goroutine uses it.
	written map[int64]bool

	mu sync.Mutex // serializes views and what is sent to the breaker
	// rejoining: the latest exchange failed, so the next one writes and
	// does not read yet (see exchange).
	rejoining bool
	resetAt   time.Time // the latest ResetStream (see view)
	others    []counts  // from the latest exchange; nil after a failed one
	from      int64

	exchanges atomic.Uint64
	failures  atomic.Uint64
	fallback  atomic.Bool
	instances atomic.Int64
	corrupt   atomic.Int64
	clockSkew atomic.Int64 // nanoseconds, of the latest successful exchange
	roundTrip atomic.Int64 // nanoseconds, of the latest successful exchange
	lastError atomic.Pointer[error]
	sent      atomic.Pointer[metricsstream.HealthCounts]
}

var _ breaker.HealthSource = (*Source)(nil)

func newSource(f *Fleet, key string, local *metricsstream.CommandMetrics, cfg func() breaker.Config, c clock.Clock) *Source {
	mc := local.Config()
	s := &Source{
		fleet:    f,
		key:      key,
		local:    local,
		breaker:  cfg,
		clock:    c,
		interval: mc.HealthSnapshotInterval,
		window:   max(int(mc.RollingWindow/mc.HealthSnapshotInterval), 1),
		health:   observable.NewBehaviorSubject(metricsstream.HealthCounts{}),
		stop:     make(chan struct{}),
		done:     make(chan struct{}),
	}
	s.fallback.Store(true) // until the first exchange succeeds
	ticker := c.NewTicker(s.interval)
	go s.run(ticker)
	return s
}

// Key returns the command key.
func (s *Source) Key() string { return s.key }

// HealthStream returns the stream of health snapshots the breaker trips
// on: at subscription the latest one, then one per health snapshot
// interval, after each exchange with Redis. See [Source] and the package
// doc for what a snapshot counts.
func (s *Source) HealthStream() observable.Observable[metricsstream.HealthCounts] {
	return s.health.Observable()
}

// ResetStream starts health over for this instance's breaker: from now
// on, its snapshots count only buckets, its own and the fleet's, that
// began at the reset or later. The other instances' buckets in Redis are
// not touched (they are theirs), nor is this instance's metrics' own
// health window, which this instance keeps publishing from; see the
// package doc.
func (s *Source) ResetStream() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.resetAt = s.clock.Now()
	s.sendLocked()
}

// run exchanges with Redis on every tick until Close.
func (s *Source) run(ticker clock.Ticker) {
	defer close(s.done)
	defer ticker.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-ticker.C():
		}
		s.exchange()
	}
}

// exchange writes this instance's closed buckets of the window, reads the
// other instances' buckets of the window and sends the breaker the new
// view.
//
// Every bucket of the window is written each time, not only those that
// closed since: a Redis that restarted empty, failed over to a replica
// behind, or evicted a bucket between two exchanges that both succeed
// learns them again at the next, where a write of the new ones alone
// would leave the fleet's sum short for a window, unseen. It is a few
// HSETs more in the one script call.
//
// The first exchange that succeeds after a failed one writes, and reads
// nothing yet: the instances that exchange later in the interval may not
// have written their windows again either, and a sum of some of them (a
// bad instance's window, say, and none of the healthy ones') could trip
// the breaker on one bad instance. The breaker judges on this instance's
// health for that one more interval. So does it after an exchange that
// finds this instance's buckets of the latest exchange gone from the
// store: it lost every instance's, and they are being written again.
func (s *Source) exchange() {
	now := s.clock.Now()
	current := bucketIndex(now, s.interval)
	// The window's closed buckets, and the current one, which instances
	// whose clocks run up to one bucket ahead have closed already.
	from := current - int64(s.window)
	x := exchange{
		key:      s.key,
		instance: s.fleet.cfg.Instance,
		interval: s.interval,
		from:     from,
		buckets:  s.window + 1,
		marked:   s.written != nil, // the latest exchange succeeded
	}
	for _, b := range s.local.HealthBuckets(nil) {
		i := bucketIndex(b.Start, s.interval)
		if i < from || i > current {
			continue
		}
		x.writes = append(x.writes, bucketWrite{index: i, counts: counts{b.Total, b.Errors, b.Slow}, expiry: s.expiry(i, now), again: s.written[i]})
	}
	// The breaker's next snapshot waits for the exchange: one that could
	// outlast the interval would leave it on one snapshot per Timeout
	// while Redis hangs.
	ctx, cancel := context.WithTimeout(context.Background(), min(s.fleet.cfg.Timeout, s.interval))
	r, err := s.fleet.store.exchange(ctx, x)
	cancel()
	if err == nil {
		s.measureClock(now, s.clock.Now(), r.storeTime)
		s.written = make(map[int64]bool, len(x.writes))
		for _, w := range x.writes {
			s.written[w.index] = true
		}
	} else {
		s.written = nil // the store may or may not hold them: the next exchange rejoins
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case err != nil:
		s.failures.Add(1)
		s.lastError.Store(&err)
		s.fallback.Store(true)
		s.others = nil
		s.rejoining = true
	case s.rejoining || r.lost:
		// The store lost buckets since the latest exchange, of this
		// instance and surely of others, which write theirs again later
		// in the interval: as after a failed exchange, judge alone for
		// this one.
		s.exchanges.Add(1)
		s.instances.Store(int64(r.instances))
		s.corrupt.Store(int64(r.corrupt))
		s.fallback.Store(true)
		s.others = nil
		s.rejoining = false // and the fallback stays, for this interval
	default:
		s.exchanges.Add(1)
		s.fallback.Store(false)
		s.instances.Store(int64(r.instances))
		s.corrupt.Store(int64(r.corrupt))
		s.others, s.from = r.others, from
	}
	s.sendLocked()
	if h := s.fleet.afterExchange; h != nil {
		h(s)
	}
}

// measureClock records the round trip of an exchange sent at sent and
// answered at back, and how far this instance's clock was ahead of the
// store's, which read storeTime in between: taken at the middle of the
// round trip, it is off by half the round trip at most, as NTP's offset
// is.
func (s *Source) measureClock(sent, back, storeTime time.Time) {
	rtt := back.Sub(sent)
	s.roundTrip.Store(int64(rtt))
	s.clockSkew.Store(int64(sent.Add(rtt / 2).Sub(storeTime)))
}

// expiry is how long after now bucket i is to live: until two intervals
// after it leaves the window of a reader whose clock is this one's, so
// that readers up to a bucket behind still find it. A bucket written
// again is given the same end, however often it is written.
func (s *Source) expiry(i int64, now time.Time) time.Duration {
	end := (i + int64(s.window) + 3) * int64(s.interval)
	return max(time.Duration(end-now.UnixNano()), time.Millisecond)
}

// sendLocked sends the breaker the snapshot of the current view.
func (s *Source) sendLocked() {
	v := view{
		local:    s.local.HealthBuckets(nil),
		others:   s.others,
		from:     s.from,
		interval: s.interval,
		resetAt:  s.resetAt,
	}
	cfg := s.breaker()
	hc := v.health(cfg.Trips)
	s.sent.Store(&hc)
	s.health.OnNext(hc)
}

// close stops the source's goroutine and waits for it.
func (s *Source) close() {
	close(s.stop)
	<-s.done
	s.health.OnCompleted()
}

// Stats is what a Source has seen of Redis.
type Stats struct {
	// Exchanges and Failures count the exchanges with Redis that
	// succeeded and that failed (an error or the timeout).
	Exchanges, Failures uint64
	// Fallback is true while the breaker judges on this instance's health
	// alone: before the first exchange, after a failed one, and after
	// one that found the store had lost this instance's buckets.
	Fallback bool
	// Instances is how many other instances the latest successful
	// exchange found health from in the window.
	Instances int
	// Corrupt is how many values of other instances the latest
	// successful exchange found in the window and left out of the sum:
	// not three counts, or more errors or slow calls than executions
	// (another writer's format, a stray HSET).
	Corrupt int
	// ClockSkew is how far this instance's clock, the one that names its
	// buckets (see the package doc), ran ahead of Redis's at the latest
	// successful exchange; negative when it ran behind. It is Redis's
	// TIME against the middle of the exchange, so it is right within
	// half of RoundTrip. Two instances' clocks are apart by the
	// difference of their ClockSkews; the fleet's sum holds while those
	// stay well within a health snapshot interval. Zero before the first
	// successful exchange.
	ClockSkew time.Duration
	// RoundTrip is how long the latest successful exchange took, by this
	// instance's clock.
	RoundTrip time.Duration
	// LastError is the error of the latest failed exchange, nil if none
	// failed.
	LastError error
	// Health is the snapshot the breaker was last sent.
	Health metricsstream.HealthCounts
}

// Stats returns the source's counts.
func (s *Source) Stats() Stats {
	st := Stats{
		Exchanges: s.exchanges.Load(),
		Failures:  s.failures.Load(),
		Fallback:  s.fallback.Load(),
		Instances: int(s.instances.Load()),
		Corrupt:   int(s.corrupt.Load()),
		ClockSkew: time.Duration(s.clockSkew.Load()),
		RoundTrip: time.Duration(s.roundTrip.Load()),
	}
	if e := s.lastError.Load(); e != nil {
		st.LastError = *e
	}
	if hc := s.sent.Load(); hc != nil {
		st.Health = *hc
	}
	return st
}
