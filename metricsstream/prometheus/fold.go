package prometheus

import (
	"math"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rxhystrix/rxhystrix/metricsstream"
)

// latencyFold is the running totals of one command's latency histograms:
// every closed percentile bucket added once.
type latencyFold struct {
	generation       uint64    // of the last Collect that saw the command
	folded           bool      // whether last is set
	last             time.Time // Start of the newest bucket added
	execution, total histogramTotals
}

func newLatencyFold(bounds int) *latencyFold {
	return &latencyFold{
		execution: histogramTotals{atOrBelow: make([]uint64, bounds)},
		total:     histogramTotals{atOrBelow: make([]uint64, bounds)},
	}
}

// add adds the buckets newer than the last one added; buckets come oldest
// first.
func (f *latencyFold) add(buckets []metricsstream.LatencyBucket, bounds []float64) {
	for _, b := range buckets {
		if f.folded && !b.Start.After(f.last) {
			continue
		}
		f.execution.add(b.Execution, bounds)
		f.total.add(b.Total, bounds)
		f.folded, f.last = true, b.Start
	}
}

// histogramTotals is a cumulative Prometheus histogram.
type histogramTotals struct {
	count     uint64
	sum       float64  // seconds
	atOrBelow []uint64 // per bound
}

func (h *histogramTotals) add(d metricsstream.Distribution, bounds []float64) {
	n := d.Count()
	if n == 0 {
		return
	}
	h.count += uint64(n)
	h.sum += float64(d.Mean()) * float64(n) / float64(time.Second)
	for i, b := range bounds {
		h.atOrBelow[i] += uint64(d.CountAtOrBelow(seconds(b)))
	}
}

func (h *histogramTotals) metric(d *prometheus.Desc, bounds []float64, labels []string) prometheus.Metric {
	buckets := make(map[float64]uint64, len(bounds))
	for i, b := range bounds {
		buckets[b] = h.atOrBelow[i]
	}
	return prometheus.MustNewConstHistogram(d, h.count, h.sum, buckets, labels...)
}

// seconds converts a bound in seconds to a Duration, rounded to the
// nanosecond, so that 0.3 is 300ms and not a nanosecond less; bounds past
// the range of a Duration are its maximum.
func seconds(s float64) time.Duration {
	ns := math.Round(s * float64(time.Second))
	if ns >= math.MaxInt64 {
		return math.MaxInt64
	}
	return time.Duration(ns)
}
