package metricsstream

import "time"

// HealthBucket is one closed bucket of the health window: when it began
// and the executions that ended in it, counted as [HealthCounts] counts
// them. A bucket is [Config.HealthSnapshotInterval] wide.
type HealthBucket struct {
	Start  time.Time
	Total  int64
	Errors int64
	Slow   int64
}

// HealthBuckets appends to dst the closed buckets of the health window
// that hold at least one execution, oldest first, and returns the
// extended slice. Their sums are [CommandMetrics.HealthCounts] at the
// same moment; after [CommandMetrics.ResetStream] only buckets that began
// at the reset or later are left. It is for a health source that shares
// this instance's buckets with others (see package fleet), which needs
// each bucket's time and not only the window's sum.
func (m *CommandMetrics) HealthBuckets(dst []HealthBucket) []HealthBucket {
	r := m.health.Load()
	now := r.bucketAt(m.clock.Now())
	var c [healthCounters]int64
	for n := max(now-int64(r.size), 0); n < now; n++ {
		if !r.readSlot(int(n)&(r.slots-1), n, c[:]) || c[healthTotal] == 0 {
			continue
		}
		dst = append(dst, HealthBucket{
			Start:  r.epoch.Add(time.Duration(n) * r.width),
			Total:  c[healthTotal],
			Errors: c[healthErrors],
			Slow:   c[healthSlow],
		})
	}
	return dst
}
