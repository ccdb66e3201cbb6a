package clock

import (
	"context"
	"sync"
	"time"
)

// Manual is a Clock that moves only when told to. Timers, tickers and
// AfterFunc callbacks fire synchronously inside Advance and Set, in the
// order of their due times (ties in the order they were scheduled), with
// Now reading each one's due time while it fires. Callbacks run without
// the clock's lock held, so they may use the clock.
//
// The zero value is not usable; call NewManual.
type Manual struct {
	mu      sync.Mutex
	cond    *sync.Cond
	now     time.Time
	seq     uint64
	waiters []*waiter
}

type waiter struct {
	clock  *Manual
	due    time.Time
	seq    uint64
	period time.Duration // > 0 for tickers
	ch     chan time.Time
	fn     func()
	active bool
}

// NewManual returns a Manual clock reading start.
func NewManual(start time.Time) *Manual {
	m := &Manual{now: start}
	m.cond = sync.NewCond(&m.mu)
	return m
}

// Now returns the clock's current time.
func (m *Manual) Now() time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.now
}

// Since returns m.Now().Sub(t).
func (m *Manual) Since(t time.Time) time.Duration { return m.Now().Sub(t) }

// AfterFunc schedules f to run on the advancing goroutine once d has
// elapsed.
func (m *Manual) AfterFunc(d time.Duration, f func()) Timer {
	if f == nil {
		panic("clock: AfterFunc with nil f")
	}
	return m.schedule(d, 0, nil, f)
}

// afterFuncAt is AfterFunc armed for the instant at (at the next move of
// the clock if it reads at already), under one hold of the lock.
func (m *Manual) afterFuncAt(at time.Time, f func()) Timer {
	if f == nil {
		panic("clock: AfterFunc with nil f")
	}
	w := &waiter{clock: m, fn: f}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.addAtLocked(w, at)
	return w
}

// NewTimer returns a timer whose channel (buffer 1) receives the time once
// d has elapsed.
func (m *Manual) NewTimer(d time.Duration) Timer {
	return m.schedule(d, 0, make(chan time.Time, 1), nil)
}

// NewTicker returns a ticker whose channel (buffer 1) receives the time
// every d; ticks a slow reader misses are dropped, as with time.Ticker.
func (m *Manual) NewTicker(d time.Duration) Ticker {
	if d <= 0 {
		panic("clock: NewTicker with non-positive interval")
	}
	return manualTicker{m.schedule(d, d, make(chan time.Time, 1), nil)}
}

// WithTimeout returns a context that is done, with Err
// context.DeadlineExceeded, once d has elapsed on m (or when parent is
// done, or cancel is called), as context.WithTimeout does on the real
// clock: contexts derived from it see the deadline as
// context.DeadlineExceeded too, and context.Cause reports it.
func (m *Manual) WithTimeout(parent context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	return newTimeoutContext(m, parent, d)
}

// Advance moves the clock forward by d, firing everything that falls due
// on the way, in time order. It never moves the clock back: when Advances
// run at once (one of them firing callbacks while another moves on), the
// clock ends at the furthest of their targets.
func (m *Manual) Advance(d time.Duration) {
	m.mu.Lock()
	target := m.now.Add(d)
	m.mu.Unlock()
	m.moveTo(target, true)
}

// Set moves the clock to t, firing everything due at or before t in time
// order. Setting a time before Now only changes Now.
func (m *Manual) Set(t time.Time) { m.moveTo(t, false) }

// moveTo is Set; forwardOnly leaves a clock already past t where it is.
func (m *Manual) moveTo(t time.Time, forwardOnly bool) {
	for {
		m.mu.Lock()
		w := m.nextDueLocked(t)
		if w == nil {
			if !forwardOnly || t.After(m.now) {
				m.now = t
			}
			m.mu.Unlock()
			return
		}
		if w.due.After(m.now) {
			m.now = w.due
		}
		now := m.now
		if w.period > 0 {
			w.due = w.due.Add(w.period)
			m.seq++
			w.seq = m.seq
		} else {
			m.removeLocked(w)
		}
		if w.fn == nil {
			// Sent under the lock, so that a Stop or Reset that
			// returns after this can take the value back.
			select {
			case w.ch <- now:
			default:
			}
			m.mu.Unlock()
			continue
		}
		m.mu.Unlock()
		w.fn()
	}
}

