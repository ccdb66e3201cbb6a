package metricsstream

import (
	"sort"
	"time"
)

// LatencyBucket is the latencies recorded in one closed bucket of a
// command's percentile window.
type LatencyBucket struct {
	// Start is when the bucket began. A bucket is Config.PercentileWindow /
	// Config.PercentileBuckets long, and buckets follow each other from the
	// creation of the metrics.
	Start time.Time
	Latencies
}

// LatencyBuckets returns the closed buckets of the percentile window that
// hold latencies, oldest first: the pieces [CommandMetrics.Latencies]
// merges. A bucket is returned for as long as it stays in the window, and
// only grows: a recorder that read the clock before the bucket closed
// can still add to it. So a reader that folds into a running total what
// each bucket (by its Start) gained since its last read sees every
// latency, provided it reads at least once per percentile window; the
// Prometheus collector builds its cumulative histograms that way.
func (m *CommandMetrics) LatencyBuckets() []LatencyBucket {
	return m.latency.closedBuckets(m.latency.bucketAt(m.clock.Now()))
}

// closedBuckets returns the non-empty closed buckets of the window at
// bucket now, oldest first.
func (r *latencyRing) closedBuckets(now int64) []LatencyBucket {
	var out []LatencyBucket
	// A slot recycled while it is read makes the reading start over, as
	// in distributions.
	for range 3 {
		out = out[:0]
		var held []heldSlot
		for n := max(now-int64(r.size), 0); n < now; n++ {
			var hs []*histogram
			hs, held = r.histogramsOf(n, nil, held)
			if len(hs) == 0 {
				continue
			}
			b := LatencyBucket{Start: r.epoch.Add(time.Duration(n) * r.width)}
			b.Execution, b.Total = merge(hs, execHalf), merge(hs, totalHalf)
			if b.Execution.Count() > 0 || b.Total.Count() > 0 {
				out = append(out, b)
			}
		}
		if unchanged(held) {
			break
		}
	}
	return out
}

// CountAtOrBelow returns how many latencies of the distribution are at most
// v, to the distribution's precision: a latency counts when it is
// equivalent to v or lower (3 significant digits), as HdrHistogram's
// getCountBetweenValues(0, v). It returns 0 for a negative v.
func (d Distribution) CountAtOrBelow(v time.Duration) int64 {
	if d.count == 0 || v < 0 {
		return 0
	}
	index := histIndex(int64(v / histUnit))
	i := sort.Search(len(d.bins), func(i int) bool { return int(d.bins[i].index) > index })
	if i == 0 {
		return 0
	}
	return d.bins[i-1].cumulative
}
