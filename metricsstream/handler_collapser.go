package metricsstream

import (
	"iter"
	"time"
)

// CollapserSnapshot is everything the dashboard stream shows of a request
// collapser at one instant: one "HystrixCollapser" object. The counts are
// those of the collapser's rolling window.
type CollapserSnapshot struct {
	Key  string
	Time time.Time
	// RequestsBatched is how many requests went into batches
	// (rollingCountRequestsBatched, Hystrix's ADDED_TO_BATCH), Batches how
	// many batches ran (rollingCountBatches, BATCH_EXECUTED) and
	// ResponsesFromCache how many requests the request cache answered.
	RequestsBatched, Batches, ResponsesFromCache int64
	// BatchSizeMean and BatchSizePercentiles describe the sizes of the
	// batches over the percentile window: BatchSizePercentiles holds the
	// 25th, 50th, 75th, 90th, 95th, 99th, 99.5th and 100th percentiles, in
	// that order (batchSize_mean and batchSize).
	BatchSizeMean        int64
	BatchSizePercentiles [8]int64
	// RequestCacheEnabled, MaxRequestsInBatch and TimerDelay are the
	// collapser's properties (propertyValue_*); a MaxRequestsInBatch of 0
	// or less is no cap, which the streams write as Hystrix's default,
	// Integer.MAX_VALUE.
	RequestCacheEnabled bool
	MaxRequestsInBatch  int
	TimerDelay          time.Duration
}

// CollapserSource reports the collapsers a dashboard stream shows; see
// [WithCollapsers]. Collapsers is called at every tick of every stream,
// from the streams' goroutines: it must be safe for concurrent use, and
// the iterator it returns is used once.
type CollapserSource interface {
	Collapsers() iter.Seq[CollapserSnapshot]
}

// CollapserSourceFunc adapts a function to a [CollapserSource].
type CollapserSourceFunc func() iter.Seq[CollapserSnapshot]

// Collapsers returns f().
func (f CollapserSourceFunc) Collapsers() iter.Seq[CollapserSnapshot] { return f() }

// collapserBatchKeys are the keys of the batchSize object, in Hystrix's
// order.
var collapserBatchKeys = [8]string{"25", "50", "75", "90", "95", "99", "99.5", "100"}
