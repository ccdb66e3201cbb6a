package command

import "sync/atomic"

// semaphore is Hystrix's TryableSemaphore: a non-blocking counter of
// permits whose limit can change while permits are held.
type semaphore struct {
	inUse atomic.Int64
	limit atomic.Int64
}

func newSemaphore(limit int) *semaphore {
	s := new(semaphore)
	s.limit.Store(int64(limit))
	return s
}

// tryAcquire takes a permit if one is free.
func (s *semaphore) tryAcquire() bool {
	if s.inUse.Add(1) > s.limit.Load() {
		s.inUse.Add(-1)
		return false
	}
	return true
}

// release returns a permit taken by tryAcquire.
func (s *semaphore) release() { s.inUse.Add(-1) }

// used reports how many permits are taken.
func (s *semaphore) used() int64 { return s.inUse.Load() }
