package metricsstream

import (
	"fmt"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// Batches of random sizes (some below 1, which record nothing), requests
// the request cache answers and the clock moving by anything from a
// nanosecond to many windows give, at every instant, what a model of
// Hystrix's HystrixCollapserMetrics says: the rolling and cumulative
// counts of batches, of requests added to them and of responses from the
// cache in the closed buckets of the rolling window, and the batch sizes
// of the closed buckets of the percentile window, whose percentiles and
// truncated mean the snapshot reports.
func TestCollapserMetricsFollowTheModel(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		cfg := drawMetricsConfig(rt)
		mc := newManual()
		m := NewRegistry(mc).Collapser("collapser", cfg)
		cfg = m.Config()
		model := &collapserModel{
			cfg:     cfg,
			rolling: modelWindow{0, cfg.rollingBucket(), int64(cfg.Buckets)},
			sizes:   modelWindow{0, cfg.percentileBucket(), int64(cfg.PercentileBuckets)},
		}
		rt.Repeat(map[string]func(*rapid.T){
			"advance": func(rt *rapid.T) {
				d := drawAdvance(rt, model.now, model.rolling, model.sizes)
				mc.Advance(d)
				model.now += d
			},
			"batch": func(rt *rapid.T) {
				size := rapid.IntRange(-1, 2047).Draw(rt, "size")
				recordSomewhere(rt, func() { m.MarkBatch(size) })
				if size >= 1 {
					model.batches = append(model.batches, modelBatch{model.now, size})
				}
			},
			"fromCache": func(rt *rapid.T) {
				recordSomewhere(rt, m.MarkResponseFromCache)
				model.fromCache = append(model.fromCache, model.now)
			},
			"": func(rt *rapid.T) { model.check(rt, m) },
		})
	})
}

// collapserModel is what the metrics of one collapser have been told,
// read by the rules of Hystrix's collapser metrics. Times are durations
// since the metrics were created.
type collapserModel struct {
	cfg            Config
	rolling, sizes modelWindow
	now            time.Duration
	batches        []modelBatch
	fromCache      []time.Duration
}

type modelBatch struct {
	at   time.Duration
	size int
}

// check compares m's readers and snapshot with the model at now.
func (c *collapserModel) check(rt *rapid.T, m *CollapserMetrics) {
	var rolling, cumulative [NumCollapserEventTypes]int64
	add := func(at time.Duration, e CollapserEventType, n int64) {
		if c.rolling.bucket(at) < c.rolling.bucket(c.now) {
			cumulative[e] += n
		}
		if c.rolling.holds(c.now, at) {
			rolling[e] += n
		}
	}
	var sizes []time.Duration // as the histogram keeps them
	for _, b := range c.batches {
		add(b.at, CollapserBatchExecuted, 1)
		add(b.at, CollapserAddedToBatch, int64(b.size))
		if !c.cfg.PercentileDisabled && c.sizes.holds(c.now, b.at) {
			sizes = append(sizes, time.Duration(b.size)*histUnit)
		}
	}
	for _, at := range c.fromCache {
		add(at, CollapserResponseFromCache, 1)
	}
	for e := range NumCollapserEventTypes {
		if m.RollingCount(e) != rolling[e] || m.CumulativeCount(e) != cumulative[e] {
			rt.Fatalf("at %v: %v rolling %d, cumulative %d; want %d, %d", c.now, e, m.RollingCount(e), m.CumulativeCount(e), rolling[e], cumulative[e])
		}
	}

	where := fmt.Sprintf("at %v", c.now)
	got := m.BatchSizes()
	checkDistribution(rt, where+": batch sizes (1µs a request)", got.d, sizes)
	var sum, mean int64
	for _, s := range sizes {
		sum += int64(s / histUnit)
	}
	if len(sizes) > 0 {
		mean = sum / int64(len(sizes)) // truncated, as Hystrix's getBatchSizeMean
	}
	if got.Mean() != mean {
		rt.Fatalf("%s: batch size mean %d, want %d", where, got.Mean(), mean)
	}

	s := m.Snapshot()
	want := CollapserSnapshot{
		Key:                "collapser",
		Time:               t0.Add(c.now),
		RequestsBatched:    rolling[CollapserAddedToBatch],
		Batches:            rolling[CollapserBatchExecuted],
		ResponsesFromCache: rolling[CollapserResponseFromCache],
		BatchSizeMean:      mean,
		MaxRequestsInBatch: hystrixMaxBatch,
	}
	if len(sizes) > 0 {
		for i, p := range collapserBatchPercentiles {
			want.BatchSizePercentiles[i] = int64(percentileOf(sizes, p) / histUnit)
		}
	}
	if !s.Time.Equal(want.Time) {
		rt.Fatalf("%s: snapshot at %v", where, s.Time)
	}
	s.Time = want.Time
	if s != want {
		rt.Fatalf("%s: snapshot %+v, want %+v", where, s, want)
	}
}
