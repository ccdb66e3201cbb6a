package reading

import (
	"math"
	"time"

	"github.com/rxhystrix/rxhystrix/metricsstream"
)

// Folds are the cumulative latency histograms of the commands of a
// registry, for an exporter whose histograms count from the start of the
// process while metricsstream keeps latencies only over its percentile
// window: each collection adds the distribution of every closed
// percentile bucket not added yet.
//
// A collection is [Folds.Begin], [Folds.Add] for each command of the
// registry, then [Folds.End], which forgets the totals of the commands
// the collection did not see (metrics the registry evicted). Folds are
// not safe for concurrent use.
type Folds struct {
	bounds     []float64 // seconds, increasing
	commands   map[*metricsstream.CommandMetrics]*Fold
	generation uint64 // of the collection under way or last ended
}

// NewFolds returns empty Folds whose histograms count latencies at or
// below each of bounds, in seconds, increasing. It keeps bounds.
func NewFolds(bounds []float64) *Folds {
	return &Folds{bounds: bounds, commands: make(map[*metricsstream.CommandMetrics]*Fold)}
}

// Bounds returns the upper bounds of the histograms' buckets, in seconds.
// The caller must not change them.
func (f *Folds) Bounds() []float64 { return f.bounds }

// Len returns how many commands the Folds hold totals for.
func (f *Folds) Len() int { return len(f.commands) }

// Begin starts a collection.
func (f *Folds) Begin() { f.generation++ }

// Add adds to the totals of m its closed percentile buckets not added
// yet and returns them. The Fold is valid until the next Add of m.
func (f *Folds) Add(m *metricsstream.CommandMetrics) *Fold {
	c := f.commands[m]
	if c == nil {
		c = &Fold{
			Execution: Histogram{AtOrBelow: make([]uint64, len(f.bounds))},
			Total:     Histogram{AtOrBelow: make([]uint64, len(f.bounds))},
		}
		f.commands[m] = c
	}
	c.generation = f.generation
	c.add(m.LatencyBuckets(), f.bounds)
	return c
}

// End ends a collection, forgetting the totals of the commands it did
// not add.
func (f *Folds) End() {
	for m, c := range f.commands {
		if c.generation != f.generation {
			delete(f.commands, m)
		}
	}
}

// Fold is the running totals of one command's latency histograms: every
// closed percentile bucket added once.
type Fold struct {
	generation uint64    // of the last collection that added the command
	folded     bool      // whether last is set
	last       time.Time // Start of the newest bucket added

	// Execution counts how long the command's code ran, Total how long
	// its callers waited, for executions that ran.
	Execution, Total Histogram
}

// add adds the buckets newer than the last one added; buckets come oldest
// first.
func (f *Fold) add(buckets []metricsstream.LatencyBucket, bounds []float64) {
	for _, b := range buckets {
		if f.folded && !b.Start.After(f.last) {
			continue
		}
		f.Execution.add(b.Execution, bounds)
		f.Total.add(b.Total, bounds)
		f.folded, f.last = true, b.Start
	}
}

// Histogram is a cumulative histogram over fixed bounds, as Prometheus
// reads one.
type Histogram struct {
	Count     uint64
	Sum       float64  // seconds: each bucket's count times its mean, HdrHistogram's mean
	AtOrBelow []uint64 // latencies at or below each bound
}

func (h *Histogram) add(d metricsstream.Distribution, bounds []float64) {
	n := d.Count()
	if n == 0 {
		return
	}
	h.Count += uint64(n)
	h.Sum += float64(d.Mean()) * float64(n) / float64(time.Second)
	for i, b := range bounds {
		h.AtOrBelow[i] += uint64(d.CountAtOrBelow(Seconds(b)))
	}
}

// Seconds converts a bound in seconds to a Duration, rounded to the
// nanosecond, so that 0.3 is 300ms and not a nanosecond less; bounds past
// the range of a Duration are its maximum.
func Seconds(s float64) time.Duration {
	ns := math.Round(s * float64(time.Second))
	if ns >= math.MaxInt64 {
		return math.MaxInt64
	}
	return time.Duration(ns)
}
