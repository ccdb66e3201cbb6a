package command

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rxhystrix/rxhystrix/metricsstream"
)

// BacklogConfig lets an execution that finds every permit of its key
// taken wait for one, as the blocking limiters of Netflix
// concurrency-limits do (and, in FIFO order, resilience4j's bulkhead
// with a maxWaitDuration), where Hystrix's semaphore refuses it at once.
// The wait is on the goroutine that admits the execution (the caller's,
// under semaphore isolation), and it counts against the execution's
// timeout, which runs from its start.
//
// A permit given back goes to one waiting execution, chosen by Order;
// an execution arriving while others wait may still take a permit that is
// free when it comes, as it does in concurrency-limits. An execution
// that finds the backlog full, or whose wait ends first (Timeout, or the
// time its timeout leaves), is SEMAPHORE_REJECTED, as at the limit
// without a backlog; one whose context ends while it waits is CANCELLED.
// An execution that waited samples the adaptive limit (Config
// AdaptiveLimit) from when it took its permit, not from its start: the
// wait is the backlog's, not the downstream's.
type BacklogConfig struct {
	// Size is the number of executions that may wait at once; 0, the
	// default, lets none wait.
	Size int
	// Timeout bounds each wait; 0 leaves it bounded by the execution's
	// timeout and its context alone.
	Timeout time.Duration
	// Order is which waiting execution a permit given back goes to.
	Order BacklogOrder
}

// BacklogOrder is which waiting execution a permit given back goes to.
type BacklogOrder uint8

const (
	// LIFO gives it to the execution that has waited least, as
	// concurrency-limits' LifoBlockingLimiter does: under an overload
	// that lasts, the callers served are those likeliest still to want
	// their answer, and the oldest wait out their Timeout.
	LIFO BacklogOrder = iota
	// FIFO gives it to the execution that has waited longest.
	FIFO
)

// String returns "LIFO" or "FIFO".
func (o BacklogOrder) String() string {
	switch o {
	case LIFO:
		return "LIFO"
	case FIFO:
		return "FIFO"
	}
	return fmt.Sprintf("BacklogOrder(%d)", uint8(o))
}

func (c *Config) validateBacklog() error {
	b := c.Backlog
	switch {
	case b.Size < 0:
		return invalidConfig("command: Config.Backlog.Size: %d is negative", b.Size)
	case b.Timeout < 0:
		return invalidConfig("command: Config.Backlog.Timeout: %v is negative", b.Timeout)
	case b.Order > FIFO:
		return invalidConfig("command: Config.Backlog.Order: unknown value %d", uint8(b.Order))
	case b.Size == 0:
		return nil
	case c.Isolation != SemaphoreIsolation:
		return invalidConfig("command: Config.Backlog: need Isolation SemaphoreIsolation, not %v: a pool's runs wait in its queue (PoolConfig.MaxQueueSize)", c.Isolation)
	case len(c.Partitions) != 0:
		return invalidConfig("command: Config.Backlog: a key with Partitions has no backlog")
	}
	return nil
}

// backlog is a key's executions waiting for a permit (Config.Backlog).
//
// A waiter joins the backlog and then tries for a permit, and a permit is
// given back (the key's concurrency count lowered) before the backlog is
// looked at: whichever comes second sees the other, so no permit is given
// back unseen by a waiter that goes on waiting. A waiter woken takes the
// permit if it is still free, or joins again, in the place it first
// joined at. The waiters are a slice, in the order they first joined:
// the slow path alone touches it, and Size bounds it.
type backlog struct {
	waiting atomic.Int64 // len(waiters), read after each permit given back
	// What the waits came to, for the key's status (BacklogStatus):
	// the waits that took a permit and their time in sum, and the
	// executions refused as the backlog was full or their wait ran out.
	admitted, waitedNanos, full, expired atomic.Int64

	mu      sync.Mutex
	waiters []*permitWaiter // by joined
	joins   uint64          // the waiters that have joined
}

// permitWaiter is one execution waiting in a backlog.
type permitWaiter struct {
	woken  chan struct{} // one wake at most: it is sent to when taken out by wake
	joined uint64        // its place in the order of first joins, from 1
}

// join adds w unless size executions wait already; a waiter that joins
// again after a wake (w.joined set) keeps its place and always joins.
func (b *backlog) join(w *permitWaiter, size int) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if w.joined == 0 {
		if len(b.waiters) >= size {
			return false
		}
		b.joins++
		w.joined = b.joins
	}
	i, _ := slices.BinarySearchFunc(b.waiters, w.joined, func(v *permitWaiter, joined uint64) int {
		return cmp.Compare(v.joined, joined)
	})
	b.waiters = slices.Insert(b.waiters, i, w)
	b.waiting.Store(int64(len(b.waiters)))
	return true
}

