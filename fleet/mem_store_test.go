package fleet

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/rxhystrix/rxhystrix/clock"
)

// memStore is a store in a map, with the semantics of redisStore's
// script, whose buckets expire on a manual clock. Tests make it fail or
// block.
type memStore struct {
	clk *clock.Manual

	mu      sync.Mutex
	buckets map[string]map[string]counts // bucket → instance → counts
	expires map[string]time.Time
	marks   map[string]time.Time // each instance's mark, by memMark, and when it expires
	ahead   time.Duration        // how far the store's clock runs ahead of clk
	fail    error                // when set, every exchange fails with it
	block   chan struct{}        // when set, exchanges wait for it to close or their deadline
	calls   int
}

func newMemStore(clk *clock.Manual) *memStore {
	return &memStore{clk: clk, buckets: map[string]map[string]counts{}, expires: map[string]time.Time{}, marks: map[string]time.Time{}}
}

func memMark(x *exchange) string {
	return fmt.Sprintf("%s:%v:mark:%s", x.key, x.interval, x.instance)
}

func memBucket(x *exchange, index int64) string {
	return fmt.Sprintf("%s:%v:%d", x.key, x.interval, index)
}

func (m *memStore) exchange(ctx context.Context, x exchange) (reading, error) {
	m.mu.Lock()
	m.calls++
	fail, block := m.fail, m.block
	m.mu.Unlock()
	if block != nil {
		select {
		case <-block:
		case <-ctx.Done():
			return reading{}, ctx.Err()
		}
	}
	if fail != nil {
		return reading{}, fail
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.expireLocked()
	_, marked := m.marks[memMark(&x)]
	lost := x.marked && !marked
	m.marks[memMark(&x)] = m.clk.Now().Add(x.markExpiry())
	for _, w := range x.writes {
		b := memBucket(&x, w.index)
		if m.buckets[b] == nil {
			m.buckets[b] = map[string]counts{}
		}
		if _, ok := m.buckets[b][x.instance]; !ok && w.again {
			lost = true
		}
		m.buckets[b][x.instance] = w.counts
		if at := m.clk.Now().Add(w.expiry); at.After(m.expires[b]) {
			m.expires[b] = at // a write only lengthens the expiry, as redisStore's
		}
	}
	r := reading{others: make([]counts, x.buckets), lost: lost}
	seen := map[string]bool{}
	for i := range r.others {
		for who, c := range m.buckets[memBucket(&x, x.from+int64(i))] {
			if who == x.instance {
				continue
			}
			r.others[i] = r.others[i].add(c)
			seen[who] = true
		}
	}
	r.instances = len(seen)
	r.storeTime = m.clk.Now().Add(m.ahead)
	return r, nil
}

func (m *memStore) expireLocked() {
	now := m.clk.Now()
	for b, at := range m.expires {
		if !now.Before(at) {
			delete(m.buckets, b)
			delete(m.expires, b)
		}
	}
	for b, at := range m.marks {
		if !now.Before(at) {
			delete(m.marks, b)
		}
	}
}

// writers returns the instances that hold a bucket that has not expired.
func (m *memStore) writers() map[string]bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.expireLocked()
	w := map[string]bool{}
	for _, b := range m.buckets {
		for who := range b {
			w[who] = true
		}
	}
	return w
}

func (m *memStore) setFail(err error) {
	m.mu.Lock()
	m.fail = err
	m.mu.Unlock()
}

func (m *memStore) setAhead(d time.Duration) {
	m.mu.Lock()
	m.ahead = d
	m.mu.Unlock()
}

func (m *memStore) setBlock(ch chan struct{}) {
	m.mu.Lock()
	m.block = ch
	m.mu.Unlock()
}
