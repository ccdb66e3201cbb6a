package rolling

import (
	"math"
	"slices"
	"sync"
	"time"
)

// timingWindow is how long a Timing keeps a duration.
const timingWindow = 60 * time.Second

// Timing keeps the durations added in the last 60 seconds, for
// percentiles and the mean, as hystrix-go's rolling.Timing. A Timing is
// safe for concurrent use.
type Timing struct {
	mu      sync.Mutex
	now     func() time.Time
	entries []timed
}

type timed struct {
	at time.Time
	d  time.Duration
}

// NewTiming returns an empty Timing on the real clock.
func NewTiming() *Timing { return &Timing{now: time.Now} }

// Add records duration at the current time.
func (r *Timing) Add(duration time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	r.dropOldLocked(now)
	r.entries = append(r.entries, timed{now, duration})
}

func (r *Timing) dropOldLocked(now time.Time) {
	cut := 0
	for cut < len(r.entries) && now.Sub(r.entries[cut].at) >= timingWindow {
		cut++
	}
	r.entries = r.entries[cut:]
}

// SortedDurations returns the durations of the last 60 seconds, shortest
// first.
func (r *Timing) SortedDurations() []time.Duration {
	r.mu.Lock()
	r.dropOldLocked(r.now())
	ds := make([]time.Duration, len(r.entries))
	for i, e := range r.entries {
		ds[i] = e.d
	}
	r.mu.Unlock()
	slices.Sort(ds)
	return ds
}

// Percentile returns the p-th percentile (0 to 100) of the durations of
// the last 60 seconds by nearest rank, in whole milliseconds; 0 when
// there are none.
func (r *Timing) Percentile(p float64) uint32 {
	ds := r.SortedDurations()
	if len(ds) == 0 {
		return 0
	}
	rank := int(math.Ceil(p / 100 * float64(len(ds))))
	rank = min(max(rank, 1), len(ds))
	return uint32(ds[rank-1].Milliseconds())
}

// Mean returns the mean of the durations of the last 60 seconds in whole
// milliseconds; 0 when there are none.
func (r *Timing) Mean() uint32 {
	ds := r.SortedDurations()
	if len(ds) == 0 {
		return 0
	}
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	return uint32((sum / time.Duration(len(ds))).Milliseconds())
}