// Pending reports how many timers and tickers are scheduled.
func (m *Manual) Pending() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.waiters)
}

// BlockUntil waits until at least n timers and tickers are scheduled, or
// ctx is done. It lets a test wait for a goroutine to arm its timer
// before advancing the clock, without sleeping.
func (m *Manual) BlockUntil(ctx context.Context, n int) error {
	stop := context.AfterFunc(ctx, func() {
		m.mu.Lock()
		m.cond.Broadcast()
		m.mu.Unlock()
	})
	defer stop()
	m.mu.Lock()
	defer m.mu.Unlock()
	for len(m.waiters) < n {
		if err := ctx.Err(); err != nil {
			return err
		}
		m.cond.Wait()
	}
	return nil
}

func (m *Manual) nextDueLocked(t time.Time) *waiter {
	var next *waiter
	for _, w := range m.waiters {
		if w.due.After(t) {
			continue
		}
		if next == nil || w.due.Before(next.due) || (w.due.Equal(next.due) && w.seq < next.seq) {
			next = w
		}
	}
	return next
}

func (m *Manual) schedule(d, period time.Duration, ch chan time.Time, fn func()) *waiter {
	w := &waiter{clock: m, period: period, ch: ch, fn: fn}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.addLocked(w, d)
	return w
}

func (m *Manual) addLocked(w *waiter, d time.Duration) {
	m.addAtLocked(w, m.now.Add(max(d, 0)))
}

// addAtLocked arms w for at, or for now if the clock is past at. The due
// time is read as now plus a duration, as addLocked's, in the clock's
// location and with its monotonic reading, unless that duration cannot
// reach at (centuries ahead).
func (m *Manual) addAtLocked(w *waiter, at time.Time) {
	due := m.now
	if at.After(m.now) {
		if due = m.now.Add(at.Sub(m.now)); due.Before(at) {
			due = at
		}
	}
	m.seq++
	w.seq = m.seq
	w.due = due
	w.active = true
	m.waiters = append(m.waiters, w)
	m.cond.Broadcast()
}

func (m *Manual) removeLocked(w *waiter) bool {
	if !w.active {
		return false
	}
	w.active = false
	for i, x := range m.waiters {
		if x == w {
			m.waiters = append(m.waiters[:i], m.waiters[i+1:]...)
			break
		}
	}
	return true
}

func (w *waiter) C() <-chan time.Time { return w.ch }

// Stop stops the timer or ticker. As with package time since Go 1.23, no
// value sent before Stop is received after it: a value still waiting in
// the channel is taken back, and a timer whose value was never received
// counts as stopped.
func (w *waiter) Stop() bool {
	w.clock.mu.Lock()
	defer w.clock.mu.Unlock()
	stopped := w.clock.removeLocked(w)
	return w.takeBack() || stopped
}

// Reset re-arms the timer or ticker d from now; like Stop, it takes back a
// value still waiting in the channel.
func (w *waiter) Reset(d time.Duration) bool {
	w.clock.mu.Lock()
	defer w.clock.mu.Unlock()
	was := w.clock.removeLocked(w)
	was = w.takeBack() || was
	if w.period > 0 {
		w.period = d
	}
	w.clock.addLocked(w, d)
	return was
}

// ResetAt re-arms the timer to fire when the clock reads t, or at the
// next move of the clock if it reads t already; like Stop, it takes back a
// value still waiting in the channel.
func (w *waiter) ResetAt(t time.Time) bool {
	w.clock.mu.Lock()
	defer w.clock.mu.Unlock()
	was := w.clock.removeLocked(w)
	was = w.takeBack() || was
	w.clock.addAtLocked(w, t)
	return was
}

// takeBack empties the channel; it reports whether there was a value.
func (w *waiter) takeBack() bool {
	select {
	case <-w.ch:
		return true
	default:
		return false
	}
}

type manualTicker struct{ w *waiter }

func (t manualTicker) C() <-chan time.Time { return t.w.ch }
func (t manualTicker) Stop()               { t.w.Stop() }
func (t manualTicker) Reset(d time.Duration) {
	if d <= 0 {
		panic("clock: Ticker.Reset with non-positive interval")
	}
	t.w.Reset(d)
}
