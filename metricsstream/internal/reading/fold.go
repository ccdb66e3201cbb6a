package reading

import (
	"math"
	"time"

	"github.com/rxhystrix/rxhystrix/internal/saturate"
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
// no collection saw for a percentile window (metrics the registry
// evicted). Evicted metrics that are used again come back to the
// registry, the same metrics: until every bucket folded of them has left
// their window, their totals are kept, so that they go on from where
// they were rather than count those buckets again. Folds are not safe
// for concurrent use.
type Folds struct {
	bounds     []float64 // seconds, increasing
	commands   map[*metricsstream.CommandMetrics]*Fold
	generation uint64    // of the collection under way or last ended
	now        time.Time // of the collection under way or last ended, the registry's time
	before     time.Time // of the collection before now's, zero if none
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

// Begin starts a collection at now, the registry's time.
func (f *Folds) Begin(now time.Time) {
	f.generation++
	f.before, f.now = f.now, now
}

// Add adds to the totals of m its closed percentile buckets not added
// yet and returns them. The Fold is valid until the next Add of m.
func (f *Folds) Add(m *metricsstream.CommandMetrics) *Fold {
	c := f.commands[m]
	if c == nil {
		c = &Fold{
			Since:     f.before,
			Execution: Histogram{AtOrBelow: make([]uint64, len(f.bounds))},
			Total:     Histogram{AtOrBelow: make([]uint64, len(f.bounds))},
		}
		f.commands[m] = c
	}
	c.generation = f.generation
	c.add(m.LatencyBuckets(), f.bounds)
	c.keepUntil = time.Time{}
	if n := len(c.folded); n > 0 {
		cfg := m.Config()
		c.keepUntil = c.folded[n-1].start.Add(cfg.PercentileWindow + cfg.PercentileWindow/time.Duration(cfg.PercentileBuckets))
	}
	return c
}

// End ends a collection, forgetting the totals of the commands it did
// not add and no collection added for a percentile window: every bucket
// folded of them has left the window, so metrics that come back start
// over from buckets none of which was counted.
func (f *Folds) End() {
	for m, c := range f.commands {
		if c.generation != f.generation && !f.now.Before(c.keepUntil) {
			delete(f.commands, m)
		}
	}
}

// Fold is the running totals of one command's latency histograms: every
// closed percentile bucket added once.
//
// A closed bucket can still grow: a recorder that read the clock before
// the bucket closed records into it afterwards (metricsstream's late
// recorders). So the Fold remembers what it added of each bucket still in
// the window, and adds what such a bucket gained since.
type Fold struct {
	// Since is when the totals began: the time of the collection before
	// the one that made the Fold, which had not seen its metrics (new,
	// or back after the Folds forgot them); zero for a Fold made by the
	// first collection. An exporter whose points carry a start time
	// gives a Fold made again a new one, as a reset.
	Since time.Time

	generation uint64 // of the last collection that added the command
	// keepUntil is when the newest bucket it folded has left the
	// command's percentile window (zero when it folded none): the Fold
	// is kept until then, see Folds.
	keepUntil time.Time
	// folded is what was added of each bucket of the last collection,
	// oldest first.
	folded []foldedBucket

	// Execution counts how long the command's code ran, Total how long
	// its callers waited, for executions that ran.
	Execution, Total Histogram
}

// foldedBucket is what a Fold added of one closed percentile bucket.
type foldedBucket struct {
	start            time.Time
	execution, total part
}

// part is what one distribution added to a Histogram.
type part struct {
	count     uint64
	sum       float64
	atOrBelow []uint64
}

// add adds what the buckets (oldest first) hold that was not added yet:
// the buckets newer than those of the last collection, and what those
// gained since.
func (f *Fold) add(buckets []metricsstream.LatencyBucket, bounds []float64) {
	next := make([]foldedBucket, 0, len(buckets))
	j := 0
	for _, b := range buckets {
		for j < len(f.folded) && f.folded[j].start.Before(b.Start) {
			j++
		}
		// A bucket not added before held nothing then (the empty ones
		// are not returned), or is new: all it holds is to add.
		var wasExecution, wasTotal *part
		if j < len(f.folded) && f.folded[j].start.Equal(b.Start) {
			wasExecution, wasTotal = &f.folded[j].execution, &f.folded[j].total
		}
		next = append(next, foldedBucket{
			start:     b.Start,
			execution: f.Execution.add(b.Execution, wasExecution, bounds),
			total:     f.Total.add(b.Total, wasTotal, bounds),
		})
	}
	f.folded = next
}

// Histogram is a cumulative histogram over fixed bounds, as Prometheus
// reads one.
type Histogram struct {
	Count     uint64
	Sum       float64  // seconds: each bucket's count times its mean, HdrHistogram's mean
	AtOrBelow []uint64 // latencies at or below each bound
}

// add adds to h what d holds beyond was (what h was given of d's bucket
// before, nil for nothing) and returns what h has now been given of it.
func (h *Histogram) add(d metricsstream.Distribution, was *part, bounds []float64) part {
	n := uint64(d.Count())
	if was != nil && n <= was.count {
		return *was // a bucket only grows: nothing new
	}
	p := part{count: n, atOrBelow: make([]uint64, len(bounds))}
	if n > 0 {
		p.sum = float64(d.Mean()) * float64(n) / float64(time.Second)
		for i, b := range bounds {
			p.atOrBelow[i] = uint64(d.CountAtOrBelow(Seconds(b)))
		}
	}
	var prev part
	if was != nil {
		prev = *was
		// The bucket's mean, rounded to the nanosecond, times its count
		// can come out below what it was before a late recorder added a
		// latency too short to show (a sub-microsecond one): the sum, a
		// counter to Prometheus, must not fall.
		p.sum = max(p.sum, prev.sum)
	}
	h.Count += p.count - prev.count
	h.Sum += p.sum - prev.sum
	for i := range bounds {
		if prev.atOrBelow == nil {
			h.AtOrBelow[i] += p.atOrBelow[i]
		} else if p.atOrBelow[i] > prev.atOrBelow[i] {
			h.AtOrBelow[i] += p.atOrBelow[i] - prev.atOrBelow[i]
		}
	}
	return p
}

// Seconds converts a bound in seconds to a Duration, rounded to the
// nanosecond, so that 0.3 is 300ms and not a nanosecond less; bounds past
// the range of a Duration are its maximum.
func Seconds(s float64) time.Duration {
	return time.Duration(saturate.Int64(math.Round(s * float64(time.Second))))
}