// leave takes w out of the backlog. If a wake took it out already, the
// wake is passed on to the next waiter, since it may stand for a permit
// that w does not take.
func (b *backlog) leave(w *permitWaiter, order BacklogOrder) {
	b.mu.Lock()
	i := slices.Index(b.waiters, w)
	if i >= 0 {
		b.waiters = slices.Delete(b.waiters, i, i+1)
		b.waiting.Store(int64(len(b.waiters)))
	}
	b.mu.Unlock()
	if i < 0 {
		<-w.woken
		b.wake(order)
	}
}

// wake takes the next waiter by order out of the backlog and wakes it.
func (b *backlog) wake(order BacklogOrder) {
	b.mu.Lock()
	n := len(b.waiters)
	if n == 0 {
		b.mu.Unlock()
		return
	}
	var w *permitWaiter
	if order == FIFO {
		w = b.waiters[0]
		b.waiters = slices.Delete(b.waiters, 0, 1)
	} else {
		w = b.waiters[n-1]
		b.waiters[n-1] = nil
		b.waiters = b.waiters[:n-1]
	}
	b.waiting.Store(int64(n - 1))
	b.mu.Unlock()
	w.woken <- struct{}{}
}

// wakeAll wakes every waiter, to try again under a Config just stored.
// It wakes those waiting when it is called: each joins again if it finds
// no permit.
func (b *backlog) wakeAll() {
	if b.waiting.Load() == 0 {
		return
	}
	b.mu.Lock()
	all := b.waiters
	b.waiters = nil
	b.waiting.Store(0)
	b.mu.Unlock()
	for _, w := range all {
		w.woken <- struct{}{}
	}
}

// permitGivenBack wakes a waiter, if there is one, after an execution of
// the key gave its permit back.
func (k *keyState) permitGivenBack() {
	if k.backlog.waiting.Load() != 0 {
		k.backlog.wake(k.config.Load().Backlog.Order)
	}
}

// awaitPermit is acquire's wait in the key's backlog for an execution
// that found no permit: noFailure once it holds one, SemaphoreRejected
// if the backlog is full or the wait ends first, runCancelled if ctx or
// callerCtx ends while it waits.
func (e *execution) awaitPermit(ctx, callerCtx context.Context) FailureType {
	cfg := e.cfg.Backlog
	now := e.k.registry.now()
	e.waited = true // its end is read from the clock (see endTime)
	wait, bounded := cfg.Timeout, cfg.Timeout > 0
	if e.cfg.Timeout > 0 {
		left := time.Duration(e.start + int64(e.cfg.Timeout) - now)
		if !bounded || left < wait {
			wait, bounded = left, true
		}
	}
	if bounded && wait <= 0 {
		e.k.backlog.expired.Add(1) // no time left to wait
		return SemaphoreRejectedFailure
	}
	w := &permitWaiter{woken: make(chan struct{}, 1)}
	var expired <-chan time.Time
	if bounded {
		t := e.k.registry.clock.NewTimer(wait)
		defer t.Stop()
		expired = t.C()
	}
	b := &e.k.backlog
	joined := now
	for {
		if !b.join(w, cfg.Size) {
			b.full.Add(1)
			return SemaphoreRejectedFailure
		}
		if e.tookPermit(now, joined) {
			b.leave(w, cfg.Order)
			return noFailure
		}
		select {
		case <-w.woken:
			now = e.k.registry.now()
			if e.k.config.Load().Backlog.Size == 0 {
				// Configure took the backlog away: the waiter tries once
				// under the new permits, as an execution arriving now
				// would, and is refused if it finds none.
				if e.tookPermit(now, joined) {
					return noFailure
				}
				return SemaphoreRejectedFailure
			}
			continue
		case <-expired:
			b.leave(w, cfg.Order)
			b.expired.Add(1)
			return SemaphoreRejectedFailure
		case <-ctx.Done():
		case <-callerCtx.Done():
		}
		b.leave(w, cfg.Order)
		return runCancelled
	}
}

// tookPermit tries for a permit under the key's Config at now, for an
// execution that joined the backlog at joined, and counts the wait if it
// took one.
func (e *execution) tookPermit(now, joined int64) bool {
	n, ok := e.k.metrics.TryMarkStartAt(now, e.permitsUnder(e.k.config.Load()))
	if ok {
		e.concurrency, e.runStart = n, now
		e.k.backlog.admitted.Add(1)
		e.k.backlog.waitedNanos.Add(now - joined)
	}
	return ok
}

// status returns the backlog's BacklogStatus under cfg.
func (b *backlog) status(cfg BacklogConfig) metricsstream.BacklogStatus {
	return metricsstream.BacklogStatus{
		Size: cfg.Size, Timeout: cfg.Timeout, Order: cfg.Order.String(), Waiting: b.waiting.Load(),
		Admitted: b.admitted.Load(), WaitTime: time.Duration(b.waitedNanos.Load()),
		Full: b.full.Load(), Expired: b.expired.Load(),
	}
}
