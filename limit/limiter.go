package limit

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/rxhystrix/rxhystrix/internal/proc"
	"github.com/rxhystrix/rxhystrix/internal/saturate"
)

// DefaultInitialLimit is the limit before the first sample of a Limiter
// made with neither an InitialLimit nor a starting point.
const DefaultInitialLimit = 20

// Sample is what one execution tells a limit.
type Sample struct {
	// RTT is the execution's round-trip time. A sample with no duration
	// measures nothing and is ignored.
	RTT time.Duration
	// InFlight is how many executions were in flight when it started,
	// itself included.
	InFlight int
	// Dropped says that it was dropped: it timed out.
	Dropped bool
}

// Limiter is an adaptive limit: [Limiter.Limit] is read on every
// admission, [Limiter.Record] updates it with a sample. It is safe for
// concurrent use; samples are applied one at a time, in the order their
// callers take its lock, and a sample that is not a drop is skipped when
// another is being applied at that moment, so that callers never queue
// on the limiter. Such a skip also tells the processor (the runtime's P)
// that recorded it that samples come from several processors at once:
// of its next [ContendedWindow] samples that are not drops, it applies
// one in [ContendedShare] and skips the others. Under contention the
// algorithm so sees every drop and a share of the other samples, each
// applied exactly as its formula says; samples recorded one after the
// other are all applied.
//
// Every admission reads the limit and every sample writes the estimate,
// so the two are on cache lines of their own, and the limit is written
// only when its integer part changes.
type Limiter struct {
	algorithm Algorithm
	limit     atomic.Int64 // the integer part of estimate

	_        [64]byte
	mu       sync.Mutex
	est      estimator
	estimate float64

	// contended counts, per processor, the samples left in its
	// contended window. Applying every sample, callers on two processors
	// took turns on the lock's cache line: a Vegas limit cost 1.22× a
	// fixed one with 75 callers, 1.08× with the windows; with one caller,
	// finding the window takes it from 1.09× to 1.12× (bench/peers
	// BenchmarkBudgets, rxhystrix-semaphore-vegas÷rxhystrix-semaphore).
	contended []windowCount
}

// Under contention a processor applies one in ContendedShare of the
// next ContendedWindow samples it records that are not drops.
const (
	ContendedWindow = 1024
	ContendedShare  = 8
)

// windowCount is one processor's count of samples left in its contended
// window, on a cache line of its own.
type windowCount struct {
	n atomic.Int32
	_ [60]byte
}

// New returns a Limiter running algorithm a. Its limit starts at a's
// InitialLimit or, when that is 0, at start (CoreSize, say) clamped into
// a's bounds, or at DefaultInitialLimit when start is not positive. It
// returns a's Validate error, if any.
func New(a Algorithm, start int) (*Limiter, error) {
	if err := a.Validate(); err != nil {
		return nil, err
	}
	est := a.estimator()
	initial := est.initial()
	if initial == 0 {
		initial = start
	}
	if initial <= 0 {
		initial = DefaultInitialLimit
	}
	return newAt(a, est, float64(initial)), nil
}

// Switch returns a Limiter running algorithm a that carries on from l:
// its limit starts at l's estimate clamped into a's bounds, whatever a's
// InitialLimit, so that a live change of algorithm, or of one of its
// parameters, does not throw away the limit l has learned. It returns a's
// Validate error, if any.
func (l *Limiter) Switch(a Algorithm) (*Limiter, error) {
	if err := a.Validate(); err != nil {
		return nil, err
	}
	return newAt(a, a.estimator(), l.Estimate()), nil
}

// newAt returns a Limiter running a, whose state is est, with its limit
// at estimate clamped into a's bounds.
func newAt(a Algorithm, est estimator, estimate float64) *Limiter {
	lo, hi := est.bounds()
	l := &Limiter{algorithm: a, est: est, contended: make([]windowCount, proc.Slots(64))}
	l.set(clamp(estimate, float64(lo), float64(hi)))
	return l
}

// Algorithm returns the configuration the Limiter was made with.
func (l *Limiter) Algorithm() Algorithm { return l.algorithm }

// Limit returns the current limit, at least 1.
func (l *Limiter) Limit() int { return int(l.limit.Load()) }

// Bounds returns the least and the greatest limit the algorithm allows.
func (l *Limiter) Bounds() (min, max int) { return l.est.bounds() }

// Record updates the limit with s as its algorithm's formula says, and
// returns the limit before and after.
func (l *Limiter) Record(s Sample) (before, after int) {
	if s.RTT <= 0 {
		before = int(l.limit.Load())
		return before, before
	}
	if s.Dropped {
		l.mu.Lock()
	} else if !l.tryLock() {
		before = int(l.limit.Load())
		return before, before
	}
	before = int(l.limit.Load())
	l.set(l.est.update(l.estimate, s))
	after = int(l.limit.Load())
	l.mu.Unlock()
	return before, after
}

// tryLock takes l.mu for a sample that is not a drop and reports true,
// or reports false if the sample is to be skipped: l.mu is taken, or the
// calling processor's contended window says so.
func (l *Limiter) tryLock() bool {
	w := &l.contended[proc.ID()&(len(l.contended)-1)]
	if n := w.n.Load(); n > 0 {
		w.n.Store(n - 1) // a hint: two goroutines of one processor may both store
		if n%ContendedShare != 0 {
			return false
		}
	}
	if !l.mu.TryLock() {
		w.n.Store(ContendedWindow)
		return false
	}
	return true
}

// Estimate returns the limit as the algorithm holds it, a real number
// of which Limit is the integer part.
func (l *Limiter) Estimate() float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.estimate
}

// set makes estimate the limit; l.mu is held or l is not shared yet.
func (l *Limiter) set(estimate float64) {
	l.estimate = estimate
	if n := int64(max(1, saturate.Int(estimate))); n != l.limit.Load() {
		l.limit.Store(n)
	}
}
