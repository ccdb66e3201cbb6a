package fleet

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/rxhystrix/rxhystrix/breaker"
	"github.com/rxhystrix/rxhystrix/metricsstream"
)

func TestBucketIndexRoundsDown(t *testing.T) {
	assert.Equal(t, int64(3), bucketIndex(time.Unix(1, 999_999_999), interval))
	assert.Equal(t, int64(4), bucketIndex(time.Unix(2, 0), interval))
	assert.Equal(t, int64(-1), bucketIndex(time.Unix(0, -1), interval), "before 1970 too")
}

func TestViewHealth(t *testing.T) {
	trips := breaker.Config{RequestVolumeThreshold: 20, ErrorThresholdPercentage: 50}.Trips
	at := func(i int64) time.Time { return time.Unix(0, i*int64(interval)) }
	local := []metricsstream.HealthBucket{
		{Start: at(10), Total: 4, Errors: 1},
		{Start: at(12), Total: 6, Errors: 3, Slow: 2},
	}
	cases := []struct {
		name string
		v    view
		want metricsstream.HealthCounts
	}{
		{"without Redis: local alone",
			view{local: local, interval: interval},
			metricsstream.HealthCountsOf(10, 4, 2)},
		{"the fleet's sum",
			view{local: local, from: 10, others: []counts{{10, 10, 0}, {}, {5, 0, 1}}, interval: interval},
			metricsstream.HealthCountsOf(25, 14, 3)},
		{"local when only local trips",
			view{local: []metricsstream.HealthBucket{{Start: at(10), Total: 20, Errors: 20}}, from: 10,
				others: []counts{{200, 0, 0}}, interval: interval},
			metricsstream.HealthCountsOf(20, 20, 0)},
		{"the fleet when both trip",
			view{local: []metricsstream.HealthBucket{{Start: at(10), Total: 20, Errors: 20}}, from: 10,
				others: []counts{{20, 10, 0}}, interval: interval},
			metricsstream.HealthCountsOf(40, 30, 0)},
		{"a reset drops older buckets, local and others",
			view{local: local, from: 10, others: []counts{{10, 10, 0}, {7, 7, 0}, {5, 0, 1}},
				interval: interval, resetAt: at(11).Add(time.Millisecond)},
			metricsstream.HealthCountsOf(11, 3, 3)},
		{"a reset on a boundary keeps the bucket that begins there, local and others",
			view{local: local, from: 10, others: []counts{{10, 10, 0}, {}, {5, 0, 1}},
				interval: interval, resetAt: at(12)},
			metricsstream.HealthCountsOf(11, 3, 3)},
		{"a reset just after a boundary drops that bucket, local and others",
			view{local: local, from: 10, others: []counts{{10, 10, 0}, {}, {5, 0, 1}},
				interval: interval, resetAt: at(12).Add(time.Nanosecond)},
			metricsstream.HealthCounts{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.v.health(trips))
		})
	}
}
